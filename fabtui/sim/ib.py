"""What an InfiniBand fabric adds to the simulation: LIDs, GUIDs, the subnet manager, PMA
counters and the SM's events (the demo's IB variant, template `h100-64gpu-ib`).

A fabric whose cluster says `fabric: infiniband` is one IB subnet: the subnet manager (OpenSM)
runs on `SM_HOSTS[0]`'s first HCA with a standby on `SM_HOSTS[1]` (a small cluster's setup;
larger ones run UFM on a management host). The SM hands out LIDs: switches first, in topology
order from 1, then every HCA in cabling order. Port counters are the IBTA PortCounters
(`perfquery -x`) read off the same link state, traffic and FEC the RoCE view uses:

- `SymbolErrorCounter`: the codewords the receiver's FEC could not correct [inference: on FEC
  links (HDR/NDR) the errors left after FEC are what the PHY counts];
- `LinkDownedCounter`: link-down transitions; `PortRcvErrors`: frames received in error;
- `PortXmitWait`: ticks the port had data to send and could not, one tick per 8 bytes of line
  time on a Quantum switch (ibdiagnet User Manual 2.13, "Congestion Assessment on InfiniBand
  Links": Quantum, Quantum-2 and Quantum-3 increment xmit_wait every 8 bytes, `tick == 7`),
  so a port waiting a share `s` of the time counts `s x rate / 64` per second.

`perfquery -x` prints the extended counters (CapMask2 with the extended error counters, as
the real `-x` capture shows after `CounterSelect2`): 64 bits, they do not saturate. The basic
PortCounters (`perfquery` without `-x`) saturate as the IBTA sizes them (16 bits for symbol
and receive errors, 8 for link downed, 32 for data, packets and XmitWait), as real ports do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabtui.model.topology import FabricKind, Role
from fabtui.sim.scenario import FaultKind

if TYPE_CHECKING:
    from fabtui.sim.core import Sim

SM_HOSTS = ("node001", "node002")
"""Where OpenSM runs: the master on the first host's first HCA, a standby on the second's."""
SM_PRIORITY = (15, 14)
XMIT_WAIT_BYTES = 8
"""Bytes of line time per PortXmitWait tick on Quantum-class switches (tick == 7)."""
BACKGROUND_WAIT = 0.004
"""Share of time a healthy port waits for credits while a collective runs [inference: the
synchronised bursts of a ring all_reduce; fabtui's own demo value]."""
SWITCH_GUID_BASE = 0xFC6A1C0300000000
"""Quantum-2 node GUIDs start fc6a1c03 (ibdiagnet2 reports of QM9700 fabrics)."""
OPENSM_LOG = "/var/log/opensm.log"


def is_ib(sim: Sim) -> bool:
    """True when the simulated fabric is InfiniBand."""
    return sim.topology.cluster.fabric is FabricKind.INFINIBAND


def switch_lid(sim: Sim, name: str) -> int:
    """The LID the SM gave switch `name` (switches first, from 1)."""
    names = [s.name for s in sim.topology.switches]
    return names.index(name) + 1


def hca_lid(sim: Sim, host: str, nic: str) -> int:
    """The LID the SM gave HCA port `host:nic` (after the switches, in cabling order)."""
    keys = list(sim.graph.attachments)
    return len(sim.topology.switches) + 1 + keys.index((host, nic))


def switch_guid(sim: Sim, name: str) -> str:
    """The node GUID of switch `name`."""
    value = int(sim.noise("swguid", name) * 2**24)
    return f"0x{SWITCH_GUID_BASE | value << 4:016x}"


def port_number(port: str) -> int:
    """`IB1/5` -> 5 (the IB port number the PMA and ibnetdiscover use)."""
    found = re.search(r"(\d+)$", port)
    return int(found.group(1)) if found else 0


@dataclass(frozen=True)
class SmState:
    """Who is master SM at a time, and how many handovers there have been."""

    master_host: str
    master_lid: int
    priority: int
    handovers: int
    activity: int


def sm_flap_times(sim: Sim, t: float) -> list[float]:
    """The times (up to `t`) the master SM changed hands under an `sm-flap` fault."""
    times: list[float] = []
    for fault in sim.faults:
        if fault.kind is not FaultKind.SM_FLAP:
            continue
        end = min(t, fault.spec.until if fault.spec.until is not None else t)
        period = float(fault.spec.params.get("period_s", 120))
        at = fault.spec.at
        while at <= end:
            times.append(at)
            at += period
    return sorted(times)


def sm_state(sim: Sim, t: float) -> SmState:
    """The master SM at `t`: node001's, or the standby after an odd number of handovers."""
    handovers = len(sm_flap_times(sim, t))
    index = handovers % 2
    host = SM_HOSTS[index]
    nic = sim.graph.nodes[host].nics[0].name
    return SmState(host, hca_lid(sim, host, nic), SM_PRIORITY[index], handovers,
                   int(1000 + t * 2))


def xmit_wait_share(sim: Sim, device: str, port: str, t: float) -> float:
    """Share of time `device:port`'s transmitter waits for credits at `t`.

    An `xmit-wait` fault names the HCA that drains slowly (`node:mlx5_N`, param `share`):
    the leaf port sending to it waits that share of the time (the root of the congestion
    tree), the HCAs of the other nodes on its rail wait a third of it (their frames queue in
    the leaf behind it) [inference: a slow receiver's credit back-pressure]. Without traffic
    nothing waits."""
    if sim.job_factor(t) <= 0:
        return 0.0
    share = BACKGROUND_WAIT * (0.5 + sim.noise("xw", device, port))
    for fault in sim.active(FaultKind.XMIT_WAIT, t):
        attachment = sim.graph.attachments.get((fault.host or "", fault.nic or ""))
        if attachment is None:
            continue
        planted = float(fault.spec.params.get("share", 0.35))
        if (device, port) == (attachment.switch, attachment.port):
            share = max(share, planted)
        elif device in sim.graph.nodes and device != fault.host:
            same_rail = sim.graph.attachments.get((device, port))
            if same_rail is not None and same_rail.switch == attachment.switch:
                share = max(share, planted / 3)
    return share


def xmit_wait_ticks(sim: Sim, device: str, port: str, link: int, t: float) -> int:
    """PortXmitWait of `device:port` over [0, t]: its waiting share integrated at line rate."""
    speed = sim.link_speed(link) * 1e9
    ticks = sim.integrate(lambda x: xmit_wait_share(sim, device, port, x) * speed /
                          (XMIT_WAIT_BYTES * 8) if sim.link_up(link, x) else 0.0, t, link)
    return int(ticks) + sim.base("xwbase", device, port, scale=1e6)


def pma_counters(sim: Sim, device: str, port: str, t: float) -> dict[str, int] | None:
    """`perfquery -x` counters of switch port or HCA `device:port` at `t` (None: no cable)."""
    if device in sim.graph.switches:
        link = sim.real_link(device, port, t)
        counters = sim.port_counters(sim.graph.switches[device], port, t)
    else:
        attachment = sim.graph.attachments.get((device, port))
        link = attachment.link_index if attachment else None
        nic = sim.graph.find_nic(device, port)
        counters = sim.nic_counters(device, nic, t) if nic is not None else None
    if link is None or counters is None:
        return None
    multicast = sim.base("mcast", device, port, scale=1e5)
    return {
        "PortXmitData": counters.tx_bytes // 4, "PortRcvData": counters.rx_bytes // 4,
        "PortXmitPkts": counters.tx_ok + multicast, "PortRcvPkts": counters.rx_ok + multicast,
        "PortUnicastXmitPkts": counters.tx_ok, "PortUnicastRcvPkts": counters.rx_ok,
        "PortMulticastXmitPkts": multicast, "PortMulticastRcvPkts": multicast,
        "SymbolErrorCounter": counters.fec_uncorr,
        "LinkErrorRecoveryCounter": 0,
        "LinkDownedCounter": counters.link_down_events,
        "PortRcvErrors": counters.rx_err,
        "PortRcvRemotePhysicalErrors": 0, "PortRcvSwitchRelayErrors": 0,
        "PortXmitDiscards": 0, "PortXmitConstraintErrors": 0, "PortRcvConstraintErrors": 0,
        "LocalLinkIntegrityErrors": 0, "ExcessiveBufferOverrunErrors": 0, "VL15Dropped": 0,
        "PortXmitWait": xmit_wait_ticks(sim, device, port, link, t), "QP1Dropped": 0,
    }


def lid_owner(sim: Sim, lid: int) -> tuple[str, str | None] | None:
    """(switch, None) or (host, nic) the LID belongs to."""
    switches = sim.topology.switches
    if 1 <= lid <= len(switches):
        return switches[lid - 1].name, None
    keys = list(sim.graph.attachments)
    index = lid - len(switches) - 1
    if 0 <= index < len(keys):
        return keys[index]
    return None


def switch_port_by_number(sim: Sim, switch: str, number: int) -> str | None:
    """The port name of `switch` with IB port number `number`."""
    return next((p for p in sim.switch_ports(switch) if port_number(p) == number), None)


def leaves_and_spines(sim: Sim) -> list[str]:
    """Switch names, leaves first (the order ibdiagnet and ibnetdiscover walk them)."""
    return [s.name for s in sorted(sim.topology.switches, key=lambda s: s.role is not Role.LEAF)]
