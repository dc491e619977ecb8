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

from fabtui.model.parsed.perfquery import PerfqueryOutput, PerfqueryPort
from fabtui.model.table import Table, left, right
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import clean_lines, normalize

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


def _block(match: re.Match[str]) -> PerfqueryPort:
    """A new block from its header line."""
    port = match.group("port")
    rest = match.group("rest") or ""
    cap = _CAPMASK.search(rest)
    cap2 = _CAPMASK2.search(rest)
    lid = re.match(r"Lid\s+(\d+)", match.group("where"), re.I)
    return PerfqueryPort(lid=int(lid.group(1)) if lid else None,
                         port=int(port) if port else None,
                         counter_set=_counter_set(match.group("name")),
                         header=match.group(0).strip().lstrip("#").strip(),
                         cap_mask=cap.group(1) if cap else None,
                         cap_mask2=cap2.group(1) if cap2 else None, counters={})


def parse(text: str) -> PerfqueryOutput:
    """Parse perfquery output; raises `ParseError` when no counter row is found."""
    ports: list[PerfqueryPort] = []
    current: PerfqueryPort | None = None
    warnings: list[str] = []
    headers: list[tuple[PerfqueryPort, int]] = []
    for number, line in enumerate(clean_lines(text), start=1):
        header = _HEADER.match(line)
        if header:
            current = _block(header)
            ports.append(current)
            headers.append((current, number))
            continue
        row = _ROW.match(line)
        if not row or ":." not in line.replace(" ", ""):
            continue
        value = _value(row.group("value"))
        if value is None:
            warnings.append(f"line {number}: not an integer: {line.strip()[:80]}")
            continue
        if current is None:
            current = PerfqueryPort(lid=None, port=None, counter_set="unknown", counters={})
            ports.append(current)
            warnings.append(f"line {number}: counters before any `# ... counters: Lid` header")
        current.counters[row.group("name")] = value
    empty = [line for port, line in headers if not port.counters]
    ports = [p for p in ports if p.counters]
    if not ports and empty:
        raise ParseError(KIND, empty[0], "counter header without any counter row (truncated?)")
    if empty:
        warnings.append(f"line {empty[0]}: counter header without any counter row")
    if not ports:
        failure = (re.search(r"(?m)^.*\b(?:iberror|ibpanic)\b.*$", normalize(text))
                   or re.search(r"(?m)^.*\bibwarn\b.*$", normalize(text)))
        detail = f" ({failure.group(0).strip()[:120]})" if failure else ""
        raise ParseError(KIND, None, f"no `Name:.....value` counter row found{detail}")
    return PerfqueryOutput(ports=ports, warnings=warnings)


def tables(result: PerfqueryOutput) -> list[Table]:
    """One row per counter: lid, port, set, counter, value."""
    columns = [left("lid", "LID"), left("port", "PORT"), left("counter_set", "SET"),
               left("counter", "COUNTER"), right("value", "VALUE")]
    return [Table.build(columns, [(p.lid, p.port, p.counter_set, name, value)
                                  for p in result.ports for name, value in p.counters.items()])]
