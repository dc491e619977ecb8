"""`ibnetdiscover` on a simulated IB node: the subnet's topology file (switch blocks with one
line per connected port, then the HCAs), in infiniband-diags' layout (see the real QM9700
capture in tests/fixtures/ibnetdiscover). A link that is down is not discovered."""

from __future__ import annotations

import time

from fabtui.model.topology import Node
from fabtui.sim import ib
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result, nic_guid

_SPEED = {400: "4xNDR", 200: "4xHDR", 100: "4xEDR", 800: "4xXDR"}


def ibnetdiscover(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    """The topology file as discovered from `node`'s first HCA at `t`."""
    if not ib.is_ib(sim):
        return "", ("ibwarn: [0] mad_rpc_open_port: client_register for mgmt 1 failed\n"
                    "ibnetdiscover: iberror: failed: discover failed\n"), 255
    me = nic_guid(sim, node.hostname, node.nics[0].name)[2:]
    stamp = time.strftime("%a %b %e %H:%M:%S %Y", time.gmtime(sim.epoch + t))
    out = ["#", f"# Topology file: generated on {stamp}", "#",
           f"# Initiated from node {me} port {me}", ""]
    ports: dict[str, list[tuple[int, str]]] = {}
    cas: list[tuple[str, str, str, str, int, int]] = []
    for device in ib.leaves_and_spines(sim):  # the plant as cabled, not as designed
        for port in sim.switch_ports(device):
            seen = sim.neighbor(device, port, t)
            if seen is None:
                continue
            link = sim.real_link(device, port, t)
            if link is not None and not sim.link_up(link, t):
                continue
            speed = _SPEED.get(sim.link_speed(link), "4x???") if link is not None else "4xNDR"
            far_dev, far_port = seen
            number = ib.port_number(port)
            if far_dev in sim.graph.switches:
                guid = ib.switch_guid(sim, far_dev)[2:]
                line = (f'[{number}]\t"S-{guid}"[{ib.port_number(far_port)}]\t\t# '
                        f'"MF0;{far_dev}:MQM9700/U1" lid {ib.switch_lid(sim, far_dev)} {speed}')
            else:
                found = sim.graph.find_nic(far_dev, far_port)
                far_port = found.name if found is not None else far_port
                guid = nic_guid(sim, far_dev, far_port)[2:]
                lid = ib.hca_lid(sim, far_dev, far_port)
                line = (f'[{number}]\t"H-{guid}"[1]({guid}) \t\t# "{far_dev} {far_port}" '
                        f'lid {lid} {speed}')
                cas.append((far_dev, far_port, guid, device, number, lid))
            ports.setdefault(device, []).append((number, line))
    for switch in ib.leaves_and_spines(sim):
        guid = ib.switch_guid(sim, switch)[2:]
        out += ["vendid=0x2c9", "devid=0xd2f0", f"sysimgguid=0x{guid}",
                f"switchguid=0x{guid}({guid})",
                f'Switch\t65 "S-{guid}"\t\t# "MF0;{switch}:MQM9700/U1" enhanced port 0 lid '
                f"{ib.switch_lid(sim, switch)} lmc 0"]
        out += [line for _, line in sorted(ports.get(switch, []))]
        out.append("")
    for host, nic, guid, switch, number, lid in sorted(cas):
        sw_guid = ib.switch_guid(sim, switch)[2:]
        out += ["vendid=0x2c9", "devid=0x1021", f"sysimgguid=0x{guid}", f"caguid=0x{guid}",
                f'Ca\t1 "H-{guid}"\t\t# "{host} {nic}"',
                f'[1]({guid}) \t"S-{sw_guid}"[{number}]\t\t# lid {lid} lmc 0 '
                f'"MF0;{switch}:MQM9700/U1" lid {ib.switch_lid(sim, switch)} 4xNDR', ""]
    return "\n".join(out) + "\n", "", 0
