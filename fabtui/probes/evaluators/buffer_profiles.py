"""Lossless PFC headroom against the cables: does the xoff of the switch's lossless profile hold
what is in flight over each port's cable after XOFF?

For every cabled port of the target switch whose cable length the topology gives
(`Link.length_m`), the xoff a lossless PG needs at the port's speed and length
(`fabtui.topology.headroom.xoff_needed`, SONiC's dynamic headroom formula) is compared with the
largest xoff among the switch's lossless profiles for that speed
(`pg_lossless_<speed>_<len>m_profile`, or any profile with an xoff in an ingress lossless pool
when none is named for the speed).
`headroom_margin` is that xoff minus the need, in bytes: below zero fails (no profile the
switch has can hold the cable's in-flight data, so lossless packets are dropped while PFC
fires). The profile a port actually uses (BUFFER_PG) is not read: a port left on a smaller
profile than the largest is not caught [not covered]. Ports with no length are not judged.
"""

from __future__ import annotations

import re
from typing import Any

from fabtui.model.element import split_key
from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext, evaluator
from fabtui.topology.headroom import xoff_needed

SOURCE = ("xoff needed = SONiC dynamic headroom (sonic-swss buffer_headroom_mellanox.lua: 2 x "
          "cable x speed / 1.98e8 m/s + MTU + peer response + MAC/PHY, x cell occupancy)")
_NAMED = re.compile(r"^(?:.*/)?pg_lossless_(?P<speed>\d+)_(?P<length>\d+)m_profile$")


def _lossless_xoff(parsed: Any) -> tuple[dict[int, int], int | None]:
    """(largest xoff per speed in Gb/s from named profiles, largest xoff of any lossless
    profile)."""
    named: dict[int, int] = {}
    anyone: int | None = None
    for name, entry in parsed.profiles.items():
        xoff = entry.fields.get("xoff")
        if not isinstance(xoff, int) or "lossless" not in str(entry.fields.get("pool", "")):
            continue
        anyone = max(anyone or 0, xoff)
        match = _NAMED.match(name)
        if match:
            speed = int(match.group("speed")) // 1000
            named[speed] = max(named.get(speed, 0), xoff)
    return named, anyone


@evaluator("buffer-profiles")
def buffer_profiles(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Per cabled port with a known length: `headroom_margin` (bytes, fails below 0) and the
    `headroom_xoff_needed`; per lossless profile its `headroom_xoff`, reported."""
    metrics = [Metric(name="headroom_xoff", value=entry.fields["xoff"], unit="B",
                      component=ctx.component(name), source="mmuconfig -l")
               for name, entry in after.profiles.items()
               if isinstance(entry.fields.get("xoff"), int)]
    switch, graph = ctx.target.switch, ctx.graph
    if switch is None or graph is None:
        return metrics
    named, anyone = _lossless_xoff(after)
    for index, link in enumerate(graph.topology.links):
        if link.length_m is None:
            continue
        for end in (link.a, link.b):
            device, port = split_key(end)
            if device != switch.name:
                continue
            speed = graph.link_speed(index)
            have = named.get(speed, anyone)
            if have is None:
                continue
            need = xoff_needed(speed, link.length_m)
            where = f"{device}:{port}"
            metrics.append(Metric(name="headroom_xoff_needed", value=need, unit="B",
                                  component=where, source=f"{link.length_m:g} m at {speed}G; "
                                  + SOURCE))
            margin = have - need
            metrics.append(Metric(
                name="headroom_margin", value=margin, unit="B", component=where, limit=0,
                verdict=Verdict.FAIL if margin < 0 else Verdict.OK,
                source=f"largest lossless xoff {have} B for {speed}G against {need} B for "
                       f"{link.length_m:g} m of cable; " + SOURCE))
    return metrics
