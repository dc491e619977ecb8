"""Render a scenario's templates for the devices of a topology (Jinja2, sandboxed).

Every template sees `scenario`, `fabric`, the scenario's intent files by alias (`qos`, `fleet`),
its values (`v.NAME`) and the device: a host gets `node`, `nics` and `pfc_vector` (the
`mlnx_qos --pfc` list); a switch gets `switch`, `ports` (name, speed, cable length, buffer
profile), `profiles` (each lossless profile's xoff for its cable: `topology.headroom`) and
`lossless` (its lossless priorities). Templates run in Jinja2's `SandboxedEnvironment` with
`StrictUndefined`: a template cannot reach Python internals, and a name it misspells is an
error, never an empty string in a switch config. The `sh` filter quotes a value for a shell.
A `.json` output must parse as JSON. Errors are `InputError`s naming the template and line.
Reads template files; writes nothing.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from fabtui.errors import InputError
from fabtui.intent.scenario import Scenario, configs_dir
from fabtui.model.topology import Role
from fabtui.paths import display_path
from fabtui.topology.graph import FabricGraph
from fabtui.topology.headroom import xoff_needed


@dataclass(frozen=True)
class Rendered:
    """One rendered file for one device."""

    device: str
    kind: str
    """`host`, or the switch's flavor (`sonic`, `eos`, ...)."""
    template: str
    name: str
    """The output file's name: the template's without `.j2`."""
    text: str


@dataclass(frozen=True)
class PortIntent:
    """A switch port as the templates see it."""

    name: str
    speed: int
    cable_m: int
    cable_known: bool
    profile: str
    xoff: int


def device_kind(graph: FabricGraph, device: str) -> str | None:
    """`host` for a node, the flavor for a switch, None for a name not in the topology."""
    if device in graph.nodes:
        return "host"
    switch = graph.switches.get(device)
    return str(switch.flavor) if switch is not None else None


def _natural(name: str) -> list[int | str]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def switch_ports(graph: FabricGraph, name: str, default_cable_m: int) -> list[PortIntent]:
    """The cabled ports of switch `name`, in the switch's own order, each with its cable's
    length (the topology's `length_m` rounded up, else `default_cable_m`) and the lossless
    profile that length needs."""
    switch = graph.switches[name]
    found = []
    for key, index in graph.port_links.items():
        device, _, port = key.rpartition(":")
        if device != name:
            continue
        link = graph.topology.links[index]
        speed = int(link.speed or switch.port_speed or 400)
        known = link.length_m is not None
        length = math.ceil(link.length_m) if link.length_m is not None else default_cable_m
        found.append(PortIntent(port, speed, length, known,
                                f"pg_lossless_{speed * 1000}_{length}m_profile",
                                xoff_needed(speed, length)))
    return sorted(found, key=lambda p: _natural(p.name))


def context(scenario: Scenario, graph: FabricGraph, device: str) -> dict[str, Any]:
    """What the templates of `device` see (see the module docstring)."""
    base: dict[str, Any] = {"scenario": scenario.name, "fabric": scenario.fabric,
                            "v": scenario.plain_values(), **scenario.intent}
    if device in graph.nodes:
        node = graph.nodes[device]
        nics = [{"name": n.name, "netdev": n.netdev or n.name, "rail": n.rail, "mtu": n.mtu,
                 "speed": n.speed, "model": n.model} for n in node.nics]
        qos = scenario.intent.get("qos", {}).get("host", {})
        enabled = set(qos.get("pfc_priorities", []))
        return {**base, "node": {"hostname": node.hostname, "model": node.model},
                "nics": nics,
                "pfc_vector": ",".join("1" if p in enabled else "0" for p in range(8))}
    switch = graph.switches[device]
    default_cable = int(scenario.plain_values().get("default_cable_m", 5))
    ports = switch_ports(graph, device, default_cable)
    profiles = {p.profile: {"name": p.profile, "xoff": p.xoff} for p in ports}
    lossless = scenario.intent.get("qos", {}).get("switch", {}).get("pfc_priorities", [])
    return {**base, "switch": {"name": switch.name, "flavor": str(switch.flavor),
                               "role": str(switch.role), "mtu": switch.mtu},
            "ports": [p.__dict__ for p in ports],
            "profiles": sorted(profiles.values(), key=lambda p: _natural(p["name"])),
            "lossless": lossless}


def environment(folder: Path | None = None) -> SandboxedEnvironment:
    """The sandboxed Jinja2 environment over `folder`/templates (default: the shipped ones)."""
    env = SandboxedEnvironment(
        loader=jinja2.FileSystemLoader(str((folder or configs_dir()) / "templates")),
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
    env.filters["sh"] = lambda value: shlex.quote(str(value))
    return env


def render_device(scenario: Scenario, graph: FabricGraph, device: str,
                  env: SandboxedEnvironment | None = None) -> list[Rendered]:
    """Every file `scenario` renders for `device` ([] when its kind has no templates).
    Raises `InputError` for a device not in the topology or a template that fails."""
    kind = device_kind(graph, device)
    if kind is None:
        raise InputError.single("--device", None, f"{device!r} is neither a node nor a switch "
                                "of the topology")
    env = env or environment()
    values = context(scenario, graph, device)
    out = []
    for template_name in scenario.templates.get(kind, ()):
        text = _render(env, template_name, values)
        name = template_name.removesuffix(".j2")
        if name.endswith(".json"):
            try:
                json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError.single(_where(env, template_name), None,
                                        f"renders invalid JSON for {device} (line {exc.lineno}"
                                        f" of the output: {exc.msg})") from None
        out.append(Rendered(device, kind, template_name, name, text))
    return out


def render_all(scenario: Scenario, graph: FabricGraph,
               devices: list[str] | None = None) -> list[Rendered]:
    """`render_device` for every node and switch (or `devices`), nodes first."""
    env = environment()
    chosen = devices if devices is not None else [*graph.nodes, *_switch_order(graph)]
    return [r for device in chosen for r in render_device(scenario, graph, device, env)]


def _switch_order(graph: FabricGraph) -> list[str]:
    order = {Role.LEAF: 0, Role.SPINE: 1}
    return sorted(graph.switches, key=lambda s: (order.get(graph.switches[s].role, 2),
                                                  _natural(s)))


def _render(env: SandboxedEnvironment, name: str, values: dict[str, Any]) -> str:
    where = _where(env, name)
    try:
        return env.get_template(name).render(values)
    except jinja2.TemplateSyntaxError as exc:
        raise InputError.single(where, exc.lineno, exc.message or "syntax error") from None
    except jinja2.UndefinedError as exc:
        raise InputError.single(where, _line(exc), f"{exc.message}: the template names a "
                                "value the scenario does not give") from None
    except jinja2.TemplateError as exc:
        raise InputError.single(where, _line(exc), str(exc)) from None


def _where(env: SandboxedEnvironment, name: str) -> str:
    loader = env.loader
    assert isinstance(loader, jinja2.FileSystemLoader)
    return display_path(Path(loader.searchpath[0]) / name)


def _line(exc: BaseException) -> int | None:
    """The template line a render error happened at, from its traceback."""
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.endswith(".j2") or \
                tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
