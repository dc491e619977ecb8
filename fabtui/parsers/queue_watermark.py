"""SONiC watermarks (sonic-utilities `watermarkstat`).

    Egress shared pool occupancy per unicast queue:
           Port    UC0    UC1    UC2    UC3    UC4    UC5    UC6    UC7
    -----------  -----  -----  -----  -----  -----  -----  -----  -----
      Ethernet0      0      0      0      0      0      0      0      0

`show queue [persistent-]watermark unicast|multicast|all` and `show priority-group
[persistent-]watermark shared|headroom`; multi-ASIC switches print one table per namespace
(`... per PG: (Namespace asic0)`). Values are bytes; `N/A` is kept as null.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from fabtui.model.parsed.queue_watermark import QueueWatermark, WatermarkTable
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import Streamed
from fabtui.parsers.text import clean_line_stream, clean_lines, split_lines

KIND = "queue-watermark"
MODEL = QueueWatermark
DESCRIPTION = ("SONiC `show queue watermark` / `show priority-group watermark`: peak buffer "
               "occupancy per queue or priority group (bytes)")

_TITLE = re.compile(r"^\s*(?P<title>Egress shared pool occupancy per (?P<q>unicast|multicast|all) "
                    r"queues?|Ingress (?P<pg>shared pool occupancy|headroom) per PG):"
                    r"\s*(?:\(Namespace\s+(?P<ns>[^)]+)\))?\s*$")
_HEADER = re.compile(r"^\s*(?:Port|Interface)\s+(?P<cols>(?:(?:UC|MC|PG|ALL)\d+\s*)+)$")


def detect(text: str) -> float:
    """How sure we are that `text` is watermarkstat output (0..1)."""
    lines = clean_lines(text[:20000])
    titles = sum(1 for line in lines if _TITLE.match(line))
    return 0.95 if titles else 0.0


def parse(text: str) -> QueueWatermark:
    """Parse watermark tables; raises `ParseError` when there is none."""
    return parse_lines(split_lines(text)).head


_WHAT: dict[str, Literal["queue-unicast", "queue-multicast", "queue-all", "pg-shared",
                          "pg-headroom"]] = {
    "unicast": "queue-unicast", "multicast": "queue-multicast", "all": "queue-all",
    "shared pool occupancy": "pg-shared", "headroom": "pg-headroom"}


def _what(match: re.Match[str]) -> Literal["queue-unicast", "queue-multicast", "queue-all",
                                           "pg-shared", "pg-headroom"]:
    return _WHAT[match.group("q") or match.group("pg")]


def parse_lines(lines: Iterable[str]) -> Streamed[QueueWatermark]:
    """Parse normalised lines (`fabtui parse` reads files this way)."""
    tables: list[WatermarkTable] = []
    warnings: list[str] = []
    columns: list[str] = []
    persistent = False
    for number, line in enumerate(clean_line_stream(lines), start=1):
        if "persistent-watermark" in line:
            persistent = True
        title = _TITLE.match(line)
        if title:
            tables.append(WatermarkTable(what=_what(title), persistent=persistent,
                                         namespace=title.group("ns"), ports={}))
            columns = []
            continue
        header = _HEADER.match(line)
        if header and tables:
            columns = header.group("cols").split()
            continue
        cells = line.split()
        if not tables or not columns or not cells or set(line.strip()) <= {"-", " "}:
            continue
        if len(cells) != len(columns) + 1:
            warnings.append(f"line {number}: {len(cells) - 1} values for {len(columns)} "
                            f"columns: {line.strip()[:80]}")
            continue
        values: dict[str, int | None] = {}
        for column, cell in zip(columns, cells[1:], strict=True):
            if cell.isdigit():
                values[column] = int(cell)
            elif cell.upper() == "N/A":
                values[column] = None
            else:
                raise ParseError(KIND, number, f"{column} is {cell!r}, not a byte count or N/A")
        tables[-1].ports[cells[0]] = values
    if not tables:
        raise ParseError(KIND, None, "no watermark table (`Egress shared pool occupancy per "
                                     "... queue:` / `Ingress ... per PG:`) found")
    return Streamed(QueueWatermark(tables=tables, warnings=warnings))
