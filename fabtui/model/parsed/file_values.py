"""`grep -H . FILE...`: each line of small files (sysfs values, KEY=VALUE configuration)
prefixed with the file it came from."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fabtui.model.parsed import ParsedOutput


class FileValues(ParsedOutput):
    """File -> its non-empty lines, in order."""

    kind: Literal["file-values"] = "file-values"
    files: dict[str, list[str]]
    """`/sys/class/net/eth0/ecn/roce_np/enable/3` -> `["1"]`; `/etc/nccl.conf` ->
    `["NCCL_IB_GID_INDEX=3", ...]`."""
    settings: dict[str, str] = Field(default_factory=dict)
    """`KEY=VALUE` lines of every file (the last wins), comments skipped: what a
    configuration file such as /etc/nccl.conf sets."""
