"""`grep -H . FILE...` (GNU grep): every non-empty line of each file, as `FILE:LINE`.

    /sys/class/net/eth0/ecn/roce_np/enable/3:1
    /etc/nccl.conf:NCCL_IB_TC=106

The one command that reads many sysfs values or a small configuration file and says which
value came from which file (`cat` of several files does not); GNU grep prints the file name
before each match with `-H` ("--with-filename", the default with more than one file). A
`grep: FILE: No such file or directory` line (stderr folded in) is kept as a warning.
"""

from __future__ import annotations

import re

from fabtui.model.parsed.file_values import FileValues
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import clean_lines

KIND = "file-values"
MODEL = FileValues
DESCRIPTION = "grep -H . FILE...: sysfs values and KEY=VALUE files, each line with its file"

_LINE = re.compile(r"^(?P<file>/[^:\s]*):(?P<value>.*)$")
_SETTING = re.compile(r"^\s*(?:export\s+)?(?P<key>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*)$")


def detect(text: str) -> float:
    """How sure we are that `text` is `grep -H` output (0..1)."""
    lines = [line for line in text[:8000].splitlines() if line.strip()]
    if not lines:
        return 0.0
    hits = sum(1 for line in lines if _LINE.match(line))
    return 0.7 if hits == len(lines) else 0.3 if hits > len(lines) / 2 else 0.0


def parse(text: str) -> FileValues:
    """Parse `FILE:LINE` lines; raises `ParseError` on the first line that is neither that nor
    grep's own message, and when there is no line at all."""
    files: dict[str, list[str]] = {}
    settings: dict[str, str] = {}
    warnings = []
    for number, raw in enumerate(clean_lines(text), start=1):
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        if line.startswith("grep:"):
            warnings.append(f"line {number}: {line}")
            continue
        match = _LINE.match(line)
        if match is None:
            raise ParseError(KIND, number, f"not FILE:VALUE: {line[:80]!r}")
        value = match.group("value")
        files.setdefault(match.group("file"), []).append(value)
        setting = _SETTING.match(value)
        if setting is not None and not value.lstrip().startswith("#"):
            settings[setting.group("key")] = setting.group("value").strip().strip('"')
    if not files and not warnings:
        raise ParseError(KIND, None, "no FILE:VALUE line")
    return FileValues(files=files, settings=settings, warnings=warnings)
