"""perftest on a simulated node (`ib_*_bw`, `ib_*_lat`, client or server side), at the rate
one QP pair reaches (`pair_rate`)."""

from __future__ import annotations

from collections.abc import Callable

from fabtui.model.topology import Nic, Node
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result, nic_by, parse_options
from fabtui.sim.scenario import FaultKind

_PERFTEST_FLAGS = frozenset({"-F", "--report_gbits", "-a", "--all", "-b", "--bidirectional",
                             "-R", "--rdma_cm", "--run_infinitely", "-z", "--com_rdma_cm"})
"""perftest options that take no value."""

PERFTEST = {"ib_write_bw": ("RDMA_Write", "bw"), "ib_read_bw": ("RDMA_Read", "bw"),
            "ib_send_bw": ("Send", "bw"), "ib_write_lat": ("RDMA_Write", "lat"),
            "ib_send_lat": ("Send", "lat")}


def perftest(tool: str) -> Callable[[Sim, Node, list[str], float], Result]:
    def run_tool(sim: Sim, node: Node, args: list[str], t: float) -> Result:
        test, kind = PERFTEST[tool]
        options = parse_options(args, _PERFTEST_FLAGS)
        server_side = not args or args[-1].startswith("-") or args[-1] in options.values()
        device = options.get("-d") or node.nics[0].name
        nic = nic_by(node, device)
        if nic is None:
            return "", f" Couldn't find IB device {device}\n", 1
        peer = None if server_side else args[-1]
        if peer is not None and peer not in sim.graph.nodes:
            return "", f" Couldn't connect to {peer}:18515\n", 1
        gbits = "--report_gbits" in args
        size = int(options.get("-s", "65536"))
        lines = []
        if server_side:
            lines += ["", "************************************",
                      "* Waiting for client to connect... *",
                      "************************************"]
        lines += ["-" * 87, f"                    {test} {'BW' if kind == 'bw' else 'Latency'} "
                  "Test",
                  f" Dual-port       : OFF\t\tDevice         : {nic.name}",
                  " Number of qps   : 1\t\tTransport type : IB",
                  " Connection type : RC\t\tUsing SRQ      : OFF",
                  " PCIe relax order: ON", " ibv_wr* API     : ON",
                  f" {'RX' if server_side else 'TX'} depth        : "
                  f"{512 if server_side else 128}",
                  " CQ Moderation   : 1", " Mtu             : 4096[B]",
                  " Link type       : Ethernet", f" GID index       : {options.get('-x', '3')}",
                  " Max inline data : 0[B]", " rdma_cm QPs\t : OFF",
                  " Data ex. method : Ethernet", "-" * 87]
        lines += _addresses(sim, node, nic, peer, test)
        if kind == "bw":
            unit = "Gb/sec" if gbits else "MB/sec"
            lines.append(f" #bytes     #iterations    BW peak[{unit}]    BW average[{unit}]"
                         "   MsgRate[Mpps]")
            rate = pair_rate(sim, node, nic, peer, t, args)
            value = rate if gbits else rate * 1000 / 8
            peak = 0.0 if server_side else value * 1.01
            msg_rate = value / size / (8 / 1e9 if gbits else 1 / 1e6) / 1e6 if size else 0.0
            lines.append(f" {size:<10d} {int(options.get('-n', '5000')):<10d}       "
                         f"{peak:.2f}            {value:.2f}\t\t   {msg_rate:.6f}")
        else:
            lines.append(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]"
                         "    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   "
                         "99.9% percentile[usec] ")
            base = 2.6 + 0.3 * sim.noise("lat", node.hostname, nic.name)
            lines.append(f" {size:<6d} {int(options.get('-n', '1000')):<10d}    "
                         f"{base - 0.3:.2f}           {base + 4.1:.2f}         {base:.2f}"
                         f"              {base + 0.04:.2f}           {0.05:.2f}            "
                         f"{base + 0.4:.2f}                   {base + 2.7:.2f}")
        lines.append("-" * 87)
        return "\n".join(lines) + "\n", "", 0

    return run_tool


def _addresses(sim: Sim, node: Node, nic: Nic, peer: str | None, test: str) -> list[str]:
    """The QP each side exchanged, as perftest prints them before the results: on RoCE `LID
    0000` and the GID below (RKey and VAddr for RDMA write/read), then a rule."""
    # The server learns its client only from the exchange: the fabric's first other node.
    far_host = peer if peer is not None else \
        next(h for h in sim.graph.nodes if h != node.hostname)
    far = sim.graph.find_nic(far_host, nic.name) or nic
    lines = []
    for where, host, card in (("local", node.hostname, nic), ("remote", far_host, far)):
        qpn = 0x100 + int(sim.noise("qpn", host, card.name) * 0xF00)
        psn = int(sim.noise("psn", host, card.name) * 0xFFFFFF)
        text = f" {where} address: LID 0000 QPN {qpn:#06x} PSN {psn:#08x}"
        if test in ("RDMA_Write", "RDMA_Read"):
            rkey = int(sim.noise("rkey", host, card.name) * 0xFFFFFF)
            vaddr = 0x7F0000000000 + int(sim.noise("va", host, card.name) * 0xFFFFFFFFFF)
            text += f" RKey {rkey:#08x} VAddr {vaddr:#016x}"
        octets = [int(o) for o in (card.ip or "0.0.0.0").split(".")]
        gid = ":".join(["00"] * 10 + ["255", "255"] + [f"{o:02d}" for o in octets])
        lines += [text, f" GID: {gid}"]
    return [*lines, "-" * 87]


def pair_rate(sim: Sim, node: Node, nic: Nic, peer: str | None, t: float,
              args: list[str]) -> float:
    """Gb/s one QP pair reaches: line rate, less what faults take."""
    attachment = sim.graph.attachments.get((node.hostname, nic.name))
    if attachment is None or not sim.link_up(attachment.link_index, t):
        return 0.0
    # What fabtui.topology.expected calls the RoCE write ceiling at the speed the link trained
    # at (a NIC that came up at 200G moves half), within half a per cent.
    speed = min(nic.speed, sim.link_speed(attachment.link_index))
    rate = sim.rdma_ceiling(speed) * (0.995 + 0.01 * sim.noise("perf", node.hostname,
                                                               nic.name, peer))
    cuda = any(a.startswith("--use_cuda") for a in args)
    for host in (node.hostname, peer):
        if cuda and any(f.host == host for f in sim.active(FaultKind.GDR_OFF, t)):
            rate *= 0.5  # GPU memory through a host bounce buffer (perftest #241)
    for fault in sim.active(FaultKind.PFC_STORM, t):
        # The storming NIC (client side, or the same rail's NIC of the server) holds the flow.
        if fault.nic == nic.name and fault.host in (node.hostname, peer):
            rate *= 0.1
    return rate
