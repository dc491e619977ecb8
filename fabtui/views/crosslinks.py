"""How the app's views point at each other, without a face: fabric-map keys for a triage
suspect, the runbooks for an element's findings, and a runbook's inputs filled from an element.

The Fabric screen marks what a triage, a runbook session or a case is about (`Highlights`), and
offers the runbooks whose symptoms match what its element's probes found; the Triage screen
opens a runbook on its suspect. All of that is decided here, from the `FabricMap`, the runbook
library and the triage report, so it is tested without an app. Nothing here runs a probe.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from fabtui.model.element import ElementRef, Kind
from fabtui.model.runbook import InputSpec, InputType, Runbook
from fabtui.model.triage import Suspect, TriageReport
from fabtui.runbooks.library import Library, match
from fabtui.views.fabricmap import FabricMap
from fabtui.views.status import ElementState, LiveFinding

# --- a triage suspect on the fabric ---------------------------------------------------------


def suspect_keys(fabric: FabricMap, suspect: Suspect) -> list[str]:
    """The fabric-map elements a suspect names, most specific first: its optic, leaf port,
    cable, NIC, GPU, node (only those the map knows; a suspect the topology does not place
    names none)."""
    node = suspect.node
    candidates = [suspect.optic, suspect.port]
    nic = f"{node}:{suspect.nic}" if node and suspect.nic else None
    cell = fabric.cell_of(nic) if nic else None
    candidates += [cell.link if cell else None, nic,
                   f"{node}:gpu{suspect.gpu}" if node and suspect.gpu is not None else None, node]
    keys: list[str] = []
    for key in candidates:
        if key and key in fabric.kinds and key not in keys:
            keys.append(key)
    return keys


def report_keys(fabric: FabricMap, report: TriageReport, limit: int = 64) -> list[str]:
    """The elements of a report's suspects, the first suspect's first (at most `limit`: a hang
    with every rank stuck names the whole job, and a mark on everything marks nothing)."""
    keys: list[str] = []
    for suspect in report.suspects:
        for key in suspect_keys(fabric, suspect):
            if key not in keys:
                keys.append(key)
    return keys[:limit]


@dataclass(frozen=True)
class Place:
    """Where something is, as runbook inputs name it (any part may be unknown)."""

    node: str | None = None
    nic: str | None = None
    """`node:mlx5_N`."""
    port: str | None = None
    """`leaf:EthernetN`."""
    leaf: str | None = None
    optic: str | None = None
    rank: int | None = None
    element: str | None = None
    """The element itself (for an input that takes any component)."""

    @classmethod
    def of_suspect(cls, suspect: Suspect) -> Place:
        node = suspect.node
        nic = f"{node}:{suspect.nic}" if node and suspect.nic else None
        leaf = ElementRef.parse(suspect.port).device if suspect.port else None
        return cls(node=node, nic=nic, port=suspect.port, leaf=leaf, optic=suspect.optic,
                   rank=suspect.rank, element=suspect.optic or suspect.port or nic or node)

    @classmethod
    def of_element(cls, fabric: FabricMap, key: str) -> Place:
        """The place of a fabric-map element: a NIC's port and leaf, a port's leaf, a leaf's
        nothing below it."""
        kind = fabric.kinds.get(key)
        cell = fabric.cell_of(key)
        if cell is not None:  # a NIC, GPU, host cable, its leaf port or optic
            return cls(node=cell.node, nic=cell.nic, port=cell.port, leaf=cell.leaf,
                       optic=cell.optic, element=key)
        if kind is Kind.NODE:
            return cls(node=key, element=key)
        if kind in (Kind.LEAF, Kind.SPINE):
            return cls(leaf=key if kind is Kind.LEAF else None, element=key)
        if kind is Kind.PORT:  # a switch-to-switch port
            switch = ElementRef.parse(key).device
            leaf = switch if fabric.kinds.get(switch) is Kind.LEAF else None
            return cls(port=key, leaf=leaf, optic=fabric.optic_of(key), element=key)
        return cls(element=key)


_BY_NAME: dict[str, str] = {
    "node": "node", "log_node": "node", "nic": "nic", "suspect_nic": "nic", "port": "port",
    "leaf_port": "port", "suspect_port": "port", "leaf": "leaf", "switch": "leaf",
    "optic": "optic", "optic_id": "optic", "rank": "rank", "component": "element"}
"""Input name -> the part of a `Place` it takes. Only these names are filled: an input of
type node called `peer` or `known_good` wants another node than the suspect."""
_TYPES: dict[str, tuple[InputType, ...]] = {
    "node": (InputType.NODE, InputType.STRING), "nic": (InputType.NIC, InputType.STRING),
    "port": (InputType.PORT, InputType.STRING), "leaf": (InputType.SWITCH, InputType.STRING),
    "optic": (InputType.STRING,), "rank": (InputType.RANK, InputType.INT, InputType.STRING),
    "element": (InputType.STRING, InputType.NODE, InputType.NIC, InputType.PORT,
                InputType.SWITCH)}


def _fits(spec: InputSpec, value: str) -> bool:
    return spec.pattern is None or re.fullmatch(spec.pattern, value) is not None


def fill_inputs(runbook: Runbook, place: Place,
                given: Mapping[str, str] | None = None) -> dict[str, str]:
    """`runbook`'s inputs that `place` answers (by input name and type; a value its pattern
    refuses is left out), over `given` (what the triage already proposed). Only inputs the
    runbook declares are returned."""
    declared = {spec.name: spec for spec in runbook.meta.inputs}
    inputs = {k: v for k, v in (given or {}).items() if k in declared}
    for name, spec in declared.items():
        part = _BY_NAME.get(name)
        if part is None or spec.type not in _TYPES[part]:
            continue
        value = getattr(place, part)
        if value is not None and _fits(spec, str(value)):
            inputs[name] = str(value)
    return inputs


@dataclass(frozen=True)
class RunbookChoice:
    """A runbook to open on something, with its inputs filled and why it was offered."""

    runbook: str
    title: str
    inputs: dict[str, str]
    why: str
    score: float = 0.0


def suspect_runbook(library: Library, report: TriageReport,
                    suspect: Suspect) -> RunbookChoice | None:
    """The runbook the triage suggests (its first next step; else `nccl-hang-triage`), on
    `suspect`: the suspect's node, NIC, port... over the inputs the triage proposed. None when
    the library has no such runbook."""
    step = report.next[0] if report.next else None
    name = step.runbook if step is not None else "nccl-hang-triage"
    book = library.get(name)
    if book is None:
        return None
    inputs = fill_inputs(book, Place.of_suspect(suspect), step.inputs if step else None)
    why = step.why if step is not None else f"triage verdict: {report.verdict}"
    return RunbookChoice(name, book.title, inputs, why)


# --- the runbooks for an element's findings ------------------------------------------------
_TOKEN = re.compile(r"[A-Za-z][A-Za-z_]*")
_NOISE = {"error", "warning", "info", "limit", "rate", "rx", "tx", "lane", "ethernet", "node",
          "leaf", "spine", "mlx", "gpu", "share", "ratio", "prio"}
"""Words of finding lines that name where, not what (element names, severity, units)."""


def finding_words(finding: LiveFinding) -> list[str]:
    """What a live finding (`switch.pfc`: `leaf:Ethernet40: pause_share.rx.PFC3 = 1 (limit
    0.5)`) is about, as symptom words: the probe's family and the metric's words (`switch pfc
    pause`), without element names, severities or numbers."""
    words: list[str] = []
    for part in (finding.probe, finding.what.split("=")[0]):
        for token in _TOKEN.findall(part.replace(".", " ").replace("_", " ")):
            word = token.lower()
            if word not in _NOISE and len(word) > 1 and word not in words:
                words.append(word)
    return words


def with_members(fabric: FabricMap, elements: Iterable[str]) -> list[str]:
    """`elements`, then what each rolls up (a node: its NICs and GPUs; a switch: its ports; a
    port: its optic): a node's ✗ is its storming NIC's finding, so the node's runbooks are the
    NIC's; a port that is down because its optic is dark is the optic's repair."""
    found = list(elements)
    seen = set(found)  # a set selection at 1,024 nodes rolls up ~16k elements
    for element in list(found):
        members = list(fabric.members.get(element, ()))
        members += [optic for port in (element, *members)
                    if fabric.kinds.get(port) is Kind.PORT and (optic := fabric.optic_of(port))]
        for member in members:
            if member not in seen:
                seen.add(member)
                found.append(member)
    return found


def findings_of(states: Mapping[str, ElementState],
                elements: Iterable[str]) -> list[LiveFinding]:
    """The live findings of `elements` (from a snapshot's states), in element order."""
    found: dict[LiveFinding, None] = {}  # ordered, without repeats
    for element in elements:
        state = states.get(element)
        if state is not None:
            found.update(dict.fromkeys(state.findings))
    return list(found)


_SPECIFIC = (Kind.OPTIC, Kind.PORT, Kind.HOST_LINK, Kind.NIC, Kind.GPU)
"""Which element of a selection a repair is about, first to last: the optic of a port, the
port, the cable, the NIC, the GPU (then anything else)."""
_SEVERITY = {"error": 0, "warning": 1}


def runbooks_for(library: Library, fabric: FabricMap, states: Mapping[str, ElementState],
                 elements: Iterable[str], limit: int = 5) -> tuple[str | None,
                                                                   list[RunbookChoice]]:
    """What `b` offers for a selection standing for `elements` (`with_members`): the element
    with the worst finding (an error before a warning), the most specific on a tie (a port
    down because its optic is dark: the optic, whose repair is optic-replacement), and the
    runbooks for its findings (`element_runbooks`). (None, []) when nothing has a finding."""
    candidates = [(e, findings_of(states, [e])) for e in elements]
    candidates = [(e, f) for e, f in candidates if f]
    if not candidates:
        return None, []

    def order(item: tuple[str, list[LiveFinding]]) -> tuple[int, int]:
        element, found = item
        kind = fabric.kinds.get(element)
        worst = min(_SEVERITY.get(f.severity, 2) for f in found)
        return worst, _SPECIFIC.index(kind) if kind in _SPECIFIC else len(_SPECIFIC)

    element, found = min(candidates, key=order)
    return element, element_runbooks(library, fabric, element, found, limit)


def element_runbooks(library: Library, fabric: FabricMap, element: str,
                     findings: Iterable[LiveFinding], limit: int = 5) -> list[RunbookChoice]:
    """The runbooks whose symptoms match what `findings` say (the matching `fabtui runbook
    find` does), each with `element` filled in where it has a matching input; [] when the
    element has no findings. The worst findings speak (errors; warnings only when there is no
    error): a dead port's errors are not diluted by its warnings."""
    found = sorted(findings, key=lambda f: _SEVERITY.get(f.severity, 2))
    if not found:
        return []
    worst = found[0].severity
    words: list[str] = []
    for finding in (f for f in found if f.severity == worst):
        words += [w for w in finding_words(finding) if w not in words]
    kind = fabric.kinds.get(element)
    if not words:
        return []
    query = " ".join(words + ([kind.value] if kind else []))
    place = Place.of_element(fabric, element)
    first = found[0].line  # `error: leaf:Ethernet40: ...`
    named = fabric.element_of(found[0].component)[0] == element  # a lane, a GPU's spelling
    why = first if named else f"{fabric.label(element)}: {first}"  # the element said once
    return [RunbookChoice(book.meta.id, book.title, fill_inputs(book, place), why, score)
            for score, book in match(library, query, limit)]


# --- what the Fabric screen marks ------------------------------------------------------------
@dataclass(frozen=True)
class Mark:
    """Why an element is marked: who marked it and what for."""

    origin: str
    why: str


@dataclass
class Highlights:
    """The elements other views marked on the Fabric screen, per origin (a triage, a session,
    a case): each origin's marks replace its earlier ones, and empty keys clear them."""

    by_origin: dict[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)
    version: int = 0
    """Bumped on every change, for views that redraw only on change."""

    def set(self, origin: str, keys: Iterable[str], why: str = "") -> None:
        ordered = tuple(dict.fromkeys(keys))
        if ordered:
            self.by_origin[origin] = (ordered, why)
        else:
            self.by_origin.pop(origin, None)
        self.version += 1

    def clear(self) -> None:
        if self.by_origin:
            self.by_origin.clear()
            self.version += 1

    def elements(self) -> dict[str, list[Mark]]:
        """Element -> its marks, in the order the origins marked them."""
        found: dict[str, list[Mark]] = {}
        for origin, (keys, why) in self.by_origin.items():
            for key in keys:
                found.setdefault(key, []).append(Mark(origin, why))
        return found

    def cells(self, fabric: FabricMap) -> dict[str, str]:
        """The matrix cells that show a marked element -> that element: its host cell
        (`node@rail`), a node, a switch, or a leaf's uplinks cell for a spine link; a port
        marks its switch too. A cell holding several marked elements names the most specific
        (optic, then port, cable, NIC, GPU)."""
        uplinks = {link: f"uplinks:{leaf}" for leaf, links in fabric.leaf_uplinks.items()
                   for link in links}
        order = (Kind.OPTIC, Kind.PORT, Kind.HOST_LINK, Kind.NIC, Kind.GPU)

        def rank(key: str) -> int:
            kind = fabric.kinds[key]
            return order.index(kind) if kind in order else len(order)

        cells: dict[str, str] = {}

        def add(cell: str, key: str) -> None:
            old = cells.get(cell)
            if old is None or rank(key) < rank(old):
                cells[cell] = key

        for key in self.elements():
            if key not in fabric.kinds:
                continue
            cell = fabric.cell_of(key)
            if cell is not None:
                add(f"{cell.node}@{cell.rail}", key)
            elif key in uplinks:
                add(uplinks[key], key)
            else:
                add(key, key)
            if fabric.kinds.get(key) is Kind.PORT:  # and the switch it is on
                switch = ElementRef.parse(key).device
                cells.setdefault(switch, key)
        return cells
