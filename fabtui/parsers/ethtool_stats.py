"""`ethtool -S <netdev>`.

    NIC statistics:
         rx_packets: 1234
         tx_prio3_pause: 0

Counter names differ between kernel and driver versions, so every `name: integer` line is kept.
Lines such as `NIC statistics:`, mail-client quoting (`> `) and launcher prefixes (`0: ` from
srun, `[1,0]<stdout>:` from mpirun, `host: ` from pdsh) are tolerated; a value that is not an
integer is reported as a warning, not silently dropped. bnxt_en prints per-ring counters as
`[0]: rx_ucast_packets: 12`: they are kept under the name `[0]: rx_ucast_packets`. Drivers that
pad names before the colon (cxgb4 `TxOctetsOK         : 3220`) lose the padding.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fabtui.model.parsed import SCHEMA_VERSION
from fabtui.model.parsed.ethtool_stats import EthtoolStats
from fabtui.parsers.counter_table import CounterTable
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import Plain
from fabtui.parsers.text import clean_line_stream, clean_lines, split_lines

KIND = "ethtool-stats"
MODEL = EthtoolStats
DESCRIPTION = "ethtool -S <netdev>: NIC statistics counters"

_HEADER = re.compile(r"^\s*(?:>\s*)*NIC statistics:\s*$")
_COUNTER = re.compile(r"^\s*(?:>\s*)*((?:\[\d+\]:\s*)?[A-Za-z0-9_.\[\]\-]+)\s*:\s+(-?\d+)\s*$")
_RING = re.compile(r"\]:\s*")
_COMMAND = re.compile(r"ethtool\s+(?:-S|--statistics)\s+(\S+)")


def detect(text: str) -> float:
    """How sure we are that `text` is `ethtool -S` output (0..1)."""
    lines = clean_lines(text[:20000])
    head = "\n".join(lines)
    counters = sum(1 for line in lines if _COUNTER.match(line))
    if "NIC statistics:" in head:
        return 0.95 if counters else 0.6
    if counters >= 5 and re.search(r"(?m)^\s*(?:rx|tx)_\w*(?:packets|bytes)\S*:\s+\d+", head):
        return 0.7
    return 0.0


def parse(text: str) -> EthtoolStats:
    """Parse `ethtool -S` output; raises `ParseError` if there is no counter in it."""
    return parse_lines(split_lines(text)).head


def parse_lines(lines: Iterable[str]) -> Plain[EthtoolStats]:
    """Parse normalised lines (`fabtui parse` reads files this way, without the whole text).

    The counters stay in a `CounterTable` until a model is asked for: `fabtui parse` writes
    them from there, so a capture with millions of distinct counters costs about its size.
    """
    counters = CounterTable()
    warnings: list[str] = []
    interface = None
    for number, line in enumerate(clean_line_stream(lines), start=1):
        if not line.strip() or _HEADER.match(line):
            continue
        match = _COUNTER.match(line)
        if match:
            name = match.group(1)
            counters.add(_RING.sub("]: ", name) if "]" in name else name, int(match.group(2)))
            continue
        command = _COMMAND.search(line)
        if command:
            interface = command.group(1)
            continue
        if re.match(r"^\s*[A-Za-z0-9_.\[\]\-]+:\s*\S", line):
            warnings.append(f"line {number}: not an integer counter: {line.strip()[:80]}")
    if not len(counters.finish()):
        raise ParseError(KIND, None, "no `name: value` counter found")
    # The order `EthtoolStats.model_dump` writes its fields in.
    data: dict[str, object] = {"kind": KIND, "schema_version": SCHEMA_VERSION,
                               "warnings": warnings, "interface": interface,
                               "counters": counters}
    return Plain(data, _model)


def _model(data: dict[str, object]) -> EthtoolStats:
    table = data["counters"]
    assert isinstance(table, CounterTable)
    return EthtoolStats.model_validate({**data, "counters": table.to_dict()})
