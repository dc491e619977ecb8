"""SONiC `show interfaces counters fec-stats` and `fec-histogram` (portstat).

    IFACE    STATE    FEC_CORR    FEC_UNCORR    FEC_SYMBOL_ERR    FEC_PRE_BER    FEC_POST_BER ...
---------  -------  ----------  ------------  ----------------  -------------  --------------
Ethernet0        U     130,402             3                 4       1.48e-08        1.00e-20

Older releases stop at FEC_POST_BER; newer add FEC_PRE_BER_MAX, FLR(O), `FLR(P) (Accuracy)`
(cells like `7.81e-10 (89%)`) and FEC_MAX_T. The gearbox form (`GB IFACE`) keys each row by
port and side as printed (`Ethernet0 Line`). `fec-histogram <port>` prints `BIN0`..`BIN15`
codeword counts of one port (`Symbol Errors Per Codeword  Codewords`); `portstat -fh` prints
them as one row per port. `-j` gives JSON keyed by port and column name.
"""

from __future__ import annotations

import re
from typing import Any

from fabtui.model.parsed.fec_stats import FecStats, PortFec
from fabtui.model.table import Table as DataTable
from fabtui.model.table import left, right
from fabtui.parsers._switch_common import (
    Table,
    clean_lines,
    command_of,
    head,
    iter_tables,
    load_json,
    normalize_state,
    parse_float,
    parse_int,
    snake,
)
from fabtui.parsers.errors import ParseError

KIND = "fec-stats"
MODEL = FecStats
DESCRIPTION = ("SONiC `show interfaces counters fec-stats` / `fec-histogram`: FEC corrected, "
               "uncorrectable, symbol errors, pre/post-FEC BER, FLR per port")

# `GB IFACE`: the gearbox form (show techsupport's gearbox.interfaces_fec_stats), one row per
# port side (`Ethernet0 Line`, `Ethernet0 System`).
_STATS_HEADER = re.compile(r"(?m)^\s*(?:GB\s+)?(?:IFACE|Iface)\s+(?:STATE\s+)?FEC_CORR\b")
_HIST_HEADER = re.compile(r"(?m)^\s*Symbol Errors Per Codeword\s+Codewords\b")
_HIST_TABLE = re.compile(r"(?m)^\s*(?:IFACE|Iface)\s+BIN0\s+BIN1\b")
_JSON = re.compile(r'"FEC_CORR"\s*:')
_PERIOD = re.compile(r"rates are calculated within (\d+) seconds? period", re.IGNORECASE)
_INT_COLUMNS = {"FEC_CORR": "fec_corr", "FEC_UNCORR": "fec_uncorr",
                "FEC_SYMBOL_ERR": "fec_symbol_err"}
_FLOAT_COLUMNS = {"FEC_PRE_BER": "fec_pre_ber", "FEC_POST_BER": "fec_post_ber",
                  "FEC_PRE_BER_MAX": "fec_pre_ber_max", "FLR(O)": "flr_observed",
                  "FEC_MAX_T": "fec_max_t"}
_PORT_TITLE = re.compile(r"^(?:Ethernet|Eth)\S*\d(?:\s+(?:Line|System))?$")
_ACCURACY = re.compile(r"^(\S+)\s*\(\s*([\d.]+)\s*%\s*\)$")


def detect(text: str) -> float:
    """How sure we are that `text` is portstat FEC output (0..1)."""
    cleaned = head(text)
    if _STATS_HEADER.search(cleaned) or _HIST_HEADER.search(cleaned) \
            or _HIST_TABLE.search(cleaned):
        return 0.95
    if _JSON.search(cleaned):
        return 0.85
    return 0.0


def parse(text: str) -> FecStats:
    """Parse FEC statistics; raises `ParseError` when no FEC table is found."""
    lines = clean_lines(text)
    command = command_of(lines)
    interfaces: dict[str, PortFec] = {}
    warnings: list[str] = []
    view: str | None = None
    for table in iter_tables(lines):
        key = table.key()
        if key and key[0] in ("IFACE", "PORT", "GB IFACE") and "FEC_CORR" in key:
            view = view or "fec-stats"
            _stats(table, interfaces, warnings)
        elif key and key[0] in ("IFACE", "PORT") and "BIN0" in key:
            view = view or "fec-histogram-table"
            _histogram_table(table, interfaces, warnings)
        elif key[:1] == ["SYMBOL ERRORS PER CODEWORD"]:
            view = view or "fec-histogram"
            _histogram(table, interfaces, warnings, command)
    if view is None:
        data = load_json(text)
        if isinstance(data, dict) and _json(data, interfaces, warnings):
            view = "fec-stats-json"
    if view is None:
        raise ParseError(KIND, None, "no fec-stats (`IFACE STATE FEC_CORR ...`) or fec-histogram "
                                     "table found")
    if not interfaces:
        raise ParseError(KIND, None, "FEC table without rows (truncated?)")
    period = next((int(m.group(1)) for line in lines if (m := _PERIOD.search(line))), None)
    return FecStats(view=view, command=command, interfaces=interfaces, period_s=period,
                    warnings=warnings)


def _cell(entry: dict[str, Any], column: str, value: str) -> None:
    """Store one cell under its field; ValueError when it is not a number."""
    if column == "STATE":
        entry["state"] = normalize_state(value)
    elif column in _INT_COLUMNS:
        entry[_INT_COLUMNS[column]] = parse_int(value)
    elif column in _FLOAT_COLUMNS:
        entry[_FLOAT_COLUMNS[column]] = parse_float(value)
    elif column.startswith("FLR(P)"):
        accuracy = _ACCURACY.match(value.strip())
        if accuracy:
            entry["flr_predicted"] = parse_float(accuracy.group(1))
            entry["flr_predicted_accuracy_pct"] = float(accuracy.group(2))
        else:
            entry["flr_predicted"] = parse_float(value)
    else:
        entry.setdefault("other", {})[snake(column)] = parse_float(value)


def _stats(table: Table, interfaces: dict[str, PortFec], warnings: list[str]) -> None:
    columns = table.key()[1:]
    for row in table.rows:
        name = row.cells[0].strip()
        entry: dict[str, Any] = {}
        for column, value in zip(columns, row.cells[1:], strict=True):
            try:
                _cell(entry, column, value)
            except ValueError:
                warnings.append(f"line {row.line}: {name} {column}: unreadable "
                                f"{value.strip()[:30]!r}")
        interfaces[name] = _merge(interfaces.get(name), entry)


def _merge(existing: PortFec | None, entry: dict[str, Any]) -> PortFec:
    if existing is None:
        return PortFec(**entry)
    return existing.model_copy(update=entry)


def _bins(pairs: list[tuple[str, str, int]], warnings: list[str],
          port: str) -> dict[str, int | None]:
    bins: dict[str, int | None] = {}
    for name, value, line in pairs:
        try:
            bins[name] = parse_int(value)
        except ValueError:
            warnings.append(f"line {line}: {port} {name}: not an integer {value.strip()[:30]!r}")
            bins[name] = None
    return bins


def _histogram_table(table: Table, interfaces: dict[str, PortFec],
                     warnings: list[str]) -> None:
    bins = [cell.strip() for cell in table.header[1:]]
    for row in table.rows:
        port = row.cells[0].strip()
        pairs = [(b, v, row.line) for b, v in zip(bins, row.cells[1:], strict=True)]
        interfaces[port] = _merge(interfaces.get(port), {"histogram": _bins(pairs, warnings, port)})


def _histogram(table: Table, interfaces: dict[str, PortFec], warnings: list[str],
               command: str | None) -> None:
    # The gearbox dump titles each port side's table (`Ethernet0 Line`) on the line above it.
    title = next((line for line in reversed(table.context) if _PORT_TITLE.match(line)), None)
    match = re.search(r"fec-histogram\s+(?:-n\s+\S+\s+)?(\S+)", command or "")
    port = title or (match.group(1) if match else "unknown")
    if title is None and match is None:
        warnings.append("fec-histogram does not print the port; keyed as 'unknown' (include the "
                        "command line to name it)")
    pairs = [(row.cells[0].strip(), row.cells[1], row.line) for row in table.rows]
    interfaces[port] = _merge(interfaces.get(port), {"histogram": _bins(pairs, warnings, port)})


def _json(data: dict[str, Any], interfaces: dict[str, PortFec], warnings: list[str]) -> bool:
    for port, fields in data.items():
        if not isinstance(fields, dict) or "FEC_CORR" not in fields:
            continue
        entry: dict[str, Any] = {}
        for column, value in fields.items():
            try:
                _cell(entry, str(column).upper(), "N/A" if value is None else str(value))
            except ValueError:
                warnings.append(f"{port} {column}: unreadable {str(value)[:30]!r}")
        interfaces[str(port)] = PortFec(**entry)
    return bool(interfaces)


def tables(result: FecStats) -> list[DataTable]:
    """Per port: corrected, uncorrectable, symbol errors, pre/post-FEC BER."""
    columns = [left("port"), left("state"), right("corr"), right("uncorr"), right("symbol_err"),
               right("pre_ber"), right("post_ber")]
    rows = [(port, fec.state, fec.fec_corr, fec.fec_uncorr, fec.fec_symbol_err, fec.fec_pre_ber,
             fec.fec_post_ber) for port, fec in result.interfaces.items()]
    return [DataTable.build(columns, rows)]
