"""Switch interface counters: SONiC, Arista EOS, Cisco NX-OS, NVIDIA NVUE and Onyx.

Inputs, by flavor (detected from the output's shape, so no flag is needed):

- sonic: `show interfaces counters` in all its forms (default, `-a`, `errors`, `rates`,
  `trim`, `rif`, the old `Iface ... RX_RATE` header, `-j` JSON) and `show interfaces counters
  detailed <port>` (dotted-leader lines; the port comes from the command line when shown);
- eos: `show interfaces`;
- nxos: `show interface`;
- nvue: `nv show interface <if> counters` (the 5.5+ sectioned layout and the older flat one),
  its one-table forms `counters errors`, `counters drops`, `counters pktdist`, and the
  all-interfaces `nv show interface --view counters` (state from its `Flg` column);
- onyx: `show interfaces ethernet` as plain text or `| json-print` JSON;
- eos / nxos tables: EOS `show interfaces counters [errors|discards]`, NX-OS `show interface
  counters [errors]` (`Port` tables, one row per interface).

Every flavor's counters land on the same names (`rx_ok`, `rx_err`, `rx_drp`, `tx_*`, `crc`,
`rx_pause`, ...; see the model). Counters without a common name are kept in `other`.
"""

from __future__ import annotations

import re

from fabtui.model.parsed.switch_counters import SwitchCounters
from fabtui.model.table import Table, left, right
from fabtui.parsers import _switch_counters_eos as eos
from fabtui.parsers import _switch_counters_nvue as nvue
from fabtui.parsers import _switch_counters_nxos as nxos
from fabtui.parsers import _switch_counters_onyx as onyx
from fabtui.parsers import _switch_counters_porttable as porttable
from fabtui.parsers import _switch_counters_sonic as sonic
from fabtui.parsers._switch_common import clean_lines, command_of, head, load_json
from fabtui.parsers.errors import ParseError

KIND = "switch-counters"
MODEL = SwitchCounters
DESCRIPTION = ("switch interface counters: SONiC `show interfaces counters` (all forms), EOS "
               "`show interfaces [counters [errors|discards]]`, NX-OS `show interface [counters "
               "[errors]]`, NVUE `nv show interface X counters`, Onyx `show interfaces "
               "ethernet` (text or json-print)")

_SONIC_HEADER = re.compile(r"(?m)^\s*(?:IFACE|Iface)\s+(?:DESC\s+)?(?:STATE\s+)?"
                          r"(?:RX_OK|RX_ERR|TRIM_PKTS)\b")
_SONIC_JSON = re.compile(r'"(?:RX_OK|RxOk|RX_ERR|RxErr)"\s*:')
_DOTTED = re.compile(r"(?m)^\s*(?:Total )?(?:\w+ )?Packets (?:Received|Transmitted)\b.*\.{3,}")
_EOS_HEADER = re.compile(r"(?m)^\S+ is [^,\n]+, line protocol is \S+")
_NXOS_HEADER = re.compile(r"(?m)^(?:Ethernet|Eth|port-channel|mgmt|Vlan|loopback)\S* is "
                          r"(?:up|down)\b")
_NVUE = re.compile(r"(?m)(?:\bnv\s+show\s+interface\s+\S+\s+counters\b|^\s*carrier-transitions\s)")
# `nv show interface <if> counters errors|drops|pktdist`: one Counter/Receive/Transmit table.
_NVUE_PAIRED = re.compile(r"(?m)^\s*Counter\s+Receive\s+Transmit\s*\n\s*-{3,}\s+-{3,}\s+-{3,}\s*$")
_ONYX_HEADER = re.compile(r"(?m)^(?:Eth|IB)\d+/\d+(?:/\d+)?:?\s*$")


def _flavor(text: str) -> tuple[str | None, float]:
    """The flavor whose markers `text` (cleaned head) carries, and how sure we are."""
    if _SONIC_HEADER.search(text) and not re.search(r"\bFEC_CORR\b|\bBIN0\b", text):
        return "sonic", 0.9
    if len(_DOTTED.findall(text)) >= 3:
        return "sonic", 0.85
    if _SONIC_JSON.search(text):
        return "sonic", 0.8
    if _ONYX_HEADER.search(text) and "Operational state" in text \
            and re.search(r"(?m)^\s*(?:Rx|Tx):?\s*$", text):
        return "onyx", 0.9
    if re.search(r'"header"\s*:\s*"(?:Eth|IB|Vlan)', text) and '"Operational state"' in text:
        return "onyx", 0.85
    if _NVUE.search(text) and re.search(
            r"(?m)^\s*(?:in-pkts|in-bytes|out-pkts)\s|Detailed Counters|operational\s+applied",
            text):
        return "nvue", 0.9
    if _NXOS_HEADER.search(text) and re.search(
            r"(?m)^\s*(?:RX|Rx)\s*$|admin state is|input packets|^\s+Hardware: ", text):
        return "nxos", 0.9
    if re.search(r'"(?:carrier-transitions|in-pkts|out-pkts|netstat)"\s*:', text):
        return "nvue", 0.8
    if _NVUE_PAIRED.search(text) or nvue.VIEW_COUNTERS.search(text):
        return "nvue", 0.85
    if _EOS_HEADER.search(text) and re.search(r"packets input,|Hardware is ", text):
        return "eos", 0.9
    if porttable.HEADER.search(text) and re.search(
            r"(?m)^\s*(?:Et|Eth|Ethernet|Po|mgmt|Ma|Vl|Vlan|Lo)[\w./:-]*\d\s+(?:\d|--)", text):
        return "table", 0.85
    return None, 0.0


def detect(text: str) -> float:
    """How sure we are that `text` is interface counters from a switch (0..1)."""
    return _flavor(head(text))[1]


def parse(text: str) -> SwitchCounters:
    """Parse switch interface counters; raises `ParseError` if no interface is found."""
    lines = clean_lines(text)
    joined = "\n".join(lines)
    flavor, _score = _flavor(joined)
    if flavor is None:
        raise ParseError(KIND, None, "not switch interface counters: no SONiC, EOS, NX-OS, NVUE "
                                     "or Onyx counters layout found")
    command = command_of(lines)
    if flavor == "sonic":
        result = _sonic(lines, command)
    elif flavor == "onyx":
        result = _onyx(text, lines)
    elif flavor == "nvue":
        result = _nvue(lines, command)
    elif flavor == "table":
        interfaces, view, warnings = porttable.parse(lines)
        result = SwitchCounters(flavor="nxos" if porttable.flavor(joined) == "nxos" else "eos",
                                view=view, interfaces=interfaces, warnings=warnings)
    else:
        reader = eos if flavor == "eos" else nxos
        interfaces, warnings = reader.parse(lines)
        result = SwitchCounters(flavor=flavor, view="show-interfaces", interfaces=interfaces,
                                warnings=warnings)
    if not result.interfaces:
        raise ParseError(KIND, None, f"{flavor} counters layout but no interface in it "
                                     "(truncated?)")
    result.command = command
    return result


def _sonic(lines: list[str], command: str | None) -> SwitchCounters:
    tables = sonic.parse_tables(lines)
    if tables is not None:
        if not tables.interfaces and not any("No non-zero statistics" in x for x in lines):
            raise ParseError(KIND, tables.header_line, "SONiC counters table without rows "
                                                       "(truncated?)")
        return SwitchCounters(flavor="sonic", view=tables.view, interfaces=tables.interfaces,
                              period_s=tables.period_s, last_cached=tables.last_cached,
                              warnings=tables.warnings)
    if sonic.is_detailed(lines):
        counters, warnings = sonic.parse_detailed(lines)
        name = _port_from_command(command)
        if name is None:
            name = "unknown"
            warnings.insert(0, "the port is not printed by `counters detailed`; keyed as "
                               "'unknown' (include the command line to name it)")
        return SwitchCounters(flavor="sonic", view="counters-detailed",
                              interfaces={name: counters}, warnings=warnings)
    data = load_json("\n".join(lines))
    json_result = sonic.parse_json(data) if data is not None else None
    if json_result is None:
        raise ParseError(KIND, None, "SONiC counters header found but no readable table")
    return SwitchCounters(flavor="sonic", view=json_result.view,
                          interfaces=json_result.interfaces, warnings=json_result.warnings)


def _port_from_command(command: str | None) -> str | None:
    """The port named on a `show interfaces counters detailed <port>` / `portstat -i` line."""
    if not command:
        return None
    match = re.search(r"\bdetailed\s+(\S+)|\s-i\s+(\S+)|--interface[= ](\S+)", command)
    if not match:
        return None
    return next(group for group in match.groups() if group)


def _onyx(text: str, lines: list[str]) -> SwitchCounters:
    data = load_json(text)
    if data is not None:
        found = onyx.parse_json(data)
        if found is not None:
            return SwitchCounters(flavor="onyx", view="onyx-json", interfaces=found[0],
                                  warnings=found[1])
    interfaces, warnings = onyx.parse_text(lines)
    return SwitchCounters(flavor="onyx", view="onyx-text", interfaces=interfaces,
                          warnings=warnings)


def _nvue(lines: list[str], command: str | None) -> SwitchCounters:
    if nvue.VIEW_COUNTERS.search("\n".join(lines)):
        interfaces, warnings = nvue.parse_view(lines)
        return SwitchCounters(flavor="nvue", view="nv-view-counters", interfaces=interfaces,
                              warnings=warnings)
    every = nvue.parse_view_json(load_json("\n".join(lines)))
    if every is not None:
        return SwitchCounters(flavor="nvue", view="nv-view-counters-json", interfaces=every[0],
                              warnings=every[1])
    counters, view, warnings = nvue.parse(lines, command)
    match = nvue.COMMAND.search(command or "") or nvue.COMMAND.search("\n".join(lines[:5]))
    name = match.group(1) if match else None
    if name is None:
        name = "unknown"
        warnings.insert(0, "NVUE does not print the interface; keyed as 'unknown' (include "
                           "the command line to name it)")
    return SwitchCounters(flavor="nvue", view=view, interfaces={name: counters},
                          warnings=warnings)


def tables(result: SwitchCounters) -> list[Table]:
    """Interfaces with state, packets, errors, drops, CRC and pause counts."""
    counters = ("rx_ok", "rx_err", "rx_drp", "tx_ok", "tx_err", "tx_drp", "crc", "rx_pause",
                "tx_pause")
    columns = [left("interface"), left("state"), *(right(name) for name in counters)]
    rows = [(name, entry.state, *(getattr(entry, name) for name in counters))
            for name, entry in result.interfaces.items()]
    return [Table.build(columns, rows, title=[f"{result.flavor} ({result.view})"])]
