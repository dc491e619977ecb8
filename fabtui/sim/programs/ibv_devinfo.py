"""`ibv_devinfo [-d DEV]` on a simulated node: verbs devices, firmware, port state and MTU."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim import ib, misconfig
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result, nic_guid, port_up


def ibv_devinfo(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    wanted = args[args.index("-d") + 1] if "-d" in args and args.index("-d") + 1 < len(args) \
        else None
    nics = [n for n in node.nics if wanted is None or wanted == n.name]
    if not nics:
        return "", f"IB device '{wanted}' wasn't found\n", 255
    lines = []
    infiniband = ib.is_ib(sim)
    sm_lid = ib.sm_state(sim, t).master_lid if infiniband else 0
    for nic in nics:
        up = port_up(sim, node, nic, t)
        raw = nic_guid(sim, node.hostname, nic.name)[2:]
        guid = ":".join(raw[i:i + 4] for i in range(0, 16, 4))
        lines += [f"hca_id:\t{nic.name}", "\ttransport:\t\t\tInfiniBand (0)",
                  f"\tfw_ver:\t\t\t\t{misconfig.firmware(sim, node, nic, t)}",
                  f"\tnode_guid:\t\t\t{guid}",
                  f"\tsys_image_guid:\t\t\t{guid}", "\tvendor_id:\t\t\t0x02c9",
                  "\tvendor_part_id:\t\t\t4129", "\thw_ver:\t\t\t\t0x0",
                  "\tboard_id:\t\t\tMT_0000000838", "\tphys_port_cnt:\t\t\t1",
                  "\t\tport:\t1",
                  f"\t\t\tstate:\t\t\t{'PORT_ACTIVE (4)' if up else 'PORT_DOWN (1)'}",
                  "\t\t\tmax_mtu:\t\t4096 (5)", _mtu_line(misconfig.active_mtu(sim, node, nic, t)),
                  f"\t\t\tsm_lid:\t\t\t{sm_lid if up else 0}",
                  f"\t\t\tport_lid:\t\t{_lid(sim, node, nic.name, infiniband, up)}",
                  "\t\t\tport_lmc:\t\t0x00",
                  f"\t\t\tlink_layer:\t\t{'InfiniBand' if infiniband else 'Ethernet'}", ""]
    return "\n".join(lines), "", 0


def _lid(sim: Sim, node: Node, nic: str, infiniband: bool, up: bool) -> int:
    """The port's LID: 0 on RoCE, 65535 on an IB port the SM has not configured (down)."""
    if not infiniband:
        return 0
    return ib.hca_lid(sim, node.hostname, nic) if up else 65535


def _mtu_line(mtu: int) -> str:
    codes = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
    return f"\t\t\tactive_mtu:\t\t{mtu} ({codes.get(mtu, 5)})"
