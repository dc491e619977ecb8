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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fabtui.model.element import device_of
from fabtui.topology.graph import FabricGraph

HELD = 0.5
"""A switch-to-switch port held paused at least this share of the window is a wait-for edge
(the catalog's fail limit of pause_share)."""
SOURCE = 0.1
"""A host port that receives pause for this share of the window is a source (warn limit)."""


def _shares(results: Iterable[Mapping[str, Any]]) -> list[tuple[str, str, float]]:
    """(direction, switch:port, share) of every pause_share / pause_time_share metric."""
    found = []
    for result in results:
        for metric in result.get("metrics") or []:
            name, value = str(metric.get("name", "")), metric.get("value")
            if not name.startswith(("pause_share.", "pause_time_share.")) or \
                    not isinstance(value, int | float):
                continue
            direction = name.split(".")[1]
            found.append((direction, str(metric.get("component", "")), float(value)))
    return found


def pause_origin(results: Iterable[Mapping[str, Any]],
                 graph: FabricGraph) -> dict[str, Any] | None:
    """`{kind: "pfc-storm", sources}` when host ports receive pause, `{kind: "pfc-deadlock",
    loop, ports}` when pause holds a loop of switches and no host is a source, None when
    neither (little pause, or switch-to-switch pause that forms no loop)."""
    sources: list[str] = []
    waits: dict[str, set[str]] = {}
    ports: dict[tuple[str, str], str] = {}
    for direction, component, share in _shares(results):
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
    if sources:
        return {"kind": "pfc-storm", "sources": sorted(set(sources))}
    loop = _cycle(waits)
    if loop is None:
        return None
    hops = list(zip(loop, [*loop[1:], loop[0]], strict=True))
    return {"kind": "pfc-deadlock", "loop": loop,
            "ports": [ports[hop] for hop in hops if hop in ports]}


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
