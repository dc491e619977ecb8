"""Arista EOS `show interfaces counters [errors|discards]` and Cisco NX-OS `show interface
counters [errors]` for the switch-counters parser. Not a parser.

Both print blank-separated tables headed by `Port` and one-word column names, one row per
interface; a capture holds several such tables (EOS prints the In and Out halves one after the
other, NX-OS four error tables between dash rules). Rows of every table are merged per port::

    Port              FCS      Align     Symbol         Rx      Runts     Giants         Tx
    Et1/1               0          0          0          0          0          0          0

    ---------------------------------------------------------------------------
    Port          Align-Err    FCS-Err   Xmit-Err    Rcv-Err  UnderSize OutDiscards
    ---------------------------------------------------------------------------
    Eth1/1                0          0          0          0          0           0

NX-OS prints `--` for a counter the port does not have (null). EOS `discards` ends with a
`Totals` row, which is not a port and is skipped.

Each table's rows are read with that table's own header only: a `Port ...` header this reader
does not know ends the table before it (a warning; its rows are skipped), so a later block can
never lay its values over the columns of an earlier one. A counter already read for a port is
kept; a later table that disagrees about it is a warning.
"""

from __future__ import annotations

import re
from typing import Any

from fabtui.model.parsed.switch_counters import InterfaceCounters
from fabtui.parsers._switch_common import parse_int, snake

HEADER = re.compile(
    r"(?m)^\s*Port\s+(?:InOctets|OutOctets|InUcastPkts|InMcastPkts|InBcastPkts|OutUcastPkts|"
    r"OutMcastPkts|OutBcastPkts|InPkts|OutPkts|FCS|Align|Align-Err|Single-Col|Giants|"
    r"InDiscards|OutDiscards|Stomped-CRC)(?:\s+[A-Za-z][\w-]*)*\s*$")
_ANY_HEADER = re.compile(r"^\s*Port\s+[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)*\s*$")
_ROW = re.compile(r"^\s*((?:Et|Eth|Ethernet|Po|Port-Channel|Ma|Management|mgmt|Vl|Vlan|Lo|"
                  r"Loopback|Sw|Fa|Gi|Te)[\w./:-]*\d)\s+(\S.*?)\s*$")
_FIELDS = {
    "INOCTETS": "rx_bytes", "INUCASTPKTS": "rx_unicast", "INMCASTPKTS": "rx_multicast",
    "INBCASTPKTS": "rx_broadcast", "OUTOCTETS": "tx_bytes", "OUTUCASTPKTS": "tx_unicast",
    "OUTMCASTPKTS": "tx_multicast", "OUTBCASTPKTS": "tx_broadcast",
    # EOS `counters errors`: Rx/Tx are the input/output error totals.
    "FCS": "crc", "ALIGN": "alignment_errors", "SYMBOL": "symbol_errors", "RX": "rx_err",
    "RUNTS": "runts", "GIANTS": "giants", "TX": "tx_err",
    # NX-OS `counters errors` (UnderSize, undersized frames with a good CRC, stays in `other`;
    # its Runts column is `runts`; Stomped-CRC, frames a cut-through switch forwarded with a
    # bad CRC, stays in `other` as `stomped_crc`).
    "FCS-ERR": "crc", "ALIGN-ERR": "alignment_errors", "XMIT-ERR": "tx_err",
    "RCV-ERR": "rx_err", "SYMBOL-ERR": "symbol_errors",
    "INDISCARDS": "rx_drp", "OUTDISCARDS": "tx_drp",
    # NX-OS `show interface <subinterface> counters` adds an InPkts / OutPkts block.
    "INPKTS": "rx_ok", "OUTPKTS": "tx_ok",
}


def flavor(text: str) -> str:
    """`nxos` when the ports are named the NX-OS way (`Eth1/1`, `mgmt0`), else `eos`."""
    return "nxos" if re.search(r"(?m)^\s*(?:Eth\d|mgmt\d)", text) else "eos"


def view(headers: list[list[str]]) -> str:
    """Which command form the table headers are."""
    names = {name for header in headers for name in header}
    if names & {"FCS", "FCS-ERR", "ALIGN", "ALIGN-ERR", "SINGLE-COL"}:
        return "counters-errors"
    if names <= {"INDISCARDS", "OUTDISCARDS"}:
        return "counters-discards"
    return "counters-table"


def parse(lines: list[str]) -> tuple[dict[str, InterfaceCounters], str, list[str]]:
    """Every `Port ...` table: (interfaces, view, warnings)."""
    entries: dict[str, dict[str, Any]] = {}
    warnings: list[str] = []
    headers: list[list[str]] = []
    columns: list[str] | None = None
    for number, line in enumerate(lines, start=1):
        if HEADER.match(line):
            columns = [cell.upper() for cell in line.split()[1:]]
            headers.append(columns)
            continue
        if columns is not None and _ANY_HEADER.match(line):
            warnings.append(f"line {number}: table header not understood "
                            f"({line.strip()[:60]}); its rows are skipped")
            columns = None
            continue
        row = _ROW.match(line)
        if columns is None or row is None:
            continue
        cells = row.group(2).split()
        if len(cells) != len(columns):
            warnings.append(f"line {number}: {len(cells)} values for {len(columns)} columns, "
                            "row skipped")
            continue
        entry = entries.setdefault(row.group(1), {"other": {}})
        for column, cell in zip(columns, cells, strict=True):
            _store(entry, column, cell, number, warnings)
    interfaces = {name: InterfaceCounters(**entry) for name, entry in entries.items()}
    return interfaces, view(headers), warnings


def _store(entry: dict[str, Any], column: str, cell: str, number: int,
           warnings: list[str]) -> None:
    try:
        value = parse_int(cell)
    except ValueError:
        warnings.append(f"line {number}: {column}: not an integer {cell[:30]!r}")
        value = None
    field = _FIELDS.get(column)
    target, key = (entry, field) if field else (entry["other"], snake(column))
    if key in target and target[key] != value:
        warnings.append(f"line {number}: {column} {cell[:30]!r} disagrees with the value an "
                        f"earlier table gave ({target[key]}); the earlier one is kept")
        return
    target[key] = value
