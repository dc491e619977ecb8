"""What a case's component ids and texts say in structured terms: the kind of each component,
the rails and nodes they are on, and the exact error codes a text names.

Component ids are the topology's (`node042`, `node042:mlx5_3`, `node042:gpu3`,
`leaf-g00-r3:Ethernet16`, `spine-01`, `rail3`, `optic:MT24000043`). Without a fabric at hand the
id alone says the kind, the node, and the rail of `rail3` or of a leaf named `...-r3`; a
`Locate` built from the topology (the workspace passes one) adds what only the fabric knows,
such as the rail a NIC is cabled to. Pure functions; nothing is read or written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fabtui.model.element import device_of

if TYPE_CHECKING:
    from fabtui.model.topology import Topology


@dataclass(frozen=True)
class Placement:
    """Where the fabric puts one component: its rails and its node (if it is on one)."""

    rails: tuple[int, ...] = ()
    node: str | None = None
    leaf: str | None = None


Locate = Callable[[str], Placement | None]
"""The fabric's answer for one component id, or None when the fabric does not know it."""


def locator(topology: Topology) -> Locate:
    """Where `topology` puts a component id: a NIC (by RDMA name or netdev) its rail and node,
    a switch (or a port of one) its rails, and the leaf itself when it is one."""
    switch_rails = {s.name: tuple(s.rail) for s in topology.switches}
    roles = {s.name: s.role.value for s in topology.switches}
    nics: dict[str, Placement] = {}
    for node in topology.nodes:
        for nic in node.nics:
            place = Placement(rails=(nic.rail,), node=node.hostname)
            nics[f"{node.hostname}:{nic.name}"] = place
            if nic.netdev:
                nics[f"{node.hostname}:{nic.netdev}"] = place

    def locate(component: str) -> Placement | None:
        if component in nics:
            return nics[component]
        device = device_of(component)
        if device in switch_rails:
            leaf = device if roles[device] == "leaf" else None
            return Placement(rails=switch_rails[device], leaf=leaf)
        return None

    return locate

_RAIL = re.compile(r"^rail[-_ ]?(\d+)$", re.I)
_LEAF_RAIL = re.compile(r"-r(\d+)(?:$|[-_.])", re.I)
_PORT = re.compile(r"^(?:Ethernet\d+|Eth\d+(?:/\d+)+|swp\d+(?:s\d+)?|port\d+|p\d+|"
                   r"\d+(?:/\d+)+)(?:/lane\d+)?$", re.I)
_NIC = re.compile(r"^(?:mlx5_\d+|mlx4_\d+|bnxt_re\d+|irdma\d+|hfi1_\d+|ib[sp]?\w*|"
                  r"en[ps]\w+|eth\d+|rdma\d+)$", re.I)
_GPU = re.compile(r"^gpu\d+$", re.I)
_RANK = re.compile(r"^rank\d+$", re.I)


def component_kind(component: str) -> str:
    """`node`, `gpu`, `nic`, `rank`, `port`, `leaf`, `spine`, `switch`, `rail` or `optic`."""
    head, sep, tail = component.partition(":")
    if head.lower() == "optic":
        return "optic"
    if _RAIL.match(component):
        return "rail"
    if sep:
        tail = tail.split("/lane")[0]
        if _GPU.match(tail):
            return "gpu"
        if _RANK.match(tail):
            return "rank"
        if _PORT.match(tail):
            return "port"
        if _NIC.match(tail):
            return "nic"
        return "port" if _switch_kind(head) else "nic"
    return _switch_kind(head) or "node"


def _switch_kind(name: str) -> str | None:
    lowered = name.lower()
    for kind in ("leaf", "spine", "super", "core", "tor"):
        if lowered.startswith(kind) or f"-{kind}" in lowered:
            return "spine" if kind in ("super", "core") else "leaf" if kind == "tor" else kind
    return "switch" if lowered.startswith(("sw", "switch")) else None


def placement(component: str, locate: Locate | None = None) -> Placement:
    """The rails and node of `component`: the fabric's answer when it knows, else the id's."""
    if locate is not None:
        found = locate(component)
        if found is not None:
            return found
    kind = component_kind(component)
    head = device_of(component)
    rail = _RAIL.match(component)
    if rail:
        return Placement(rails=(int(rail.group(1)),))
    if kind in ("leaf", "port"):
        leaf_rail = _LEAF_RAIL.search(head)
        return Placement(rails=(int(leaf_rail.group(1)),) if leaf_rail else (), leaf=head)
    if kind in ("node", "gpu", "nic", "rank"):
        return Placement(node=head)
    return Placement()


@dataclass(frozen=True)
class Fingerprint:
    """The structured facts similar cases are matched on first."""

    symptom_class: str
    error_codes: frozenset[str] = field(default_factory=frozenset)
    kinds: frozenset[str] = field(default_factory=frozenset)
    rails: frozenset[int] = field(default_factory=frozenset)
    nodes: frozenset[str] = field(default_factory=frozenset)
    leaves: frozenset[str] = field(default_factory=frozenset)
    components: frozenset[str] = field(default_factory=frozenset)
    tags: frozenset[str] = field(default_factory=frozenset)


def fingerprint(symptom_class: str, error_codes: Iterable[str], components: Iterable[str],
                tags: Iterable[str], locate: Locate | None = None) -> Fingerprint:
    """The fingerprint of a case's structured fields."""
    comps = [c for c in components if c]
    places = [placement(c, locate) for c in comps]
    return Fingerprint(
        symptom_class=symptom_class,
        error_codes=frozenset(normalise_code(c) for c in error_codes),
        kinds=frozenset(component_kind(c) for c in comps),
        rails=frozenset(r for p in places for r in p.rails),
        nodes=frozenset(p.node for p in places if p.node),
        leaves=frozenset(p.leaf for p in places if p.leaf),
        components=frozenset(c.split("/lane")[0] for c in comps),
        tags=frozenset(t.lower() for t in tags))


_CODES = (
    (re.compile(r"\bxid\s*(?:\(PCI:[^)]*\)\s*)?[:#]?\s*(\d{1,3})\b", re.I), "xid-{}"),
    (re.compile(r"\bsxid\s*[:#]?\s*(\d{3,6})\b", re.I), "sxid-{}"),
    (re.compile(r"\b(?:status|error|wc status)\s*[=:]?\s*(\d{1,2})\b(?=[^\n]*"
                r"(?:IBV_WC|completion|retry|transport))", re.I), "ib-status-{}"),
    (re.compile(r"\bIBV_WC_RETRY_EXC_ERR\b"), "ib-status-12"),
    (re.compile(r"\bIBV_WC_RNR_RETRY_EXC_ERR\b"), "ib-status-13"),
    (re.compile(r"\bIBV_WC_REM_ACCESS_ERR\b"), "ib-status-10"),
    (re.compile(r"\bIBV_WC_LOC_LEN_ERR\b"), "ib-status-1"),
    (re.compile(r"\bcuda(?:\s+error)?\s*[:#]?\s*(\d{3})\b", re.I), "cuda-error-{}"),
)


def error_codes_in(text: str) -> list[str]:
    """The exact error codes `text` names (`Xid 79` -> `xid-79`, `IBV_WC_RETRY_EXC_ERR` ->
    `ib-status-12`), each once, in the order found."""
    found: list[str] = []
    for pattern, template in _CODES:
        for match in pattern.finditer(text):
            code = template.format(*match.groups()) if match.groups() else template
            if code not in found:
                found.append(code)
    return found


def normalise_code(code: str) -> str:
    """`Xid 79`, `XID-79`, `xid79` -> `xid-79`; other codes lower-cased."""
    text = code.strip().lower().replace("_", "-").replace(" ", "-")
    return re.sub(r"^([a-z-]*[a-z])-?(\d+)$", r"\1-\2", text)
