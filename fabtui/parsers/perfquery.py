"""`perfquery [-x] [-E] [-D] [-a] [-l] <lid> [port]` (infiniband-diags).

    # Port extended counters: Lid 1719 port 1 (CapMask: 0x5300 CapMask2: 0x0000002)
    PortSelect:......................1
    CounterSelect:...................0x0000
    PortXmitData:....................36298026860928
    ...
    # PortRcvErrorDetails counters: Lid 1719 port 1
    PortLocalPhysicalErrors:.........0

Values follow a dotted leader; every `Name:....value` row of a block is kept. `ibwarn:` and
other lines are skipped; rows printed before any header go into a block with null LID/port.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from fabtui.model.parsed.perfquery import PerfqueryOutput, PerfqueryPort
from fabtui.model.table import Table, left, right
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import KeptLines, Streamed, row_defaults, with_rows
from fabtui.parsers.text import clean_line_stream, clean_lines, split_lines

KIND = "perfquery"
MODEL = PerfqueryOutput
DESCRIPTION = "perfquery [-x|-E|-D] <lid> <port>: InfiniBand port counters (PMA)"

_HEADER = re.compile(r"^\s*#\s*(?P<name>[A-Za-z][\w ]*?)\s*(?:counters?)?\s*:\s*"
                     r"(?P<where>(?:Lid|DR path|Guid)\b.*?)(?:\s+port\s+(?P<port>\d+))?"
                     r"(?P<rest>\s*\(.*)?\s*$", re.I)
_ROW = re.compile(r"^\s*(?P<name>[A-Za-z][\w\[\]]*)\s*:\s*\.*\s*(?P<value>\S+)\s*$")
_CAPMASK = re.compile(r"CapMask\s*:\s*(0x[0-9A-Fa-f]+)")
_CAPMASK2 = re.compile(r"CapMask2\s*:\s*(0x[0-9A-Fa-f]+)")
_SETS = {"port": "basic", "port extended": "extended", "portrcverrordetails": "rcv_error_details",
         "portxmitdiscarddetails": "xmit_discard_details", "port extended speeds":
         "extended_speeds", "port extended speeds rsfec": "extended_speeds_rsfec"}
_KNOWN = re.compile(r"(?m)^\s*(?:PortXmitData|PortRcvData|SymbolErrorCounter|PortXmitWait|"
                    r"LinkDownedCounter|PortRcvErrors|PortLocalPhysicalErrors|PortXmitDiscards|"
                    r"PortSelect)\s*:\.+")


def detect(text: str) -> float:
    """How sure we are that `text` is perfquery output (0..1)."""
    head = "\n".join(clean_lines(text[:30000]))
    header = re.search(r"(?mi)^\s*#\s*[\w ]*counters:\s*Lid\s+\d+", head)
    rows = len(_KNOWN.findall(head))
    if header and rows:
        return 0.95
    if rows >= 3:
        return 0.8
    return 0.5 if header else 0.0


def _counter_set(name: str) -> str:
    """Header name -> counter set id (`Port extended` -> `extended`)."""
    key = re.sub(r"\s+", " ", name.strip().lower())
    if key in _SETS:
        return _SETS[key]
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name.strip()).lower()
    return re.sub(r"[^a-z0-9]+", "_", snake).strip("_") or "unknown"


def _value(text: str) -> int | None:
    """`1234`, `0x0000` -> int; anything else None."""
    if re.fullmatch(r"0[xX][0-9A-Fa-f]+", text):
        return int(text, 16)
    if re.fullmatch(r"[0-9]+", text):
        return int(text)
    return None


_PORT = row_defaults(PerfqueryPort)


def _block(match: re.Match[str] | None, counters: dict[str, int]) -> dict[str, object]:
    """A new block from its header line (None: counters before any header), as
    `model_dump(mode="json")` gives it once `counters` are in."""
    block = dict(_PORT)
    if match is None:
        block.update(lid=None, port=None, counter_set="unknown", counters=counters)
        return block
    port = match.group("port")
    rest = match.group("rest") or ""
    cap = _CAPMASK.search(rest)
    cap2 = _CAPMASK2.search(rest)
    lid = re.match(r"Lid\s+(\d+)", match.group("where"), re.I)
    block.update(lid=int(lid.group(1)) if lid else None, port=int(port) if port else None,
                 counter_set=_counter_set(match.group("name")),
                 header=match.group(0).strip().lstrip("#").strip(),
                 cap_mask=cap.group(1) if cap else None,
                 cap_mask2=cap2.group(1) if cap2 else None, counters=counters)
    return block


@dataclass
class _Seen:
    """What the first reading finds besides the ports: kept lines, warnings, empty headers."""

    kept: KeptLines = field(default_factory=KeptLines)
    warnings: list[str] = field(default_factory=list)
    empty: list[int] = field(default_factory=list)
    """Line numbers of headers without any counter row."""


def _ports(numbered: Iterable[tuple[int, str]],
           seen: _Seen | None) -> Iterator[dict[str, object]]:
    """The blocks with counters, in order; the lines that make them are kept in `seen` (and
    what is wrong noted there) on the first reading."""
    current: dict[str, object] | None = None
    counters: dict[str, int] = {}
    header_line: int | None = None
    for number, line in numbered:
        header = _HEADER.match(line)
        if header:
            if counters:
                assert current is not None
                yield current
            elif header_line is not None and seen is not None:
                seen.empty.append(header_line)
            counters = {}
            current, header_line = _block(header, counters), number
            if seen is not None:
                seen.kept.add(number, line)
            continue
        row = _ROW.match(line)
        if not row or ":." not in line.replace(" ", ""):
            continue
        value = _value(row.group("value"))
        if value is None:
            if seen is not None:
                seen.warnings.append(f"line {number}: not an integer: {line.strip()[:80]}")
            continue
        if current is None:
            counters = {}
            current, header_line = _block(None, counters), None
            if seen is not None:
                seen.warnings.append(f"line {number}: counters before any "
                                     "`# ... counters: Lid` header")
        if seen is not None:
            seen.kept.add(number, line)
        counters[row.group("name")] = value
    if counters:
        assert current is not None
        yield current
    elif header_line is not None and seen is not None:
        seen.empty.append(header_line)


def parse(text: str) -> PerfqueryOutput:
    """Parse perfquery output; raises `ParseError` when no counter row is found."""
    return parse_lines(split_lines(text)).assemble()


def parse_lines(lines: Iterable[str]) -> Streamed[PerfqueryOutput]:
    """Parse normalised lines (`fabtui parse` reads files this way); the port blocks are
    kept as their lines and read again when written (no model per block)."""
    if iter(lines) is lines:  # read twice: the rows, and an error's cause when none is found
        lines = list(lines)
    seen = _Seen()
    found = sum(1 for _ in _ports(enumerate(clean_line_stream(lines), start=1), seen))
    warnings, empty = seen.warnings, seen.empty
    if not found and empty:
        raise ParseError(KIND, empty[0], "counter header without any counter row (truncated?)")
    if empty:
        warnings.append(f"line {empty[0]}: counter header without any counter row")
    if not found:
        failure = _failure(lines)
        detail = f" ({failure.strip()[:120]})" if failure else ""
        raise ParseError(KIND, None, f"no `Name:.....value` counter row found{detail}")
    return with_rows(PerfqueryOutput(ports=[], warnings=warnings), "ports", PerfqueryPort,
                     lambda: _ports(seen.kept, None))


def _failure(lines: Iterable[str]) -> str | None:
    """The first iberror/ibpanic line, else the first ibwarn line, of output without counters."""
    warn = None
    for line in lines:
        if re.search(r"\b(?:iberror|ibpanic)\b", line):
            return line
        if warn is None and re.search(r"\bibwarn\b", line):
            warn = line
    return warn


def tables(result: PerfqueryOutput) -> list[Table]:
    """One row per counter: lid, port, set, counter, value."""
    columns = [left("lid", "LID"), left("port", "PORT"), left("counter_set", "SET"),
               left("counter", "COUNTER"), right("value", "VALUE")]
    return [Table.build(columns, [(p.lid, p.port, p.counter_set, name, value)
                                  for p in result.ports for name, value in p.counters.items()])]
