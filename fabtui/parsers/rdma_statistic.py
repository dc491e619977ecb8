"""`rdma statistic show` / `rdma stat show [link dev/port]` / `rdma -p stat show` (iproute2).

Default form, one long line per link (mail clients wrap it anywhere, even between a name and its
value)::

    link mlx5_0/1 rx_write_requests 0 rx_read_requests 0 ... np_cnp_sent 0

Pretty form (`-p`)::

    link mlx5_0/1
            rx_write_requests 0
            ...

Both are read as one token stream per link (`name value` pairs until the next `link` line, a
blank line or a line that is not tokens, such as a shell prompt). `rdma -j stat show` JSON is
read too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from fabtui.model.parsed.rdma_statistic import RdmaStatisticOutput
from fabtui.model.table import Table, left, right
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import Streamed
from fabtui.parsers.text import clean_line_stream, clean_lines, split_lines

KIND = "rdma-statistic"
MODEL = RdmaStatisticOutput
DESCRIPTION = "rdma statistic show (iproute2): RDMA hw counters per link, plain, -p or -j"

_LINK = re.compile(r"^\s*link\s+(\S+/\d+)\b\s*(.*)$")
_NAME = re.compile(r"^[A-Za-z_][\w.\-]*$")
_VALUE = re.compile(r"^[0-9]+$")
_META = frozenset({"cntn", "pid", "lqpn", "qp-type", "comm", "ifindex", "port"})


def detect(text: str) -> float:
    """How sure we are that `text` is `rdma statistic show` output (0..1)."""
    head = "\n".join(clean_lines(text[:40000]))
    if re.search(r"(?m)^\s*link\s+\S+/\d+\s+[A-Za-z_][\w-]*\s*\n?\s*\d+\s+[A-Za-z_]", head):
        return 0.9
    if re.search(r"(?m)^\s*link\s+\S+/\d+\s*\n[ \t]+[A-Za-z_]\w*\s+\d+\s*$", head):
        return 0.9
    if '"ifname"' in head and re.search(r'"(?:rx_write_requests|out_of_sequence|np_cnp_sent|'
                                        r'rp_cnp_handled|local_ack_timeout_err)"', head):
        return 0.85
    return 0.0


def _is_tokens(line: str) -> bool:
    """True for a line made only of counter names and integers (a wrapped or pretty line)."""
    tokens = line.split()
    return bool(tokens) and all(_NAME.match(t) or _VALUE.match(t) for t in tokens)


def _streams(lines: Iterable[str]) -> Iterator[tuple[str, int, list[str]]]:
    """(link, line number, tokens) for every `link` record, each once it is complete."""
    record: tuple[str, int, list[str]] | None = None
    for number, line in enumerate(lines, start=1):
        match = _LINK.match(line)
        if match:
            if record is not None:
                yield record
            record = (match.group(1), number, match.group(2).split())
        elif record is not None and _is_tokens(line):
            record[2].extend(line.split())
        elif record is not None:
            yield record
            record = None
    if record is not None:
        yield record


def _pairs(link: str, number: int, tokens: list[str],
           warnings: list[str]) -> dict[str, int]:
    """`name value name value ...` -> counters; stray tokens are reported once per link."""
    counters: dict[str, int] = {}
    stray: list[str] = []
    i = 0
    while i < len(tokens):
        name = tokens[i]
        if _NAME.match(name) and i + 1 < len(tokens) and _VALUE.match(tokens[i + 1]):
            if name not in _META:
                counters[name] = int(tokens[i + 1])
            i += 2
            continue
        if name not in _META:
            stray.append(name)
        i += 1
    if stray:
        warnings.append(f"line {number}: link {link}: tokens without a value skipped: "
                        f"{' '.join(stray)[:80]}")
    return counters


def _merge(links: dict[str, dict[str, int]], link: str, counters: dict[str, int],
           warnings: list[str]) -> None:
    """Add one record; the same link printed twice (plain then -p) is merged."""
    known = links.setdefault(link, {})
    changed = [k for k, v in counters.items() if k in known and known[k] != v]
    if changed:
        warnings.append(f"link {link} printed twice with different values for "
                        f"{', '.join(changed[:5])}; kept the last")
    known.update(counters)


def _from_json(text: str, warnings: list[str]) -> dict[str, dict[str, int]] | None:
    """`rdma -j stat show`: a list of objects with ifname, port and counters."""
    try:
        data: Any = json.loads(text)
    except ValueError:
        return None
    links: dict[str, dict[str, int]] = {}
    for item in data if isinstance(data, list) else [data]:
        if not isinstance(item, dict) or "ifname" not in item:
            continue
        counters: dict[str, int] = {}
        for key, value in item.items():
            if isinstance(value, int) and not isinstance(value, bool) and key not in _META:
                counters[str(key)] = value
            elif isinstance(value, dict):
                counters.update({str(k): v for k, v in value.items()
                                 if isinstance(v, int) and not isinstance(v, bool)})
        _merge(links, f"{item['ifname']}/{item.get('port', '?')}", counters, warnings)
    return links


def parse(text: str) -> RdmaStatisticOutput:
    """Parse `rdma statistic show` output; raises `ParseError` when no link has counters."""
    return parse_lines(split_lines(text)).head


def parse_lines(lines: Iterable[str]) -> Streamed[RdmaStatisticOutput]:
    """Parse normalised lines (`fabtui parse` reads files this way), one record at a time."""
    if iter(lines) is lines:  # read twice: is it JSON, then its records
        lines = list(lines)
    warnings: list[str] = []
    opening = next((line.lstrip()[:1] for line in lines if line.strip()), "")
    links = _from_json("\n".join(lines), warnings) if opening in ("[", "{") else None
    first: int | None = None
    if links is None:
        links = {}
        for link, number, tokens in _streams(clean_line_stream(lines)):
            first = first or number
            _merge(links, link, _pairs(link, number, tokens, warnings), warnings)
    if not any(links.values()) and first is not None:
        raise ParseError(KIND, first, "`link dev/port` without any counter (truncated?)")
    if not any(links.values()):
        raise ParseError(KIND, None, "no `link dev/port name value ...` record with counters")
    empty = [link for link, counters in links.items() if not counters]
    if empty:
        warnings.append(f"links without counters: {', '.join(empty)}")
    return Streamed(RdmaStatisticOutput(links={k: v for k, v in links.items() if v},
                                        warnings=warnings))


def tables(result: RdmaStatisticOutput) -> list[Table]:
    """One row per counter: link, counter, value."""
    columns = [left("link", "LINK"), left("counter", "COUNTER"), right("value", "VALUE")]
    return [Table.build(columns, [(link, name, value) for link, counters in result.links.items()
                                  for name, value in counters.items()])]
