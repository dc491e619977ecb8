"""`perfquery` on a simulated node: InfiniBand PMA counters.

On a RoCE port it fails as the real one does (no subnet manager, no PMA to ask). On the IB
variant it answers `perfquery -x [-C DEV] [-P PORT]` (the local HCA port) and
`perfquery -x LID PORT` (any port of the subnet: a switch's by its LID and port number, an
HCA's by its LID), in infiniband-diags' dotted layout; without `-x` the basic PortCounters,
whose data and packet counters are 32 bits and saturate.
"""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim import ib
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result

_EXTENDED = ("PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts",
             "PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts",
             "PortMulticastRcvPkts")
_ERRORS = ("SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter",
           "PortRcvErrors", "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors",
           "PortXmitDiscards", "PortXmitConstraintErrors", "PortRcvConstraintErrors",
           "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped",
           "PortXmitWait", "QP1Dropped")
_BASIC = ("SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter",
          "PortRcvErrors", "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors",
          "PortXmitDiscards", "PortXmitConstraintErrors", "PortRcvConstraintErrors",
          "CounterSelect2", "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors",
          "VL15Dropped", "PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts",
          "PortXmitWait")

_BASIC_MAX = {"SymbolErrorCounter": 0xFFFF, "LinkErrorRecoveryCounter": 0xFF,
              "LinkDownedCounter": 0xFF, "PortRcvErrors": 0xFFFF,
              "PortRcvRemotePhysicalErrors": 0xFFFF, "PortRcvSwitchRelayErrors": 0xFFFF,
              "PortXmitDiscards": 0xFFFF, "PortXmitConstraintErrors": 0xFF,
              "PortRcvConstraintErrors": 0xFF, "LocalLinkIntegrityErrors": 0xF,
              "ExcessiveBufferOverrunErrors": 0xF, "VL15Dropped": 0xFFFF}
"""Where the basic PortCounters saturate (IBTA widths); the rest are 32 bits."""


def perfquery(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    """perfquery reads InfiniBand PMA counters: on a RoCE port there is no subnet manager."""
    device = args[args.index("-C") + 1] if "-C" in args and args.index("-C") + 1 < len(args) \
        else node.nics[0].name
    if not ib.is_ib(sim):
        return "", (f"ibwarn: [{41000 + len(device)}] mad_rpc_open_port: client_register for "
                    f"mgmt 1 failed\nperfquery: iberror: failed: Failed to open '{device}' port "
                    "'1'\n"), 255
    extended = "-x" in args or "--extended" in args
    words = [a for i, a in enumerate(args) if not a.startswith("-") and
             (i == 0 or args[i - 1] not in ("-C", "-P"))]
    if words:
        return _by_lid(sim, words, extended, t)
    port = node.nics[0] if device == node.nics[0].name else \
        next((n for n in node.nics if n.name == device), None)
    if port is None:
        return "", f"ibpanic: [0] main: can't open local port for '{device}'\n", 255
    lid = ib.hca_lid(sim, node.hostname, port.name)
    return _block(sim, node.hostname, port.name, lid, 1, extended, t)


def _by_lid(sim: Sim, words: list[str], extended: bool, t: float) -> Result:
    try:
        lid = int(words[0], 0)
        number = int(words[1], 0) if len(words) > 1 else 1
    except ValueError:
        return "", f"perfquery: iberror: failed: can't resolve destination port {words[0]}\n", 255
    owner = ib.lid_owner(sim, lid)
    if owner is None:
        return "", (f"ibwarn: [0] mad_rpc: _do_madrpc failed; dport (Lid {lid})\n"
                    f"perfquery: iberror: failed: classportinfo query\n"), 255
    device, nic = owner
    if nic is not None:
        return _block(sim, device, nic, lid, number, extended, t)
    port = ib.switch_port_by_number(sim, device, number)
    if port is None:
        return "", (f"ibwarn: [0] dump_perfcounters: perfquery: port {number} query failed\n"
                    f"perfquery: iberror: failed: perfquery\n"), 255
    return _block(sim, device, port, lid, number, extended, t)


def _block(sim: Sim, device: str, port: str, lid: int, number: int, extended: bool,
           t: float) -> Result:
    counters = ib.pma_counters(sim, device, port, t)
    if counters is None:
        return "", f"perfquery: iberror: failed: perfquery port {number} not connected\n", 255
    if extended:
        lines = [f"# Port extended counters: Lid {lid} port {number} (CapMask: 0x5A00 "
                 "CapMask2: 0x0000002)", _row("PortSelect", number),
                 _row("CounterSelect", "0x0000")]
        lines += [_row(name, counters[name]) for name in _EXTENDED]
        lines.append(_row("CounterSelect2", "0x00000000"))
        lines += [_row(name, counters[name]) for name in _ERRORS]
    else:
        lines = [f"# Port counters: Lid {lid} port {number} (CapMask: 0x5A00)",
                 _row("PortSelect", number), _row("CounterSelect", "0x0000")]
        for name in _BASIC:
            if name == "CounterSelect2":
                lines.append(_row(name, "0x00"))
                continue
            lines.append(_row(name, min(counters[name], _BASIC_MAX.get(name, 0xFFFFFFFF))))
    return "\n".join(lines) + "\n", "", 0


def _row(name: str, value: object) -> str:
    """`Name:.....value` with perfquery's dotted leader to column 33."""
    return f"{name}:".ljust(33, ".") + str(value)
