"""Configuration intent joined to the workspace's fabric: render a scenario for the configured
topology's devices, read what the devices run through the probes and compare it with the
intent (drift), the selection database (the fleet check) or a recorded baseline
(`Workspace.render_configs`, `drift`, `fleet_check`, `record_baseline`, `since_baseline` are the
doors). Runs read-only probes; writes only the baseline store (`record_baseline`)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from fabtui.errors import RequestError

if TYPE_CHECKING:
    from fabtui.intent.baseline import Baseline, Change, Judgement
    from fabtui.intent.drift import DriftReport
    from fabtui.intent.render import Rendered
    from fabtui.intent.selection import FleetReport
    from fabtui.model.probe import ProbeDef, ProbeResult
    from fabtui.probes.targets import ProbeTarget
    from fabtui.topology.graph import FabricGraph


class ProbeSweeper(Protocol):
    """What these functions use of `fabtui.workspace.core.Workspace` (named here, not
    imported: the workspace imports this module)."""

    def probe(self, name: str) -> ProbeDef: ...

    def sweep_targets(self, name: str, target: str | None,
                      topology: Path | None = None) -> list[ProbeTarget] | None: ...

    def sweep(self, name: str, targets: Sequence[ProbeTarget], params: Mapping[str, str],
              topology: Path | None = None, *, limit: int | None = None,
              target_timeout: float | None = None, confirmed: str | None = None,
              named: str | None = None) -> AsyncGenerator[ProbeResult, None]: ...


def render_configs(graph: FabricGraph, scenario: str,
                   devices: list[str] | None = None) -> list[Rendered]:
    """Scenario `scenario` rendered for `devices` (default: every node and switch of `graph`).
    Raises `InputError` (a bad scenario or template) or `RequestError` (an unknown device)."""
    from fabtui.intent.render import render_all
    from fabtui.intent.scenario import load_scenario

    loaded = load_scenario(scenario)
    if devices:
        unknown = [d for d in devices if d not in graph.nodes and d not in graph.switches]
        if unknown:
            raise RequestError(f"--device {', '.join(unknown)}: not a node or switch of "
                               f"{graph.topology.cluster.name}")
    return render_all(loaded, graph, devices or None)


def default_scenario(graph: FabricGraph) -> str:
    """The configuration scenario a fabric is compared with when none is named: the lossless
    RoCE design on a RoCE fabric, the InfiniBand one on InfiniBand."""
    return "infiniband" if str(graph.topology.cluster.fabric) == "infiniband" else \
        "roce-lossless"


def _targets(graph: FabricGraph, devices: list[str], kind: str,
             flavor: str | None = None) -> list[str]:
    if kind == "nic":
        return [f"{d}:{n.name}" for d in devices if d in graph.nodes for n in graph.nodes[d].nics]
    if kind == "node":
        return [d for d in devices if d in graph.nodes]
    return [d for d in devices if d in graph.switches and
            (flavor is None or str(graph.switches[d].flavor) == flavor)]


async def read_running(ws: ProbeSweeper, graph: FabricGraph, devices: list[str],
                       plan: list[tuple[str, str, str | None]],
                       results: list[ProbeResult] | None = None) -> dict[str, dict[str, Any]]:
    """Run each (probe, target kind, switch flavor) of `plan` on its targets among `devices`:
    target -> probe -> the parsed output, or `Unreadable` when it failed. Sweeps one probe at a
    time, each target at most once; each result (its verdict and metrics) is also appended to
    `results` when given."""
    from fabtui.intent.drift import Unreadable

    readings: dict[str, dict[str, Any]] = {}
    for probe, kind, flavor in plan:
        names = _targets(graph, devices, kind, flavor)
        if not names:
            continue
        targets = ws.sweep_targets(probe, ",".join(names)) or []
        if not targets:
            from fabtui.probes.targets import resolve_set

            targets = resolve_set(graph, names[0], ws.probe(probe).target)
        async for result in ws.sweep(probe, targets, {}):
            if results is not None:
                results.append(result)
            slot = readings.setdefault(result.target, {})
            if result.parsed is not None and result.error is None:
                slot[probe] = result.parsed
            else:
                slot[probe] = Unreadable(result.error or "no output parsed")
    return readings


def drift_plan(graph: FabricGraph) -> list[tuple[str, str, str | None]]:
    """What drift reads: every host NIC and host probe, and each switch flavor's."""
    from fabtui.intent.drift import HOST_NIC_PROBES, HOST_PROBES, SWITCH_PROBES

    plan: list[tuple[str, str, str | None]] = [(p, "nic", None) for p in HOST_NIC_PROBES]
    plan += [(p, "node", None) for p in HOST_PROBES]
    plan += [(p, "switch", flavor) for flavor, probes in SWITCH_PROBES.items()
             for p in probes]
    return plan


async def drift(ws: ProbeSweeper, graph: FabricGraph, scenario: str | None,
                devices: list[str] | None) -> DriftReport:
    """The running configuration of `devices` (default: all) against `scenario` (default:
    `default_scenario`): read through the probes, compared by `fabtui.intent.drift`."""
    from fabtui.intent.drift import drift as compare
    from fabtui.intent.scenario import load_scenario

    loaded = load_scenario(scenario or default_scenario(graph))
    chosen = devices or [*graph.nodes, *graph.switches]
    _check_devices(graph, chosen)
    readings = await read_running(ws, graph, chosen, drift_plan(graph))
    return compare(loaded, graph, readings, chosen)


def _check_devices(graph: FabricGraph, devices: list[str]) -> None:
    unknown = [d for d in devices if d not in graph.nodes and d not in graph.switches]
    if unknown:
        raise RequestError(f"{', '.join(unknown)}: not a node or switch of "
                           f"{graph.topology.cluster.name}")


FLEET_PLAN: list[tuple[str, str, str | None]] = [
    ("nic.ibv_devinfo", "nic", None), ("nic.ethtool_info", "nic", None),
    ("nic.mlxlink", "nic", None),
    ("gpu.smi_q", "node", None), ("switch.version", "switch", None),
    ("switch.dom_all", "switch", None)]
"""What the fleet check reads: firmware, driver, the NIC's optic (mlxlink's module), GPU driver
and CUDA, switch OS, the leaves' optics."""


async def fleet_check(ws: ProbeSweeper, graph: FabricGraph,
                      devices: list[str] | None) -> FleetReport:
    """What every node and switch (or `devices`) runs, against the selection database
    (`configs/selection/`): each combination outside the matrix, with its source."""
    from fabtui.intent.selection import FleetReport, check, combinations, load_matrix

    matrix = load_matrix()
    chosen = devices or [*graph.nodes, *graph.switches]
    _check_devices(graph, chosen)
    readings = await read_running(ws, graph, chosen, FLEET_PLAN)
    wanted = set(chosen)
    scope = {k: v for k, v in readings.items() if k.split(":")[0] in wanted}
    found = FleetReport()
    combos = [c for c in combinations(graph, scope, found)
              if c.component.split(":")[0] in wanted]
    report = check(matrix, combos)
    report.unread = [u for u in found.unread if u[0].split(":")[0] in wanted]
    return report


def _union(*plans: list[tuple[str, str, str | None]]) -> list[tuple[str, str, str | None]]:
    seen: dict[tuple[str, str | None], tuple[str, str, str | None]] = {}
    for plan in plans:
        for item in plan:
            seen.setdefault((item[0], item[2]), item)
    return list(seen.values())


async def record_baseline(ws: ProbeSweeper, graph: FabricGraph, data_dir: Path, name: str,
                          scenario: str | None, replace: bool = False
                          ) -> tuple[Baseline, Judgement]:
    """Read every device once (drift's, the fleet check's and the link probes'), judge it and
    store its versions and settings as baseline `name` in `data_dir`: good when drift and the
    fleet check found nothing, every link is up within its probes' limits and every device
    answered (`Judgement`). Returns the baseline and the judgement. A good baseline of that
    name is not replaced by a state that is not good unless `replace`: `RequestError`, nothing
    written (an on-call engineer re-recording `golden` mid-incident keeps the known-good state
    `--since-good` compares with)."""
    import re

    from fabtui.intent.baseline import (
        LINK_PLAN,
        STORE_NAME,
        BaselineStore,
        GoodBaselineKept,
        Judgement,
        facts,
    )
    from fabtui.intent.drift import drift as compare
    from fabtui.intent.scenario import load_scenario
    from fabtui.intent.selection import FleetReport, check, combinations, load_matrix

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", name):
        raise RequestError(f"baseline name {name!r}: letters, digits, '.', '_' and '-' "
                           "(at most 64)")
    loaded = load_scenario(scenario or default_scenario(graph))
    chosen = [*graph.nodes, *graph.switches]
    results: list[ProbeResult] = []
    readings = await read_running(ws, graph, chosen,
                                  _union(drift_plan(graph), FLEET_PLAN, LINK_PLAN), results)
    drifted = compare(loaded, graph, readings, chosen)
    found = FleetReport()
    fleet = check(load_matrix(), combinations(graph, readings, found))
    fleet.unread = found.unread
    judgement = Judgement.of(drifted, fleet, results)
    store = BaselineStore(data_dir / STORE_NAME)
    try:
        baseline = store.record(name, facts(graph, readings), findings=judgement.findings,
                                scenario=loaded.name, topology=graph.topology.cluster.name,
                                replace=replace)
    except GoodBaselineKept as kept:
        raise RequestError(
            f"baseline {name!r} is a good state (recorded {kept.kept.recorded_at}) and this one "
            f"is NOT good ({judgement.problems()}): kept {name!r}, recorded nothing; record it "
            "under another name, or --replace to overwrite the good one") from None
    finally:
        store.close()
    return baseline, judgement


async def since_baseline(ws: ProbeSweeper, graph: FabricGraph, data_dir: Path, name: str | None,
                         scope_nodes: list[str] | None) -> tuple[Baseline, list[Change]]:
    """What changed since baseline `name` (None: the newest good one), read now; narrowed to
    the components a job on `scope_nodes` uses when given. Raises `RequestError` when there
    is no such baseline."""
    from fabtui.intent.baseline import STORE_NAME, BaselineStore, changes, facts, in_scope

    store = BaselineStore(data_dir / STORE_NAME)
    try:
        baseline = store.get(name) if name is not None else store.latest_good()
        known = [b.name for b in store.all()]
    finally:
        store.close()
    if baseline is None:
        raise RequestError(
            (f"no baseline {name!r} (recorded: {', '.join(known) or 'none'})" if name else
             "no good baseline recorded yet: `fabtui baseline record NAME` on a healthy "
             "fabric") + f" in {data_dir / STORE_NAME}")
    devices = [*graph.nodes, *graph.switches]
    if scope_nodes:
        _check_devices(graph, scope_nodes)
        scope = in_scope(graph, scope_nodes)
        devices = [d for d in devices if d in scope]
    readings = await read_running(ws, graph, devices, _union(drift_plan(graph), FLEET_PLAN))
    now = facts(graph, readings)
    before = baseline.facts
    if scope_nodes:
        before = {k: v for k, v in before.items() if k.split("\t")[0] in scope}
        now = {k: v for k, v in now.items() if k.split("\t")[0] in scope}
    return baseline, changes(before, now, read_now=devices)
