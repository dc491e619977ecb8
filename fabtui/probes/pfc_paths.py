"""Where pause comes from, judged over several switches' PFC readings: a storm or a deadlock.

A host port that receives pause has a source at the edge: a NIC pausing the fabric (a PFC
storm when it does not stop, fabric-diagnostics 4.1). Pause that holds switch-to-switch ports
while no host port receives any has no source at the edge: it circulates, each switch waiting
on the next around a loop (a PFC deadlock: a cyclic buffer dependency, Hu et al., "Deadlocks
in Datacenter Networks: Why Do They Form, and How to Avoid Them", HotNets 2016). pfcwd breaks
it by dropping, so the loop has to be found and routed around, not one host shut.

Wait-for edges come from both directions of each reading: a switch port that receives pause
waits on the far switch; a port that sends pause makes the far switch wait on this one. So a
sweep of the leaves alone closes a loop through spines that cannot be read.

A loop of held ports is not yet a deadlock: heavy congestion spreading both ways through the
spines (incast) holds the same ports paused while the traffic still drains. A deadlock is a
cyclic buffer dependency that stops draining, so the loop is named a deadlock only when the
lossless queue of every waiting port read made no transmit progress (`switch.queues`: its
bytes sent per second under 1 % of the port's line rate [inference]) and the PFC watchdog
stormed it (`switch.pfcwd`). Without those readings the loop is reported as a `pause-loop`
that the evidence cannot tell from congestion.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fabtui.model.element import device_of
from fabtui.topology.graph import FabricGraph

STALLED = 0.01
"""A lossless queue sending less than this share of its port's line rate made no transmit
progress [inference: a deadlocked queue sends nothing; the margin covers counter timing]."""
HELD = 0.5
"""A switch-to-switch port held paused at least this share of the window is a wait-for edge
(the catalog's fail limit of pause_share)."""
SOURCE = 0.1
"""A host port that receives pause for this share of the window is a source (warn limit)."""


def _values(results: Iterable[Mapping[str, Any]], name: str) -> dict[str, float]:
    """component -> value of every metric `name` (numbers only) in `results`."""
    found: dict[str, float] = {}
    for result in results:
        for metric in result.get("metrics") or []:
            value = metric.get("value")
            if metric.get("name") == name and isinstance(value, int | float) and \
                    not isinstance(value, bool):
                found[str(metric.get("component", ""))] = float(value)
    return found


def _shares_named(results: Iterable[Mapping[str, Any]]
                  ) -> list[tuple[str, str, float, str]]:
    """(direction, switch:port, share, metric name) of every pause_share / pause_time_share
    metric."""
    found = []
    for result in results:
        for metric in result.get("metrics") or []:
            name, value = str(metric.get("name", "")), metric.get("value")
            if not name.startswith(("pause_share.", "pause_time_share.")) or \
                    not isinstance(value, int | float):
                continue
            direction = name.split(".")[1]
            found.append((direction, str(metric.get("component", "")), float(value), name))
    return found


def pause_origin(results: Iterable[Mapping[str, Any]],
                 graph: FabricGraph) -> dict[str, Any] | None:
    """`{kind: "pfc-storm", sources}` when host ports receive pause; when pause holds a loop of
    switches and no host is a source, `{kind, loop, ports, waiting, stalled, flowing, stormed,
    why}` with kind `pfc-deadlock` (every waiting port read made no transmit progress on its
    lossless queue and pfcwd stormed it) or `pause-loop` (it still transmits, or the readings
    cannot tell); None when neither (little pause, or switch-to-switch pause with no loop).
    `results` may mix `switch.pfc` / `switch.pfc_history`, `switch.queues` and `switch.pfcwd`
    results."""
    results = list(results)
    sources: list[str] = []
    waits: dict[str, set[str]] = {}
    ports: dict[tuple[str, str], str] = {}
    waiting: dict[tuple[str, str], str] = {}
    priority: dict[str, str] = {}
    for direction, component, share, name in _shares_named(results):
        far = graph.far_end(component)
        if far is None:
            continue
        here, there = device_of(component), device_of(far)
        if there in graph.nodes:
            if direction == "rx" and share >= SOURCE:
                sources.append(far)
            continue
        if share < HELD:
            continue
        waiter, holder = (here, there) if direction == "rx" else (there, here)
        waits.setdefault(waiter, set()).add(holder)
        ports.setdefault((waiter, holder), component)
        if direction == "rx":  # this port's own egress is the paused one
            waiting.setdefault((waiter, holder), component)
            priority.setdefault(component, name.rsplit("PFC", 1)[-1])
    if sources:
        return {"kind": "pfc-storm", "sources": sorted(set(sources))}
    loop = _cycle(waits)
    if loop is None:
        return None
    hops = list(zip(loop, [*loop[1:], loop[0]], strict=True))
    held = [ports[hop] for hop in hops if hop in ports]
    return {"loop": loop, "ports": held,
            **_progress([waiting[hop] for hop in hops if hop in waiting], priority, results,
                        graph)}


def _progress(waiting: list[str], priority: Mapping[str, str],
              results: list[Mapping[str, Any]], graph: FabricGraph) -> dict[str, Any]:
    """Is the loop a deadlock? Transmit progress and pfcwd state of its waiting ports."""
    sent = _values(results, "rate.bytes")
    stormed_now = _values(results, "stormed")
    stalled: list[str] = []
    flowing: list[str] = []
    unread: list[str] = []
    stormed: list[str] = []
    calm: list[str] = []
    for port in waiting:
        queue = priority.get(port, "3")
        rate = sent.get(f"{port}/UC{queue}")
        link = graph.link_at(port)
        speed = graph.link_speed(link) if link is not None else None
        if rate is None or not speed:
            unread.append(port)
        elif rate * 8 < STALLED * speed * 1e9:
            stalled.append(port)
        else:
            flowing.append(port)
        state = stormed_now.get(f"{port}/q{queue}")
        if state is None:
            unread.append(port)
        else:
            (stormed if state else calm).append(port)
    if flowing:
        kind, why = "pause-loop", (f"{', '.join(flowing)} still transmit on the lossless "
                                   "queue: congestion spreading through the loop, not a "
                                   "deadlock")
    elif waiting and not unread and not calm:
        kind, why = "pfc-deadlock", (f"the waiting ports made no transmit progress "
                                     f"({', '.join(stalled)}) and pfcwd stormed them")
    elif calm:
        kind, why = "pause-loop", (f"{', '.join(stalled)} made no transmit progress but pfcwd "
                                   f"did not storm {', '.join(calm)} (is pfcwd on?): "
                                   "a deadlock is not confirmed")
    else:
        kind, why = "pause-loop", ("transmit progress and pfcwd of the waiting ports were not "
                                   "read: pause shares alone cannot tell a deadlock from "
                                   "congestion spreading")
    return {"kind": kind, "waiting": waiting, "stalled": stalled, "flowing": flowing,
            "stormed": stormed, "why": why}


def _cycle(waits: Mapping[str, set[str]]) -> list[str] | None:
    """One loop of the wait-for graph, starting at its smallest name, or None."""
    for start in sorted(waits):
        path, seen = [start], {start}
        stack = [iter(sorted(waits.get(start, ())))]
        while stack:
            step = next(stack[-1], None)
            if step is None:
                stack.pop()
                seen.discard(path.pop())
                continue
            if step == start:
                return path
            if step not in seen and step > start:
                path.append(step)
                seen.add(step)
                stack.append(iter(sorted(waits.get(step, ()))))
    return None
