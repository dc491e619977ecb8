"""Configuration intent joined to the workspace's fabric: render a scenario for the configured
topology's devices (`Workspace.render_configs` is the door). Reads files; writes nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabtui.errors import RequestError

if TYPE_CHECKING:
    from fabtui.intent.render import Rendered
    from fabtui.topology.graph import FabricGraph


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
