"""Switch-side congestion evidence: did the lossless queues mark ECN while the switch paused?

DCQCN (RoCE congestion control) relies on the switch marking ECN on a lossless queue before
its ingress priority group fills to XOFF and PFC pauses the sender: the NIC that receives a
marked packet returns a CNP and the sender slows down. So, per switch, over one probe window:

- ECN-marked packets on its lossless queues growing (`switch.ecn`, SONiC `show queue
  wredcounters`) while it pauses its neighbours (`switch.pfc`, tx pause share) is DCQCN
  working: marks and pause together under heavy congestion;
- the switch pausing (tx pause share at or above the catalog's warn limit, 0.1 of the window)
  with **no** mark on any lossless queue: the queues built to XOFF without marking, so ECN is
  off on that queue or its WRED minimum sits above the point where the PG pauses (runbook
  roce-qos-audit: `show ecn`, the rule "ECN marks before PFC pauses");
- marks without pause: ECN handles the congestion; neither: quiet;
- no ECN-marked counter read (the platform prints `N/A`, or the probe was not run): cannot tell.

Sources: SONiC "ECN and WRED statistics" HLD (`show queue wredcounters`, EcnMarked/pkts per
queue); Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015
(DCQCN: the switch marks ECN below the PFC threshold so that PFC is a last resort, Kmin <
XOFF). The reading of "pause without marks" as ECN off or misplaced is our inference from that
design. Pure: reads probe results as dicts, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fabtui.model.element import device_of

LOSSLESS_QUEUES = ("UC3", "UC4")
"""The lossless queues (SONiC's default lossless priorities 3 and 4, roce-qos.toml)."""
PAUSED = 0.1
"""A port that sends pause this share of the window built its queues to XOFF (the catalog's
warn limit of pause_share)."""


def ecn_evidence(results: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """`{kind, verdict, marked, paused, max_pause, why}` over `switch.ecn` and `switch.pfc`
    results (dicts). kind: `ecn-off` (fail: pause without marks), `dcqcn-working` (marks and
    pause), `ecn-marking` (marks, no pause), `quiet`, or `cannot-tell` (no ECN counter read
    while the switch paused: warn). `marked` is ECN-marked packets per switch on its lossless
    queues over the window, `paused` the ports that sent pause per switch."""
    marked: dict[str, int] = {}
    counted: set[str] = set()
    paused: dict[str, list[str]] = {}
    max_pause = 0.0
    for result in results:
        for metric in result.get("metrics") or []:
            name, value = str(metric.get("name", "")), metric.get("value")
            component = str(metric.get("component", ""))
            if not isinstance(value, int | float):
                continue
            switch = device_of(component)
            if name == "delta.ecnmarked_pkts":
                if component.rsplit("/", 1)[-1] in LOSSLESS_QUEUES:
                    counted.add(switch)
                    marked[switch] = marked.get(switch, 0) + max(int(value), 0)
            elif name.startswith(("pause_share.tx.PFC3", "pause_share.tx.PFC4")) and \
                    value >= PAUSED:
                port = component
                if port not in paused.setdefault(switch, []):
                    paused[switch].append(port)
                max_pause = max(max_pause, float(value))
    held = sorted(paused)
    silent = [s for s in held if s in counted and marked.get(s, 0) == 0]
    unread = [s for s in held if s not in counted]
    pct = round(100 * max_pause)
    if silent:
        kind, verdict = "ecn-off", "fail"
        why = (f"{', '.join(silent)} paused its neighbours up to {pct} % of the window with no "
               f"ECN mark on its lossless queues: the queues built to XOFF without marking, "
               f"so ECN is off there or its WRED minimum sits above the pause point "
               f"(show ecn; runbook roce-qos-audit)")
    elif unread:
        kind, verdict = "cannot-tell", "warn"
        why = (f"{', '.join(unread)} paused its neighbours up to {pct} % of the window; its ECN "
               f"marks were not read (no EcnMarked counter): cannot tell whether DCQCN marks")
    elif held:
        kind, verdict = "dcqcn-working", "ok"
        why = (f"{', '.join(held)} marked {sum(marked.get(s, 0) for s in held)} packets on its "
               f"lossless queues while pausing up to {pct} % of the window: ECN marks and PFC "
               f"together, DCQCN at work under heavy congestion")
    elif any(marked.values()):
        kind, verdict = "ecn-marking", "ok"
        why = (f"ECN marks on the lossless queues ({sum(marked.values())} packets) and no pause "
               f"to speak of: DCQCN handles the congestion")
    else:
        kind, verdict = "quiet", "ok"
        why = "no ECN mark and no pause on the lossless queues"
    return {"kind": kind, "verdict": verdict, "marked": marked, "paused": paused,
            "max_pause": round(max_pause, 4), "why": why}
