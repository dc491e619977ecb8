"""`mlnx_qos -i NETDEV` (mlnx-tools, NVIDIA MLNX_OFED / DOCA-Host): a NIC's QoS state.

    DCBX mode: OS controlled
    Priority trust state: dscp
    dscp2prio mapping:
            prio:0 dscp:07,06,05,04,03,02,01,00,
    ...
    PFC configuration:
            priority    0   1   2   3   4   5   6   7
            enabled     0   0   0   1   0   0   0   0
    tc: 3 ratelimit: unlimited, tsa: ets, bw: 50%
             priority:  3

The trust state and the PFC `enabled` row are what a RoCE host must get right (DSCP trust,
PFC on the RoCE priority only); the rest is kept for the record.
"""

from __future__ import annotations

import re

from fabtui.model.parsed.mlnx_qos import MlnxQos
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import clean_lines

KIND = "mlnx-qos"
MODEL = MlnxQos
DESCRIPTION = "mlnx_qos -i NETDEV (mlnx-tools): DSCP/PCP trust, PFC per priority, TC groups"

_TRUST = re.compile(r"^Priority trust state:\s*(?P<trust>\w+)")
_DCBX = re.compile(r"^DCBX mode:\s*(?P<mode>.+?)\s*$")
_PRIO = re.compile(r"^prio:(?P<prio>[0-7])\s+dscp:(?P<dscps>[0-9,\s]*)$")
_ENABLED = re.compile(r"^enabled\s+(?P<bits>(?:[01]\s*){8})$")
_TC = re.compile(r"^tc:\s*(?P<tc>\d+)\b")
_TC_PRIO = re.compile(r"^priority:\s*(?P<prio>[0-7])\s*$")


def detect(text: str) -> float:
    """How sure we are that `text` is `mlnx_qos` output (0..1)."""
    head = text[:8000]
    if re.search(r"(?m)^\s*Priority trust state:", head) and "PFC configuration" in head:
        return 0.95
    if re.search(r"(?m)^\s*Priority trust state:", head):
        return 0.6
    return 0.0


def parse(text: str) -> MlnxQos:
    """Parse the trust state, PFC row, DSCP map and TC groups; raises `ParseError` when the
    trust state is missing or the `enabled` row does not hold 8 bits."""
    trust = dcbx = None
    enabled: list[int] | None = None
    dscp2prio: dict[int, int] = {}
    groups: dict[int, list[int]] = {}
    current_tc: int | None = None
    for number, raw in enumerate(clean_lines(text), start=1):
        line = raw.strip()
        if (m := _TRUST.match(line)) is not None:
            trust = m.group("trust")
        elif (m := _DCBX.match(line)) is not None:
            dcbx = m.group("mode")
        elif (m := _PRIO.match(line)) is not None:
            for dscp in filter(None, (d.strip() for d in m.group("dscps").split(","))):
                dscp2prio[int(dscp)] = int(m.group("prio"))
        elif line.startswith("enabled"):
            m = _ENABLED.match(line)
            if m is None:
                raise ParseError(KIND, number, f"PFC enabled row is not 8 bits: {line!r}")
            bits = m.group("bits").split()
            enabled = [p for p, bit in enumerate(bits) if bit == "1"]
        elif (m := _TC.match(line)) is not None:
            current_tc = int(m.group("tc"))
            groups.setdefault(current_tc, [])
        elif (m := _TC_PRIO.match(line)) is not None and current_tc is not None:
            groups[current_tc].append(int(m.group("prio")))
    if trust is None:
        raise ParseError(KIND, None, "no 'Priority trust state' line: not mlnx_qos output")
    return MlnxQos(dcbx_mode=dcbx, trust=trust, pfc_enabled=enabled or [],
                   dscp2prio=dict(sorted(dscp2prio.items())), tc_priorities=groups)
