"""The syslog of a simulated SONiC switch: `show logging [PROCESS]`.

Each down window of a cabled port's link (the same windows the nodes' kernel logs print, so
both ends of a cable tell the same story to the second) becomes the two lines SONiC's
orchagent writes when a port's operational state changes, in the syslog layout
(`Mmm dd HH:MM:SS.ffffff HOST LEVEL swss#orchagent: :- updatePortOperStatus: Port PORT oper
state set from up to down`, sonic-swss `orchagent/portsorch.cpp`).
"""

from __future__ import annotations

import time

from fabtui.model.topology import Switch
from fabtui.sim.core import Sim


def _stamp(sim: Sim, t: float) -> str:
    wall = time.gmtime(sim.epoch + t)
    micro = int((sim.epoch + t) % 1 * 1e6)
    return f"{time.strftime('%b', wall)} {wall.tm_mday:2d} " \
           f"{time.strftime('%H:%M:%S', wall)}.{micro:06d}"


def syslog(sim: Sim, switch: Switch, ports: list[str], t: float) -> str:
    """Port oper-state changes on `switch` up to `t`, oldest first."""
    events: list[tuple[float, str]] = []
    for port in ports:
        link = sim.graph.port_links.get(f"{switch.name}:{port}")
        if link is None:
            continue
        for start, end in sim.down_windows(link):
            if start <= t:
                events.append((start, f"Port {port} oper state set from up to down"))
            if end <= t:
                events.append((end, f"Port {port} oper state set from down to up"))
    events.sort()
    return "".join(f"{_stamp(sim, at)} {switch.name} NOTICE swss#orchagent: :- "
                   f"updatePortOperStatus: {message}\n" for at, message in events)


def reply(sim: Sim, switch: Switch, words: list[str], t: float,
          ports: list[str]) -> tuple[str, bool] | None:
    """`show logging` / `show logging orchagent` on SONiC (None: another command)."""
    if words[:1] == ["sudo"]:
        words = words[1:]
    if words[:2] != ["show", "logging"]:
        return None
    rest = [w for w in words[2:] if w not in ("-l", "--lines") and not w.isdigit()]
    if rest and rest[0] not in ("orchagent", "swss"):
        return "", False
    return syslog(sim, switch, ports, t), False
