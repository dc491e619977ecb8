"""`nvidia-smi nvlink -e` (`--errorcounters`).

    GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-abcdefab-cdef-abdc-abcd-abababababab)
             Link 0: Replay Errors: 0
             Link 0: Recovery Errors: 0
             Link 0: CRC Errors: 0

Every `Link N: <name>: <integer>` line is kept under its printed name (newer drivers add
counters such as `Rx Errors` or `Effective Errors`); a value that is not an integer (`N/A`) is
a warning, not a zero. Blank lines between links, `[...]` elisions and launcher prefixes are
tolerated.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fabtui.model.parsed.nvlink_errors import NvlinkErrors, NvlinkErrorsGpu, NvlinkLinkErrors
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import Streamed
from fabtui.parsers.text import clean_line_stream, clean_lines, split_lines

KIND = "nvlink-errors"
MODEL = NvlinkErrors
DESCRIPTION = "nvidia-smi nvlink -e: NVLink replay, recovery and CRC error counters per link"

_GPU = re.compile(r"^\s*GPU\s+(?P<index>\d+):\s*(?P<name>.*?)\s*(?:\(UUID:\s*(?P<uuid>[^)]+)\))?"
                  r"\s*$")
_LINK = re.compile(r"^\s*Link\s+(?P<link>\d+):\s*(?P<name>[A-Za-z][A-Za-z0-9 ()/_-]*?)\s*:\s*"
                   r"(?P<value>\S+)\s*$")


def detect(text: str) -> float:
    """How sure we are that `text` is `nvidia-smi nvlink -e` output (0..1)."""
    lines = clean_lines(text[:20000])
    links = sum(1 for line in lines if _LINK.match(line) and "Errors" in line)
    gpus = sum(1 for line in lines if _GPU.match(line))
    if links and gpus:
        return 0.95
    return 0.6 if links >= 3 else 0.0


def parse(text: str) -> NvlinkErrors:
    """Parse `nvidia-smi nvlink -e`; raises `ParseError` if no link counter is in it."""
    return parse_lines(split_lines(text)).head


def parse_lines(lines: Iterable[str]) -> Streamed[NvlinkErrors]:
    """Parse normalised lines (`fabtui parse` reads files this way)."""
    gpus: list[NvlinkErrorsGpu] = []
    warnings: list[str] = []
    for number, line in enumerate(clean_line_stream(lines), start=1):
        gpu = _GPU.match(line)
        if gpu:
            gpus.append(NvlinkErrorsGpu(index=int(gpu.group("index")),
                                        name=gpu.group("name") or None,
                                        uuid=(gpu.group("uuid") or "").strip() or None))
            continue
        link = _LINK.match(line)
        if not link:
            continue
        if not gpus:
            raise ParseError(KIND, number, "a `Link N:` counter before any `GPU N:` line")
        value = link.group("value")
        if not value.isdigit():
            warnings.append(f"line {number}: not an integer counter: {line.strip()[:80]}")
            continue
        links = gpus[-1].links
        index = int(link.group("link"))
        if not links or links[-1].link != index:
            links.append(NvlinkLinkErrors(link=index, counters={}))
        links[-1].counters[link.group("name")] = int(value)
    if not any(g.links for g in gpus):
        raise ParseError(KIND, None, "no `Link N: <counter>: <value>` line found")
    return Streamed(NvlinkErrors(gpus=gpus, warnings=warnings))
