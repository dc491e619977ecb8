"""`ibdiagnet` (ibutils2) on a simulated IB node: the fabric sweep's standard output.

The layout is the real ibdiagnet 2.x one (tests/fixtures/ibdiagnet: a 2.7.0 run): a stage per
check, `-I-`/`-W-`/`-E-` lines, the `Fabric Summary` (node counts, links per speed, the master
SM) and the `Summary` table of warnings and errors per stage. The port counters are sampled
twice, `--pm_pause_time` seconds apart (default 1, as ibdiagnet's); a port whose symbol errors,
link downs or receive errors grew in between is an error in the `Port Counters` stage, named
as ibdiagnet names ports (`S<system GUID>/N<node GUID>/P<port>`) with the message ibdiagnet2
writes (`"symbol_error_counter" increased during the run (difference value=27,difference
allowed threshold=1)`). Links that are down are not discovered, as on a real fabric.
"""

from __future__ import annotations

from fabtui.model.element import device_of
from fabtui.model.topology import Node
from fabtui.sim import ib
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result, nic_guid

_RULE = "-" * 45
_CHECKED = (("SymbolErrorCounter", "symbol_error_counter"),
            ("LinkDownedCounter", "link_down_counter"),
            ("PortRcvErrors", "port_rcv_errors"))
_STAGES = ("Discovery", "Lids Check", "Links Check", "Subnet Manager", "Port Counters",
           "Nodes Information", "Speed / Width checks", "Virtualization", "Partition Keys",
           "Temperature Sensing", "Create IBNetDiscover File")


def ibdiagnet(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    """One ibdiagnet run from `node` at `t` (its counters sampled at t - pause and t)."""
    if not ib.is_ib(sim):
        return "", ("-E- Failed to find local port\n-E- Failed to set port data for "
                    "port 0\n"), 1
    pause = 1.0
    if "--pm_pause_time" in args and args.index("--pm_pause_time") + 1 < len(args):
        try:
            pause = max(1.0, float(args[args.index("--pm_pause_time") + 1]))
        except ValueError:
            return "", "-E- Invalid value for --pm_pause_time\n", 1
    ends: list[tuple[str, str]] = []
    links_up = 0
    for link, cable in enumerate(sim.topology.links):
        a, b = cable.a, cable.b
        if sim.link_up(link, t):
            links_up += 1
            ends += [(device_of(a), a.split(":", 1)[1]), (device_of(b), b.split(":", 1)[1])]
    switches = len(sim.topology.switches)
    cas = len({(d, p) for d, p in ends if d not in sim.graph.switches})
    nodes = switches + cas
    errors: list[str] = []
    for device, port in ends:
        before = ib.pma_counters(sim, device, port, max(t - pause, 0.0))
        after = ib.pma_counters(sim, device, port, t)
        if before is None or after is None:
            continue
        for counter, name in _CHECKED:
            grew = after[counter] - before[counter]
            if grew >= 1:
                errors.append(f'-E- {_port_name(sim, device, port)} - "{name}" increased during '
                              f"the run (difference value={grew},difference allowed "
                              "threshold=1)")
    done = f"{nodes}/{nodes} nodes ({switches}/{switches} Switches & {cas}/{cas} CA-s)"
    out = ['Running version: "IBDIAGNET 2.13.0.MLNX20240215.1ac5e5f","IBDIAG 2.1.1.1ac5e5f",'
           '"IBDM 2.1.1.1ac5e5f","IBIS 7.0.0.1ac5e5f"',
           f"Running command: ibdiagnet {' '.join(args)}".rstrip(),
           "Timestamp: " + _stamp(sim, t), "----------", "",
           _RULE, "Discovery",
           f"-I- Discovering ... {nodes} nodes ({switches} Switches & {cas} CA-s) discovered.",
           f"-I- Retrieving ... {done} retrieved.", "-I- NodeDesc finished successfully",
           "-I- Fabric Discover finished successfully", "",
           f"-I- Discovered {nodes} nodes ({switches} Switches & {cas} CA-s).", "",
           "-I- Duplicated GUIDs detection finished successfully", "",
           _RULE, "Lids Check", "-I- Lids Check finished successfully", "",
           _RULE, "Links Check", "-I- Links Check finished successfully", "",
           _RULE, "Subnet Manager", "-I- SM Info retrieving finished successfully", "",
           "-I- Subnet Manager Check finished successfully", "",
           _RULE, "Port Counters",
           f"-I- Retrieving ... {done} retrieved.",
           "-I- Ports counters retrieving finished successfully", "",
           f"-I- Going to sleep for {int(pause)} seconds until next counters sample",
           f"-I- Time left to sleep ... {int(pause)} seconds.", "",
           f"-I- Retrieving ... {done} retrieved.",
           "-I- Ports counters retrieving (second time) finished successfully", "",
           "-I- Ports counters value Check finished successfully", ""]
    if errors:
        out += ["-E- Ports counters Difference Check (during run) finished with errors",
                *errors, ""]
    else:
        out += ["-I- Ports counters Difference Check (during run) finished successfully", ""]
    for stage in ("Nodes Information", "Speed / Width checks", "Partition Keys",
                  "Temperature Sensing"):
        out += [_RULE, stage, f"-I- {stage} finished successfully", ""]
    out += [_RULE, "Create IBNetDiscover File",
            "-I- Writing of IBNetdDscover file finished successfully", ""]
    state = ib.sm_state(sim, t)
    master_nic = sim.graph.nodes[state.master_host].nics[0].name
    standby = ib.SM_HOSTS[1] if state.master_host == ib.SM_HOSTS[0] else ib.SM_HOSTS[0]
    standby_nic = sim.graph.nodes[standby].nics[0].name
    out += [_RULE, "Fabric Summary", "",
            f"Total Nodes             : {nodes}", f"IB Switches             : {switches}",
            f"IB Channel Adapters     : {cas}", "IB Aggregation Nodes    : 0",
            "IB Routers              : 0", "",
            f"Total number of links   : {links_up}", f"Links at 4x100          : {links_up}", "",
            _sm_line("Master SM", sim, state.master_host, master_nic, state.priority),
            _sm_line("Standby SM", sim, standby, standby_nic,
                     ib.SM_PRIORITY[ib.SM_HOSTS.index(standby)]), "",
            _RULE, "Summary", "-I- Stage                               Warnings   Errors     "
            "Comment"]
    for stage in _STAGES:
        count = len(errors) if stage == "Port Counters" else 0
        out.append(f"-I- {stage:<36}0          {count}")
    out += ["", "-I- You can find detailed errors/warnings in: /var/tmp/ibdiagnet2/"
            "ibdiagnet2.log", ""]
    return "\n".join(out) + "\n", "", 0


def _port_name(sim: Sim, device: str, port: str) -> str:
    if device in sim.graph.switches:
        guid = ib.switch_guid(sim, device)[2:]
        return f"S{guid}/N{guid}/P{ib.port_number(port)}"
    guid = nic_guid(sim, device, port)[2:]
    return f"S{guid}/N{guid}/P1"


def _sm_line(label: str, sim: Sim, host: str, nic: str, priority: int) -> str:
    return (f"{label}: Port=1 LID={ib.hca_lid(sim, host, nic)} GUID={nic_guid(sim, host, nic)} "
            f"devid=4129 Priority:{priority} Node_Type=CA Node_Description={host} {nic}")


def _stamp(sim: Sim, t: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S UTC +0000", time.gmtime(sim.epoch + t))
