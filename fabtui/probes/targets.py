"""Naming what a probe runs against, in the topology's terms.

`node001` (a node), `node001:mlx5_3` or `node001:enp92s0f0np0` (a NIC), `node001:gpu3` (a GPU),
`leaf-g00-r3` (a switch), `leaf-g00-r3:Ethernet24` (a switch port), an optic id or link id (a
link), `node001,node002` (a pair of nodes, optionally `node001:mlx5_0,node002:mlx5_0`),
`rank:5` (the GPU a job's rank runs on, by the graph's rank placement: a node probe runs on its
node, a NIC probe on the NIC that GPU sends through), and `localhost` (this machine, outside
the topology).

Target *sets* (`resolve_set`, for sweeps) name many targets at once: a glob (`node*:mlx5_*`,
`node001:*` for all NICs of a node, `leaf-g00-*`), a node range in the pdsh / Slurm hostlist style
(`node[001-004]`, `node[001-003,007]:mlx5_0`), `rail:N` (the NICs of rail N, or its leaves for a
switch probe), `leaf:NAME` (the NICs cabled to that leaf, or its host ports for a port probe), and
any of these joined by commas. A set that matches nothing is an error that says so.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from fabtui.model.element import device_of, split_key
from fabtui.model.probe import TargetKind
from fabtui.model.topology import Gpu, Nic, Node, Switch
from fabtui.topology.graph import FabricGraph, UnknownRank

LOCAL_NAMES = ("localhost", "local")
_GPU = re.compile(r"^(?:gpu|GPU)(\d+)$")
_RANK = re.compile(r"^rank:(\d+)$")
_RANGE = re.compile(r"\[([0-9][0-9,\-]*)\]")
"""A hostlist range: `[001-004]`, `[1,3,5-7]` (digits only; other brackets are glob classes)."""
_GLOB = re.compile(r"[*?]|\[[^\]]*[^0-9,\-\]][^\]]*\]")
_SET_PREFIXES = ("rail:", "leaf:")


class TargetError(LookupError):
    """A target that does not exist, or does not fit the probe; the message says what would."""


@dataclass(frozen=True)
class ProbeTarget:
    """A resolved target and the topology entities it stands for."""

    kind: TargetKind
    name: str
    node: Node | None = None
    nic: Nic | None = None
    switch: Switch | None = None
    port: str | None = None
    gpu: Gpu | None = None
    peer: ProbeTarget | None = None
    link_index: int | None = None

    def attribute(self, path: str) -> Any:
        """`nic.netdev`, `node.hostname`, `switch.flavor`, `port`, `peer.node.hostname`, ..."""
        value: Any = self
        for part in path.split("."):
            value = getattr(value, part, None)
            if value is None:
                return None
        return value.value if hasattr(value, "value") and not isinstance(value, str) else value

    @property
    def host_name(self) -> str | None:
        """The node a command runs on, for node, NIC, GPU and pair targets."""
        return self.node.hostname if self.node is not None else None


def resolve(graph: FabricGraph | None, text: str | None, wanted: TargetKind) -> ProbeTarget:
    """Resolve `text` into the kind of target the probe wants. Raises `TargetError`."""
    if text is None or text.strip() in LOCAL_NAMES:
        if wanted in ("node", "gpu", "local"):
            return ProbeTarget("local", "localhost")
        raise TargetError(f"this probe runs against a {wanted}: give --target "
                          f"({_example(graph, wanted)})")
    text = text.strip()
    if graph is None:
        raise TargetError(f"no topology is loaded to find {text!r} in")
    if "," in text:
        return _pair(graph, text, wanted)
    target = _single(graph, text)
    return _fit(graph, target, wanted)


def _single(graph: FabricGraph, text: str) -> ProbeTarget:
    rank = _RANK.match(text)
    if rank is not None and "rank" not in graph.nodes and "rank" not in graph.switches:
        try:
            placed = graph.placement(int(rank.group(1)))
        except UnknownRank as exc:
            raise TargetError(str(exc)) from None
        text = f"{placed.node}:gpu{placed.gpu}"
    if text in graph.nodes:
        return ProbeTarget("node", text, node=graph.nodes[text])
    if text in graph.switches:
        return ProbeTarget("switch", text, switch=graph.switches[text])
    if text in graph.optics:
        return ProbeTarget("link", text, link_index=graph.optics[text])
    if text in graph.link_ids:
        return ProbeTarget("link", text, link_index=graph.link_ids[text])
    if ":" in text:
        device, port = split_key(text)
        if device in graph.nodes:
            node = graph.nodes[device]
            gpu_match = _GPU.match(port)
            if gpu_match:
                gpu = next((g for g in node.gpus if g.index == int(gpu_match.group(1))), None)
                if gpu is None:
                    raise TargetError(f"{device} has no GPU {gpu_match.group(1)} "
                                      f"(it has {len(node.gpus)})")
                return ProbeTarget("gpu", f"{device}:gpu{gpu.index}", node=node, gpu=gpu)
            nic = graph.find_nic(device, port)
            if nic is None:
                names = ", ".join(n.name for n in node.nics) or "none"
                raise TargetError(f"{device} has no NIC {port!r} (NICs: {names})")
            return ProbeTarget("nic", f"{device}:{nic.name}", node=node, nic=nic)
        if device in graph.switches:
            return ProbeTarget("port", text, switch=graph.switches[device], port=port,
                               link_index=graph.port_links.get(text))
    raise TargetError(f"{text!r} is not a node, NIC, GPU, switch, switch port, optic or link "
                      "of this fabric")


def _fit(graph: FabricGraph, target: ProbeTarget, wanted: TargetKind) -> ProbeTarget:
    """Adapt a resolved target to what the probe wants, where that is unambiguous."""
    if target.kind == wanted:
        return target
    if wanted == "node" and target.node is not None:
        return ProbeTarget("node", target.node.hostname, node=target.node)
    if wanted == "nic" and target.gpu is not None and target.node is not None:
        # A GPU (a rank's, say) stands for the NIC it sends through.
        nic = next(iter(graph.nics_of_gpu(target.node.hostname, target.gpu.index)), None)
        if nic is not None:
            return ProbeTarget("nic", f"{target.node.hostname}:{nic.name}", node=target.node,
                               nic=nic)
    if wanted == "switch" and target.switch is not None:
        return ProbeTarget("switch", target.switch.name, switch=target.switch)
    if wanted in ("port", "link") and (target.link_index is not None or target.kind == "nic"):
        return _link_end(graph, target, wanted)
    raise TargetError(f"this probe runs against a {wanted}, and {target.name} is a "
                      f"{target.kind}: try {_example(graph, wanted, target)}")


def _link_end(graph: FabricGraph, target: ProbeTarget, wanted: TargetKind) -> ProbeTarget:
    index = target.link_index
    if index is None and target.nic is not None and target.node is not None:
        attachment = graph.attachments.get((target.node.hostname, target.nic.name))
        index = attachment.link_index if attachment else None
    if index is None:
        raise TargetError(f"{target.name} has no cable in the topology")
    link = graph.topology.links[index]
    for end in (link.a, link.b):
        device, port = split_key(end)
        if device in graph.switches:
            return ProbeTarget("port" if wanted == "port" else "link", end if wanted == "port"
                               else target.name, switch=graph.switches[device], port=port,
                               link_index=index)
    raise TargetError(f"{target.name}: its cable does not end on a switch")


def _pair(graph: FabricGraph, text: str, wanted: TargetKind) -> ProbeTarget:
    first_text, _, second_text = text.partition(",")
    if wanted != "node-pair":
        raise TargetError(f"this probe runs against one {wanted}, not a pair")
    first, second = _single(graph, first_text.strip()), _single(graph, second_text.strip())
    for end in (first, second):
        if end.node is None:
            raise TargetError(f"{end.name} is not a node or NIC: a pair is two nodes")
    peer = ProbeTarget(second.kind, second.name, node=second.node, nic=second.nic)
    return ProbeTarget("node-pair", f"{first.name},{second.name}", node=first.node,
                       nic=first.nic, peer=peer)


def _example(graph: FabricGraph | None, wanted: TargetKind,
             near: ProbeTarget | None = None) -> str:
    if graph is None or not graph.nodes:
        return {"nic": "node:mlx5_0", "gpu": "node:gpu0", "switch": "leaf01",
                "port": "leaf01:Ethernet0", "node-pair": "nodeA,nodeB"}.get(wanted, "a name")
    node = near.node if near is not None and near.node is not None else \
        next(iter(graph.nodes.values()))
    switch = next(iter(graph.switches), "leaf01")
    examples = {
        "node": node.hostname,
        "nic": f"{node.hostname}:{node.nics[0].name}" if node.nics else "node:mlx5_0",
        "gpu": f"{node.hostname}:gpu0",
        "switch": switch,
        "port": next((e for e in graph.port_links if e.startswith(f"{switch}:")), switch),
        "link": next(iter(graph.optics), "an optic id"),
        "node-pair": ",".join(list(graph.nodes)[:2]),
        "local": "localhost",
    }
    return examples.get(wanted, "a name")


# target sets ------------------------------------------------------------------------------------
def is_set(text: str | None) -> bool:
    """True when `text` names a set of targets (a glob, a range, `rail:` / `leaf:`, a list).

    A comma between two plain names is a pair (for pair probes) or a list (for the others):
    `resolve_set` tells them apart by the probe; this says only whether set syntax is used.
    """
    if text is None:
        return False
    text = text.strip()
    return text.startswith(_SET_PREFIXES) or bool(_GLOB.search(text)) or \
        bool(_RANGE.search(text)) or len(_split_list(text)) > 2


def resolve_set(graph: FabricGraph | None, text: str | None,
                wanted: TargetKind) -> list[ProbeTarget]:
    """Every target `text` names, in topology order, each once. Raises `TargetError`.

    A plain name gives one target (as `resolve`); a pair probe takes exactly one pair.
    """
    if text is None or text.strip() in LOCAL_NAMES or (not is_set(text) and (
            wanted == "node-pair" or "," not in text)):
        return [resolve(graph, text, wanted)]
    if wanted == "node-pair":
        raise TargetError("a pair probe runs on one pair (nodeA,nodeB), not on a set")
    if graph is None:
        raise TargetError(f"no topology is loaded to find {text.strip()!r} in")
    found: dict[str, ProbeTarget] = {}
    for part in _split_list(text.strip()):
        for target in _members(graph, part, wanted):
            found.setdefault(target.name, target)
    return list(found.values())


def _split_list(text: str) -> list[str]:
    """Split at commas outside brackets: `node[1,2],node5` -> `node[1,2]`, `node5`."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    parts.append(current.strip())
    return [p for p in parts if p]


def _members(graph: FabricGraph, part: str, wanted: TargetKind) -> list[ProbeTarget]:
    if part.startswith("rail:"):
        return _rail(graph, part.removeprefix("rail:").strip(), wanted)
    if part.startswith("leaf:"):
        return _leaf(graph, part.removeprefix("leaf:").strip(), wanted)
    names = _hostlist(part)
    out: list[ProbeTarget] = []
    for name in names:
        if _GLOB.search(name):
            out += _glob(graph, name, wanted)
        else:
            out.append(resolve(graph, name, wanted))
    return out


def _hostlist(text: str) -> list[str]:
    """Expand hostlist ranges: `node[001-003]:mlx5_[0-1]` -> six names (zero padding kept);
    glob characters and classes around them (`node[001,003]:*`) are kept for `_glob`."""
    from fabtui.hostlist import HostlistError, expand

    if not _RANGE.search(text):
        return [text]
    # Only the digit ranges are a host list; the glob parts ride through NodeSet as
    # private-use characters and come back unchanged.
    kept: list[str] = []
    masked, last = "", 0
    for match in _RANGE.finditer(text):
        masked += _mask(text[last:match.start()], kept) + match.group(0)
        last = match.end()
    masked += _mask(text[last:], kept)
    try:
        names = expand(masked)
    except HostlistError as exc:
        raise TargetError(str(exc).replace(repr(masked), repr(text))) from None
    return [_unmask(name, kept) for name in names]


_MASK_BASE = 0xE000


def _mask(literal: str, kept: list[str]) -> str:
    """`literal` with each glob character or class replaced by one private-use character."""
    def hide(match: re.Match[str]) -> str:
        kept.append(match.group(0))
        return chr(_MASK_BASE + len(kept) - 1)

    return re.sub(r"\[[^\]]*\]|[*?,]", hide, literal)


def _unmask(name: str, kept: list[str]) -> str:
    return "".join(kept[ord(c) - _MASK_BASE] if _MASK_BASE <= ord(c) < _MASK_BASE + len(kept)
                   else c for c in name)


def _names(graph: FabricGraph, kind: TargetKind) -> Iterable[str]:
    """Every name of a target of `kind`, in topology order."""
    if kind == "node":
        return list(graph.nodes)
    if kind == "nic":
        return [f"{h}:{nic.name}" for h, node in graph.nodes.items() for nic in node.nics]
    if kind == "gpu":
        return [f"{h}:gpu{gpu.index}" for h, node in graph.nodes.items() for gpu in node.gpus]
    if kind == "switch":
        return list(graph.switches)
    if kind == "port":
        return [e for e in graph.port_links if device_of(e) in graph.switches]
    if kind == "link":
        return list(graph.link_ids)
    return []


_KINDS: tuple[TargetKind, ...] = ("node", "nic", "gpu", "switch", "port", "link")


def _glob(graph: FabricGraph, pattern: str, wanted: TargetKind) -> list[ProbeTarget]:
    """Targets whose names match `pattern`: of the wanted kind, else of any kind that fits."""
    direct = [n for n in _names(graph, wanted) if fnmatch.fnmatchcase(n, pattern)]
    if direct:
        return [resolve(graph, n, wanted) for n in direct]
    fitted: list[ProbeTarget] = []
    first_error: TargetError | None = None
    for kind in _KINDS:
        for name in _names(graph, kind):
            if not fnmatch.fnmatchcase(name, pattern):
                continue
            try:
                fitted.append(resolve(graph, name, wanted))
            except TargetError as exc:
                first_error = first_error or exc
    if fitted:
        return fitted
    if first_error is not None:
        raise TargetError(f"{pattern!r} matches no {wanted} ({first_error})")
    raise TargetError(f"{pattern!r} matches no {wanted} of this fabric "
                      f"(a {wanted} is named like {_example(graph, wanted)})")


def _rail(graph: FabricGraph, text: str, wanted: TargetKind) -> list[ProbeTarget]:
    rails = sorted({nic.rail for node in graph.nodes.values() for nic in node.nics})
    if not text.isdigit():
        raise TargetError(f"rail:{text}: a rail is a number ({_rails_text(rails)})")
    rail = int(text)
    if wanted == "switch":
        leaves = [s for s in graph.switches.values() if rail in s.rail]
        if not leaves:
            raise TargetError(f"rail:{rail}: no leaf serves rail {rail} ({_rails_text(rails)})")
        return [ProbeTarget("switch", s.name, switch=s) for s in leaves]
    nics = [f"{h}:{nic.name}" for h, node in graph.nodes.items() for nic in node.nics
            if nic.rail == rail]
    if not nics:
        raise TargetError(f"rail:{rail}: no NIC is on rail {rail} ({_rails_text(rails)})")
    return [resolve(graph, n, wanted) for n in nics]


def _rails_text(rails: list[int]) -> str:
    return f"rails: {', '.join(map(str, rails))}" if rails else "this fabric has no NICs"


def _leaf(graph: FabricGraph, name: str, wanted: TargetKind) -> list[ProbeTarget]:
    switch = graph.switches.get(name)
    if switch is None:
        close = fnmatch.filter(graph.switches, f"*{name}*")[:3]
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise TargetError(f"leaf:{name}: there is no switch {name!r}{hint}")
    if wanted == "switch":
        return [ProbeTarget("switch", switch.name, switch=switch)]
    behind = graph.hosts_behind(name)
    if not behind:
        raise TargetError(f"leaf:{name}: no NIC is cabled to {name}")
    if wanted == "port":
        return [ProbeTarget("port", f"{name}:{a.port}", switch=switch, port=a.port,
                            link_index=a.link_index) for a in behind]
    return [resolve(graph, f"{a.node.hostname}:{a.nic.name}", wanted) for a in behind]
