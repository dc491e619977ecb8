"""`show_gids [dev]` (mlnx-tools; shell and Python versions).

    DEV     PORT    INDEX   GID                                     IPv4            VER     DEV
    ---     ----    -----   ---                                     ------------    ---     ---
    mlx5_0  1       0       fe80:0000:0000:0000:a288:c2ff:fe63:5a20                 v1      ens1np0
    mlx5_0  1       3       0000:0000:0000:0000:0000:ffff:0a63:5b27 10.99.91.39     v2      ens1np0
    n_gids_found=4

Columns are separated by tabs that collapse when a cell is empty (no IPv4; no netdev on an IB
port; no type on old kernels), so the cells after the GID are told apart by their shape.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from fabtui.model.parsed.show_gids import GidEntry, ShowGidsOutput
from fabtui.model.table import Table, left
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import KeptLines, Streamed, row_defaults, with_rows
from fabtui.parsers.text import clean_line_stream, clean_lines, split_lines

KIND = "show-gids"
MODEL = ShowGidsOutput
DESCRIPTION = "show_gids (mlnx-tools): RoCE/IB GID table, index, IPv4, RoCE version, netdev"

_HEADER = re.compile(r"^\s*DEV\s+PORT\s+INDEX\s+GID\b", re.I)
_ROW = re.compile(r"^\s*(\S+)\s+(\d+)\s+(\d+)\s+([0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{0,4}){2,7})"
                  r"(?:\s+(.*?))?\s*$")
_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")
_VERSION = re.compile(r"^[vV]\d$")
_TOTAL = re.compile(r"^\s*n_gids_found\s*=\s*(\d+)\s*$")


def detect(text: str) -> float:
    """How sure we are that `text` is show_gids output (0..1)."""
    head = "\n".join(clean_lines(text[:30000]))
    header = re.search(r"(?mi)^\s*DEV\s+PORT\s+INDEX\s+GID\b", head)
    total = re.search(r"(?m)^\s*n_gids_found\s*=\s*\d+", head)
    rows = sum(1 for line in head.splitlines() if _ROW.match(line))
    if header and (rows or total):
        return 0.95
    if total and rows:
        return 0.9
    if header:
        return 0.6
    return 0.0


_GID = row_defaults(GidEntry)


def _row(match: re.Match[str]) -> dict[str, object]:
    """One table row as `model_dump(mode="json")` gives it; the trailing cells are IPv4,
    version and netdev, each optional."""
    ipv4 = version = netdev = None
    rest: list[str] = []
    for cell in (match.group(5) or "").split():
        if ipv4 is None and version is None and _IPV4.match(cell):
            ipv4 = cell
        elif version is None and _VERSION.match(cell):
            version = cell.lower()
        else:
            rest.append(cell)
    netdev = " ".join(rest) or None
    row = dict(_GID)
    row.update(dev=match.group(1), port=int(match.group(2)), index=int(match.group(3)),
               gid=match.group(4), ipv4=ipv4, version=version, netdev=netdev)
    return row


def parse(text: str) -> ShowGidsOutput:
    """Parse show_gids output; raises `ParseError` when there is neither a row nor a header."""
    return parse_lines(split_lines(text)).assemble()


def parse_lines(lines: Iterable[str]) -> Streamed[ShowGidsOutput]:
    """Parse normalised lines (`fabtui parse` reads files this way); the rows are kept as
    their lines and read again when written (no model per GID)."""
    kept = KeptLines()
    total: int | None = None
    header: int | None = None
    for number, line in enumerate(clean_line_stream(lines), start=1):
        if _HEADER.match(line):
            header = header or number
            continue
        found = _TOTAL.match(line)
        if found:
            total = int(found.group(1))
            continue
        if _ROW.match(line):
            kept.add(number, line)
    if not kept and total is None:
        if header:
            raise ParseError(KIND, header, "GID table header without any row (truncated?)")
        raise ParseError(KIND, None, "no `DEV PORT INDEX GID ...` row and no n_gids_found line")
    warnings = []
    if total is not None and total != len(kept):
        warnings.append(f"n_gids_found={total} but {len(kept)} rows were read")

    def rows() -> Iterator[dict[str, object]]:
        for _, line in kept:
            match = _ROW.match(line)
            assert match is not None  # it matched when kept
            yield _row(match)

    return with_rows(ShowGidsOutput(gids=[], n_gids_found=total, warnings=warnings),
                     "gids", GidEntry, rows)


def tables(result: ShowGidsOutput) -> list[Table]:
    """The GID table."""
    columns = [left("dev", "DEV"), left("port", "PORT"), left("index", "INDEX"),
               left("gid", "GID"), left("ipv4", "IPv4"), left("version", "VER"),
               left("netdev", "NETDEV")]
    return [Table.build(columns, [(g.dev, g.port, g.index, g.gid, g.ipv4, g.version, g.netdev)
                                  for g in result.gids])]
