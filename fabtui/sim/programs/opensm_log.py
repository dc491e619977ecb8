"""The subnet manager on a simulated IB fabric: `/var/log/opensm.log` on the SM's node and
`sminfo` on any node.

The log lines are OpenSM's own (`osm_log` layout: `Mon DD HH:MM:SS usec [thread] 0xLEVEL ->
function: message`, as a real OpenSM writes them on an ibsim fabric, tests/fixtures/
opensm-log/SOURCES.md): the start (`Entering MASTER state`, the first heavy sweep, `SUBNET
UP`); for every link that goes down or comes back, the trap 128 (Link state change) the
switch sends, the heavy sweep it starts, the port state change and `SUBNET UP` again; for a
planted `sm-flap`, each handover (`Entering STANDBY state` on the old master, `Entering
MASTER state` and a heavy sweep on the new one, every port's SM LID rewritten). Symbol
errors above the port's threshold come as trap 129 (local link integrity).

`sminfo` prints infiniband-diags' one line (`sminfo: sm lid L sm guid 0x..., activity count
N priority P state 3 SMINFO_MASTER`).
"""

from __future__ import annotations

import time

from fabtui.model.element import device_of
from fabtui.model.topology import Node
from fabtui.sim import ib
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result, nic_guid

_STARS = "*" * 66


def sminfo(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    """`sminfo`: the master SM as the local port sees it."""
    if not ib.is_ib(sim):
        return "", ("ibwarn: [0] mad_rpc_open_port: client_register for mgmt 1 failed\n"
                    "sminfo: iberror: failed: Failed to open '(null)' port '0'\n"), 255
    state = ib.sm_state(sim, t)
    guid = nic_guid(sim, state.master_host, sim.graph.nodes[state.master_host].nics[0].name)
    return (f"sminfo: sm lid {state.master_lid} sm guid {guid}, activity count "
            f"{state.activity} priority {state.priority} state 3 SMINFO_MASTER\n"), "", 0


def opensm_log(sim: Sim, node: Node, t: float) -> str | None:
    """The OpenSM log of `node` up to `t` (None: no SM runs there)."""
    if not ib.is_ib(sim) or node.hostname not in ib.SM_HOSTS:
        return None
    events: list[tuple[float, list[str]]] = []
    first = node.hostname == ib.SM_HOSTS[0]
    if first:
        events.append((0.0, _heavy_sweep("Entering MASTER state", start=True)))
    flips = ib.sm_flap_times(sim, t)
    for k, at in enumerate(flips):
        becomes_master = (k % 2 == 0) != first
        if becomes_master:
            events.append((at, ["0x02 -> osm_sm_state_mgr_process: Entering MASTER state",
                                *_heavy_sweep("", start=False)]))
        else:
            events.append((at, ["0x02 -> osm_sm_state_mgr_process: Entering STANDBY state"]))
    master_at = _master_windows(flips, first, t)
    for link, cable in enumerate(sim.topology.links):
        a, b = cable.a, cable.b
        switch_end = b if device_of(b) in sim.graph.switches else a
        switch, port = device_of(switch_end), switch_end.split(":", 1)[1]
        lid = ib.switch_lid(sim, switch)
        number = ib.port_number(port)
        guid = ib.switch_guid(sim, switch)
        for start, end in sim.down_windows(link):
            for at, new, old in ((start, "DOWN", "ACTIVE"), (end, "ACTIVE", "DOWN")):
                if at > t or not _in(master_at, at):
                    continue
                events.append((at, [
                    f"0x01 -> log_trap_info: Received Generic Notice type:1 num:128 (Link "
                    f"state change) Producer:2 (Switch) from LID:{lid} TID:0x"
                    f"{int(at * 1000) & 0xFFFFFFFF:016x}",
                    *_heavy_sweep(f"Switch {guid} {switch} port {number} changed state "
                                  f"from {old} to {new}", start=False, pi=True)]))
    lines: list[str] = []
    for at, block in sorted(events, key=lambda e: e[0]):
        stamp = _stamp(sim, at)
        for k, line in enumerate(block):
            if not line or line.startswith("*"):
                lines.append(line)
                continue
            lines.append(f"{stamp} {int(at * 1e6 + k * 311) % 1000000:06d} [5E8006C0] {line}")
    return "\n".join(lines) + "\n"


def _heavy_sweep(first: str, *, start: bool, pi: bool = False) -> list[str]:
    """A heavy sweep as OpenSM logs it, ending in `SUBNET UP`."""
    lines = [f"0x02 -> osm_sm_state_mgr_process: {first}"] if first and not pi else []
    lines += ["0x02 -> do_sweep:", "", "", _STARS,
              "*********************** HEAVY SWEEP START ************************", _STARS,
              "", "",
              f"0x02 -> do_sweep: Entering heavy sweep with flags: force_heavy_sweep "
              f"{0 if start else 1}, coming out of standby 0, subnet initialization error 0, "
              "sm port change 0"]
    if pi:
        lines.append(f"0x02 -> osm_pi_rcv_process: {first}")
    lines.append("0x02 -> SUBNET UP")
    return lines


def _master_windows(flips: list[float], first: bool, t: float) -> list[tuple[float, float]]:
    """When this SM was master (it logs the traps only then)."""
    windows, master, since = [], first, 0.0
    for at in flips:
        if master:
            windows.append((since, at))
        master, since = not master, at
    if master:
        windows.append((since, t + 1))
    return windows


def _in(windows: list[tuple[float, float]], at: float) -> bool:
    return any(a <= at < b for a, b in windows)


def _stamp(sim: Sim, at: float) -> str:
    """`Jun 17 17:21:28` in the SM's clock (the simulation's wall clock)."""
    return time.strftime("%b %d %H:%M:%S", time.gmtime(sim.epoch + at))
