"""Reading topology files: explicit fabrics and template-based ones, with every entity's origin.

A topology file is either explicit (`cluster`, `nodes`, `switches`, `links` ...) or names a template
(`template: rail-optimized` or a shipped template such as `h100-1024gpu-rail`) with `params` and
`overrides`. Both load into the same `Topology`. Each node, switch and link remembers where it came
from (`Origin`), so validation findings can say `file:line` even for generated entities (they point
at the `template:` line, or at the override that changed them).

Anything that makes the file unreadable (bad YAML, unknown key, wrong type, dangling reference to a
plane or GPU, a host name or management address ssh could not safely be given, template parameter
out of range) raises `InputError` listing every problem found.
Problems with a fabric that *was* read (a miscabled rail, a dangling link end) are left to
`fabtui.topology.validate`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fabtui.errors import InputError, Problem
from fabtui.gcpause import gc_paused
from fabtui.model.element import device_of
from fabtui.model.topology import Endpoint, Link, Name, Node, Switch, Topology
from fabtui.paths import shipped_templates
from fabtui.schema_errors import problems_from
from fabtui.topology.addresses import hostname_problem, mgmt_problem
from fabtui.topology.generate import (
    GENERATORS,
    RailOptimizedParams,
    check_params,
    rail_optimized,
)
from fabtui.yamldoc import Loc, YamlDoc, load_yaml

_MAX_TEMPLATE_DEPTH = 8


@dataclass(frozen=True, slots=True)
class Origin:
    """Where an entity was written, or the template line that generated it."""

    doc: YamlDoc
    loc: Loc
    exact: bool = True
    """True for an entry written out in the file: its children have lines of their own."""

    def child(self, *parts: str | int) -> Origin:
        """The origin of a part of this entity (e.g. one NIC of a node)."""
        return Origin(self.doc, self.loc + parts, True) if self.exact else self

    def where(self) -> str:
        """`file:line`."""
        return self.doc.where(self.loc)


class Origins:
    """Where each node, switch and link of a topology came from, by position.

    An explicit file needs no bookkeeping (entity i is entry i of its section); generated and
    overridden fabrics keep one `Origin` per entity.
    """

    def __init__(self, doc: YamlDoc, section_lists: dict[str, list[Origin]] | None = None) -> None:
        self.doc = doc
        self.lists = section_lists or {}

    def of(self, section: str, index: int) -> Origin:
        """Origin of entry `index` of `section` (`nodes`, `switches` or `links`)."""
        listed = self.lists.get(section)
        return listed[index] if listed is not None else Origin(self.doc, (section, index))

    def node(self, index: int) -> Origin:
        """Origin of the `index`-th node."""
        return self.of("nodes", index)

    def switch(self, index: int) -> Origin:
        """Origin of the `index`-th switch."""
        return self.of("switches", index)

    def link(self, index: int) -> Origin:
        """Origin of the `index`-th link."""
        return self.of("links", index)


@dataclass
class LoadedTopology:
    """A topology and where each of its nodes, switches and links came from."""

    topology: Topology
    source: str
    origins: Origins
    template: str | None = None
    """The template chain that generated it (`h100-1024gpu-rail <- rail-optimized`), if any."""
    params: dict[str, Any] = field(default_factory=dict)
    """Generator parameters after merging the template chain, for generated topologies."""


class _Overrides(BaseModel):
    """Changes applied to a generated fabric: a miscabled link, a missing node, a spare switch."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    remove_nodes: tuple[Name, ...] = ()
    remove_switches: tuple[Name, ...] = ()
    remove_links: tuple[Endpoint, ...] = ()
    """Remove the link plugged into each of these ports."""
    nodes: tuple[Node, ...] = ()
    """Replace the node of the same hostname, or add it."""
    switches: tuple[Switch, ...] = ()
    """Replace the switch of the same name, or add it."""
    links: tuple[Link, ...] = ()
    """Add these links, replacing any link already plugged into one of their ports."""


class TemplateFile(BaseModel):
    """A topology file that asks for a generated fabric."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    template: str = Field(min_length=1)
    description: str = ""
    params: dict[str, Any] = Field(default_factory=dict)
    overrides: _Overrides = _Overrides()


TemplateFinder = Callable[[str], Path | None]
"""Maps a template name (e.g. `h100-1024gpu-rail`) to its file, or None if there is none."""


def shipped_template(name: str) -> Path | None:
    """The shipped template called `name`, if there is one (the default `TemplateFinder`)."""
    path = shipped_templates() / f"{name}.yaml"
    return path if path.is_file() else None


def load_topology(path: Path, *, label: str | None = None,
                  find_template: TemplateFinder | None = None,
                  param_overrides: dict[str, Any] | None = None) -> LoadedTopology:
    """Read the topology file at `path`, expanding templates.

    `param_overrides` (from `--param k=v`) take precedence over the file's template parameters.
    Raises `InputError` when the file cannot be read as a topology.
    """
    doc = load_yaml(path, label)
    return topology_from_doc(doc, find_template=find_template, param_overrides=param_overrides)


def topology_from_doc(doc: YamlDoc, *, find_template: TemplateFinder | None = None,
                      param_overrides: dict[str, Any] | None = None) -> LoadedTopology:
    """Build a topology from an already parsed document."""
    data = doc.data
    if not isinstance(data, dict):
        what = "empty" if data is None else f"a {type(data).__name__}"
        raise InputError([doc.problem((), f"a topology file must be a mapping, this one is "
                                          f"{what}")])
    if "template" in data:
        return _from_template(doc, find_template, param_overrides or {})
    if param_overrides:
        raise InputError.single("--param", None, f"{doc.source} is an explicit topology, not a "
                                                 "template: it takes no parameters")
    try:
        with gc_paused():
            topology = Topology.model_validate(data)
    except ValidationError as exc:
        raise InputError(problems_from(exc, doc, Topology)) from None
    loaded = LoadedTopology(topology=topology, source=doc.source, origins=Origins(doc))
    _check_references(loaded)
    return loaded


# templates ------------------------------------------------------------------------------------

@dataclass
class _Layer:
    doc: YamlDoc
    spec: TemplateFile


def _read_layer(doc: YamlDoc) -> _Layer:
    try:
        return _Layer(doc, TemplateFile.model_validate(doc.data))
    except ValidationError as exc:
        raise InputError(problems_from(exc, doc, TemplateFile)) from None


def _from_template(doc: YamlDoc, find_template: TemplateFinder | None,
                   param_overrides: dict[str, Any]) -> LoadedTopology:
    chain = [_read_layer(doc)]
    seen = {doc.source}
    while chain[-1].spec.template not in GENERATORS:
        name = chain[-1].spec.template
        where = chain[-1].doc
        path = (find_template or shipped_template)(name)
        if path is None:
            known = ", ".join(GENERATORS)
            raise InputError([where.problem(("template",),
                                            f"unknown template {name!r} (generators: {known}; "
                                            "see `fabtui topo templates`)")])
        if str(path) in seen or len(chain) >= _MAX_TEMPLATE_DEPTH:
            raise InputError([where.problem(("template",), f"template {name!r} refers back to "
                                                          "itself")])
        seen.add(str(path))
        chain.append(_read_layer(load_yaml(path, str(path))))

    # Parameters: the generator's defaults, then each layer from the base up, then --param.
    merged: dict[str, Any] = {}
    param_home: dict[str, YamlDoc] = {}
    for layer in reversed(chain):
        merged.update(layer.spec.params)
        for key in layer.spec.params:
            param_home[key] = layer.doc
    merged.update(param_overrides)
    params = _validate_params(merged, param_home, set(param_overrides))

    top = chain[0].doc
    generated = Origin(top, ("template",), exact=False)
    topology = rail_optimized(params)
    nodes = list(topology.nodes)
    switches = list(topology.switches)
    links = list(topology.links)
    node_origins = [generated] * len(nodes)
    switch_origins = [generated] * len(switches)
    link_origins = [generated] * len(links)
    state = _State(nodes, switches, links, node_origins, switch_origins, link_origins)
    for layer in reversed(chain):
        _apply_overrides(state, layer)
    topology = topology.model_copy(update={"nodes": tuple(nodes), "switches": tuple(switches),
                                           "links": tuple(links)})
    origins = Origins(top, {"nodes": node_origins, "switches": switch_origins,
                            "links": link_origins})
    loaded = LoadedTopology(
        topology=topology, source=top.source, origins=origins,
        template=" <- ".join([Path(layer.doc.source).stem for layer in chain
                              if layer.doc.source.endswith((".yaml", ".yml"))]
                             + [chain[-1].spec.template]),
        params=params.model_dump(mode="json", exclude_defaults=True),
    )
    _check_references(loaded)
    return loaded


def _validate_params(merged: dict[str, Any], home: dict[str, YamlDoc],
                     from_cli: set[str]) -> RailOptimizedParams:
    def locate(key: str | int, message: str) -> Problem:
        if key in from_cli:
            return Problem("--param", None, f"{key}={merged.get(str(key))!r}: {message}")
        doc = home.get(str(key))
        if doc is None:
            return Problem(next(iter(home.values())).source if home else "--param", None, message)
        return doc.problem(("params", key), message)

    try:
        params = RailOptimizedParams.model_validate(merged)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False):
            key = error["loc"][0] if error["loc"] else "params"
            message = str(error["msg"]).removeprefix("Value error, ")
            if error["type"] == "extra_forbidden":
                message = f"unknown template parameter {key!r}; see `fabtui topo templates`"
            elif error["type"] == "missing":
                message = f"missing required template parameter {key!r}"
            else:
                message = f"parameter {key}: {message} (got {error.get('input')!r})"
            problems.append(locate(key, message))
        raise InputError(problems) from None
    issues = check_params(params)
    if issues:
        raise InputError([locate(key, f"parameter {key}: {msg}") for key, msg in issues])
    return params


@dataclass
class _State:
    nodes: list[Node]
    switches: list[Switch]
    links: list[Link]
    node_origins: list[Origin]
    switch_origins: list[Origin]
    link_origins: list[Origin]


def _apply_overrides(state: _State, layer: _Layer) -> None:
    """Apply one layer's overrides in place; unknown targets are input errors."""
    spec, doc = layer.spec.overrides, layer.doc
    problems: list[Problem] = []
    base: Loc = ("overrides",)

    removed_nodes = set()
    hostnames = {n.hostname for n in state.nodes}
    for i, host in enumerate(spec.remove_nodes):
        if host not in hostnames:
            problems.append(doc.problem((*base, "remove_nodes", i), f"no node {host!r} to remove"))
        removed_nodes.add(host)
    removed_switches = set()
    names = {s.name for s in state.switches}
    for i, name in enumerate(spec.remove_switches):
        if name not in names:
            problems.append(doc.problem((*base, "remove_switches", i),
                                        f"no switch {name!r} to remove"))
        removed_switches.add(name)
    removed_ends = set()
    used_ends = {end for link in state.links for end in (link.a, link.b)}
    for i, end in enumerate(spec.remove_links):
        if end not in used_ends:
            problems.append(doc.problem((*base, "remove_links", i), f"no link plugged into {end}"))
        removed_ends.add(end)
    if problems:
        raise InputError(problems)

    gone_devices = removed_nodes | removed_switches
    replaced_ends = {end for link in spec.links for end in (link.a, link.b)}

    def keep_link(link: Link) -> bool:
        ends = (link.a, link.b)
        if any(device_of(e) in gone_devices for e in ends):
            return False
        return not any(e in removed_ends or e in replaced_ends for e in ends)

    _filter(state.links, state.link_origins, keep_link)
    _filter(state.nodes, state.node_origins, lambda n: n.hostname not in removed_nodes)
    _filter(state.switches, state.switch_origins, lambda s: s.name not in removed_switches)

    _upsert(state.nodes, state.node_origins, spec.nodes, lambda n: n.hostname,
            lambda i: Origin(doc, (*base, "nodes", i)))
    _upsert(state.switches, state.switch_origins, spec.switches, lambda s: s.name,
            lambda i: Origin(doc, (*base, "switches", i)))
    for i, link in enumerate(spec.links):
        state.links.append(link)
        state.link_origins.append(Origin(doc, (*base, "links", i)))


def _upsert(items: list[Any], origins: list[Origin], new: tuple[Any, ...],
            key: Callable[[Any], str], origin_of: Callable[[int], Origin]) -> None:
    """Replace the item with the same key as each new one, or append it; origins follow."""
    index = {key(item): i for i, item in enumerate(items)}
    for i, item in enumerate(new):
        at = index.get(key(item))
        if at is None:
            index[key(item)] = len(items)
            items.append(item)
            origins.append(origin_of(i))
        else:
            items[at], origins[at] = item, origin_of(i)


def _filter(items: list[Any], origins: list[Origin], keep: Callable[[Any], bool]) -> None:
    kept = [(item, origin) for item, origin in zip(items, origins, strict=True) if keep(item)]
    items[:] = [item for item, _ in kept]
    origins[:] = [origin for _, origin in kept]


# references -------------------------------------------------------------------------------------

def _check_references(loaded: LoadedTopology) -> None:
    """References other than link ends must resolve, or the file is not a usable topology."""
    topo = loaded.topology
    planes = {p.name for p in topo.planes}
    problems: list[Problem] = []

    def plane_problem(origin: Origin, plane: str, owner: str) -> None:
        known = ", ".join(sorted(planes)) or "none are defined under `planes:`"
        problems.append(Problem(origin.doc.source, origin.doc.line_of(origin.loc),
                                f"{owner} names plane {plane!r}, which is not defined ({known})"))

    for i, node in enumerate(topo.nodes):
        origin = loaded.origins.node(i)
        indexes = {g.index for g in node.gpus}
        for j, nic in enumerate(node.nics):
            if nic.plane is not None and nic.plane not in planes:
                plane_problem(origin.child("nics", j, "plane"), nic.plane,
                              f"{node.hostname}:{nic.name}")
            for gpu in nic.gpus or ():
                if gpu not in indexes:
                    at = origin.child("nics", j, "gpus")
                    problems.append(Problem(at.doc.source, at.doc.line_of(at.loc),
                                            f"{node.hostname}:{nic.name} serves GPU {gpu}, but "
                                            f"{node.hostname} has no GPU {gpu}"))
    for i, switch in enumerate(topo.switches):
        if switch.plane is not None and switch.plane not in planes:
            plane_problem(loaded.origins.switch(i).child("plane"), switch.plane, switch.name)
    problems += _address_problems(loaded)
    if problems:
        raise InputError(problems)


def _address_problems(loaded: LoadedTopology) -> list[Problem]:
    """Host names and management addresses that ssh could not (or must not) be given."""
    problems: list[Problem] = []
    entries = [(loaded.origins.node(i), "hostname", "hostname", n.hostname, n.mgmt)
               for i, n in enumerate(loaded.topology.nodes)]
    entries += [(loaded.origins.switch(i), "name", "switch name", s.name, s.mgmt)
                for i, s in enumerate(loaded.topology.switches)]
    for origin, key, what, name, mgmt in entries:
        checks = [(key, what, name, hostname_problem(name))]
        if mgmt is not None:
            checks.append(("mgmt", f"{name} mgmt", mgmt, mgmt_problem(mgmt)))
        for field_name, label, value, reason in checks:
            if reason is not None:
                at = origin.child(field_name)
                problems.append(Problem(at.doc.source, at.doc.line_of(at.loc),
                                        f"{label} {value!r} {reason}"))
    return problems
