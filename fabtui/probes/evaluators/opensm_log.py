"""The subnet manager's log: handovers, sweeps and traps.

One OpenSM is master of a healthy subnet: it logs `Entering MASTER state` once when it starts,
a heavy sweep then, and light sweeps after (not logged). Every `Entering STANDBY state` is a
lost mastership: another SM with a higher priority (or the same priority and a lower GUID)
took over (OpenSM man page, "SM priority"; IBTA SM state machine); two SMs that keep taking it
from each other re-sweep the whole subnet and rewrite every port's SM LID each time. Trap 128
(link state change) is a port going down or up; 129/130/131 are local link integrity, buffer
overrun and flow-control watchdog thresholds crossed (IBTA traps; OpenSM `ib_get_trap_str`).

Verdicts over the log read: a lost mastership warns, three or more fail [inference: one
handover is a failover, three in the window are two SMs fighting]; any trap 129-131 warns;
traps 128 are counted (the link-flap rules judge flaps, fabric-diagnostics 6.2).
"""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext, evaluator

_HANDOVER = "OpenSM man page (SM priority, master election); 3 in the log [inference]"


@evaluator("opensm-log")
def opensm_log(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Handovers, heavy sweeps, SUBNET UP and traps in the log read."""
    where = ctx.component()
    lost = after.standbys
    verdict = Verdict.FAIL if lost >= 3 else Verdict.WARN if lost else Verdict.OK
    metrics = [
        Metric(name="sm.lost_mastership", value=lost, component=where, verdict=verdict,
               source=_HANDOVER),
        Metric(name="sm.became_master", value=after.masters, component=where),
        Metric(name="heavy_sweeps", value=after.heavy_sweeps, component=where),
        Metric(name="subnet_up", value=after.subnet_ups, component=where),
    ]
    for number, count in sorted(after.traps.items()):
        serious = number in ("129", "130", "131")
        metrics.append(Metric(name=f"trap.{number}", value=count, component=where,
                              verdict=Verdict.WARN if serious and count else Verdict.OK,
                              source="IBTA traps 129-131 (link integrity, buffer overrun, "
                                     "flow-control watchdog)" if serious else None))
    downs = [e for e in after.events if e.type == "port_state" and e.new_state == "DOWN"]
    for event in downs:
        metrics.append(Metric(name="port_down", value=event.stamp,
                              component=f"{event.node}:{event.port}"))
    return metrics
