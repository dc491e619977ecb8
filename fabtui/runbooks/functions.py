"""Functions runbook expressions may call: results of earlier blocks, and the fabric's map.

Results are plain values (a probe block's result is `{verdict, metrics: [{name, value,
component, verdict}], findings, parsed}`), so every function here takes and returns plain data.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from typing import Any

from fabtui.model.element import device_of, split_key
from fabtui.parsers import ibstat
from fabtui.parsers.errors import ParseError
from fabtui.paths import shipped_dir
from fabtui.probes.evaluators._optics import light_blame
from fabtui.probes.ib_ports import ib_lid, ib_port_number, xmit_wait_share
from fabtui.topology.expected import (
    Expected,
    expected_busbw,
    expected_rdma_gbps,
    ib_retry_window_s,
    node_shape,
)
from fabtui.topology.graph import FabricGraph, UnknownRank
from fabtui.topology.platform import PCIE_PATHS, platform_of

Function = Callable[..., Any]


def _metrics(result: Any) -> list[dict[str, Any]]:
    if isinstance(result, dict):
        found = result.get("metrics") or []
        return [m for m in found if isinstance(m, dict)]
    return []


def metrics(result: Any, name: str | None = None, verdict: str | None = None) -> list[Any]:
    """The metrics of a probe result, optionally only those called `name` / with `verdict`."""
    return [m for m in _metrics(result) if (name is None or _matches(m.get("name"), name))
            and (verdict is None or m.get("verdict") == verdict)]


def _matches(actual: Any, wanted: str) -> bool:
    if not isinstance(actual, str):
        return False
    if wanted.endswith("*"):
        return actual.startswith(wanted[:-1])
    return actual == wanted


def metric(result: Any, name: str, component: str | None = None) -> Any:
    """The first metric called `name` (on `component` when given), or None."""
    for m in metrics(result, name):
        if component is None or m.get("component") == component or \
                str(m.get("component", "")).startswith(component + "/"):
            return m
    return None


def value(result: Any, name: str, component: str | None = None) -> Any:
    """The value of `metric(result, name, component)`, or None."""
    found = metric(result, name, component)
    return found.get("value") if found else None


def failing(result: Any, verdict: str = "fail") -> list[str]:
    """Components of a result with a metric at `verdict` (fail by default), de-duplicated."""
    seen: list[str] = []
    for m in _metrics(result):
        component = str(m.get("component", ""))
        if m.get("verdict") == verdict and component not in seen:
            seen.append(component)
    return seen


def flagged(result: Any) -> list[str]:
    """Components of a result with any metric that is not ok."""
    seen: list[str] = []
    for m in _metrics(result):
        component = str(m.get("component", ""))
        if m.get("verdict") in ("warn", "fail", "error") and component not in seen:
            seen.append(component)
    return seen


def port_of(component: str | None) -> str | None:
    """`leaf:Ethernet16` from `leaf:Ethernet16/lane2` or `leaf:Ethernet16/UC3` (as is otherwise)."""
    if not component:
        return None
    return re.sub(r"/(?:lane\d+|UC\d+|MC\d+)$", "", str(component))


def regex(pattern: str, text: Any) -> dict[str, Any] | None:
    """The named groups of the first match of `pattern` in `text` (None: no match)."""
    match = re.search(pattern, str(text or ""), re.M)
    if match is None:
        return None
    groups = match.groupdict()
    return groups if groups else {"match": match.group(0)}


def first(items: Any, default: Any = None) -> Any:
    """The first item of a list (or `default`)."""
    if isinstance(items, list | tuple) and items:
        return items[0]
    return default


def join(items: Any, separator: str = ", ") -> str:
    """Items as one text."""
    return separator.join(str(i) for i in items or [])


_IBSTAT_HEADER = re.compile(r"^(?:CA|Switch):?\s+'[^']*'\s*$")


def _ibstat_text(text: str) -> str:
    """The lines `ibstat` printed in a block's output that holds other tools' output around it
    (`ibv_devinfo` also prints `state:`, which must not land on an ibstat port): each CA header
    and the indented lines under it."""
    kept: list[str] = []
    inside = False
    for line in text.splitlines():
        if _IBSTAT_HEADER.match(line):
            inside = True
        elif line.strip() and not line[:1].isspace():
            inside = False
        if inside:
            kept.append(line)
    return "\n".join(kept)


def hca_links(text: Any) -> list[dict[str, Any]]:
    """The HCA ports `ibstat` printed in `text` (a block's output; other tools' output around it
    is skipped), as `{device, port, state, physical_state, up, rate, evidence}`.

    `up`: the port is Active on a link that trained (physical state LinkUp). `rate` (Gb/s) is
    None unless the link trained: ibstat prints `Rate: 10` on a port that is Down, its reset
    value, so a down link's speed is unknown, never 10 (the parser, fabtui/parsers/ibstat.py).
    `evidence` is what ibstat said (`ibstat State: Down, Physical state: Polling`). No ibstat
    output: an empty list."""
    section = _ibstat_text(str(text or ""))
    if not section:
        return []
    try:
        parsed = ibstat.parse(section)
    except ParseError:
        return []
    links = []
    for device, ca in parsed.cas.items():
        for number, port in ca.ports.items():
            trained = (port.physical_state or "").lower() == "linkup"
            rate = port.rate
            links.append({
                "device": device, "port": number, "state": port.state,
                "physical_state": port.physical_state,
                "up": trained and (port.state or "").lower() == "active",
                "rate": int(rate) if rate is not None and rate == int(rate) else rate,
                "evidence": f"ibstat State: {port.state or 'not printed'}, Physical state: "
                            f"{port.physical_state or 'not printed'}"})
    return links


def _plain(expected: Expected | None) -> dict[str, Any] | None:
    if expected is None:
        return None
    return {"value": expected.value, "warn": expected.warn, "fail": expected.fail,
            "unit": expected.unit, "basis": expected.basis, "source": expected.source}


def ib_retry_window(nccl_version: Any = None, env: Any = None) -> float:
    """Seconds a link may be down before the job's IB QPs give up (completion error 12), from
    its NCCL version and NCCL_IB_TIMEOUT / NCCL_IB_RETRY_CNT (a parsed NCCL log has both)."""
    settings = {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}
    return round(ib_retry_window_s(str(nccl_version) if nccl_version else None, settings), 2)


def optic_blame(near: Any, far: Any) -> dict[str, Any] | None:
    """Near end receives too little light: is it its own optic, the far end's transmitter or
    the fibre between? `near` and `far` are the DOM probe results of the cable's two ends (a
    leaf port's `switch.dom`, the NIC's `nic.mlxlink`); None when the near end's light is fine."""
    return light_blame(_metrics(near), _metrics(far))


_TEMPLATE_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")


def template(name: Any) -> dict[str, Any]:
    """The data template `name` (`runbooks/templates/NAME.toml`: the fleet's expected
    settings a runbook compares readings against), as plain data. Reads the file; a name that
    is not one raises ValueError (the block cannot run)."""
    text = str(name)
    if not _TEMPLATE_NAME.fullmatch(text):
        raise ValueError(f"template name {text!r}: lower-case letters, digits and '-' only")
    path = shipped_dir("runbooks") / "templates" / f"{text}.toml"
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"no template {text!r} (looked for {path})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: {exc}") from None


def fabric_functions(graph: FabricGraph | None) -> dict[str, Function]:
    """Every function for expressions; the topology ones need the fabric graph."""
    functions: dict[str, Function] = {
        "metrics": metrics, "metric": metric, "value": value, "failing": failing,
        "flagged": flagged, "port_of": port_of, "regex": regex, "first": first, "join": join,
        "ib_retry_window": ib_retry_window, "optic_blame": optic_blame, "template": template,
        "xmit_wait_share": xmit_wait_share, "ib_lid": ib_lid, "ib_port_number": ib_port_number,
        "hca_links": hca_links,
    }

    def fabric() -> FabricGraph:
        if graph is None:
            raise ValueError("this needs the fabric's topology, and there is none here")
        return graph

    def far_end(endpoint: str) -> str | None:
        """The `device:port` at the other end of the cable at `endpoint` (a NIC or a port)."""
        return fabric().far_end(str(endpoint)) if endpoint else None

    def optic(endpoint: str) -> str | None:
        """The optic id recorded on the link at `endpoint`."""
        return fabric().optic_at(str(endpoint))

    def rank_slot(rank: int) -> Any:
        try:
            return fabric().placement(int(rank))
        except UnknownRank:
            return None

    def node_of_rank(rank: int) -> str | None:
        """The node a rank runs on (default placement or the configured rank file)."""
        slot = rank_slot(rank)
        return slot.node if slot else None

    def gpu_of_rank(rank: int) -> int | None:
        """The GPU index a rank runs on."""
        slot = rank_slot(rank)
        return slot.gpu if slot else None

    def nic_of_rank(rank: int) -> str | None:
        """`node:mlx5_N`: the (first) NIC a rank's GPU sends through."""
        slot = rank_slot(rank)
        if slot is None or not slot.nics:
            return None
        return f"{slot.node}:{slot.nics[0].nic}"

    def netdev(endpoint: str) -> str | None:
        """The Linux interface of the NIC at `endpoint` (`node003:mlx5_3` -> its netdev)."""
        device, port = split_key(str(endpoint))
        nic = fabric().find_nic(device, port)
        return nic.netdev if nic is not None else None

    def blast(component: str) -> dict[str, Any]:
        """What fails with `component` (switch, node, NIC, port, optic, link): the plain form
        of `fabtui topo blast` — `{component, kind, links_down, switches_down, nodes: [{node,
        nics_down, injection_lost, cross_leaf_lost}], ranks: [...], rails: [...], notes}`."""
        from fabtui.topology.blast import UnknownComponent, blast_radius

        try:
            return blast_radius(fabric(), str(component)).model_dump(mode="json")
        except UnknownComponent as exc:
            raise ValueError(str(exc)) from None

    def nic_speed(endpoint: str) -> int | None:
        """The link speed (Gb/s) the topology gives the NIC at `endpoint`."""
        device, port = split_key(str(endpoint))
        nic = fabric().find_nic(device, port)
        return nic.speed if nic is not None else None

    def leaf_of(endpoint: str) -> str | None:
        """The switch a NIC is cabled to (or the device of a `switch:port`)."""
        device, _ = split_key(str(endpoint))
        if device in fabric().switches:
            return device
        far = far_end(endpoint)
        return device_of(far) if far else None

    def nic_by_ip(address: str) -> str | None:
        """`node:mlx5_N` whose address is `address` (as NCCL logs name peers)."""
        found = fabric().nic_ips.get(str(address))
        return f"{found[0]}:{found[1]}" if found else None

    def pfc_origin(*results: Any) -> dict[str, Any] | None:
        """Where the pause in these `switch.pfc` / `switch.pfc_history` results comes from:
        a storm's host sources, or a deadlock's loop of switches (fabtui.probes.pfc_paths)."""
        from fabtui.probes.pfc_paths import pause_origin

        flat = [r for item in results for r in (item if isinstance(item, list) else [item])
                if isinstance(r, dict)]
        return pause_origin(flat, fabric())

    def ecn_evidence(*results: Any) -> dict[str, Any]:
        """Did the switches in these `switch.ecn` / `switch.pfc` results mark ECN on their
        lossless queues while they paused: `{kind, verdict, marked, paused, max_pause, why}`
        (fabtui.probes.ecn)."""
        from fabtui.probes.ecn import ecn_evidence as judge_ecn

        flat = [r for item in results for r in (item if isinstance(item, list) else [item])
                if isinstance(r, dict)]
        return judge_ecn(flat)

    def ib_element(discovered: Any, guid: Any, port: Any) -> str | None:
        """`switch:port` or `node:mlx5_N` of node GUID `guid` port `port`, through an
        `ib.ibnetdiscover` result (fabtui.probes.ib_ports)."""
        from fabtui.probes.ib_ports import ib_element as element

        return element(discovered, guid, port, fabric())

    def nodes_behind(leaf: str) -> list[str]:
        """Nodes with a NIC cabled to `leaf`."""
        return sorted({a.node.hostname for a in fabric().hosts_behind(str(leaf))})

    def is_switch(name: str) -> bool:
        """True when `name` (or the device of `name:port`) is a switch."""
        return device_of(str(name)) in fabric().switches

    def expected_busbw_of(collective: str, nodes: Any) -> dict[str, Any] | None:
        """What a healthy fabric reaches: `{value, warn, fail, unit, basis, source}` busbw of
        `collective` over `nodes` (hostnames, one `node` or a count of the fabric's nodes), one
        rank per GPU; None when the topology cannot say (unknown GPU model on one node)."""
        if isinstance(nodes, int | float) and not isinstance(nodes, bool):
            count, members = int(nodes), list(fabric().nodes.values())
        else:
            names = [nodes] if isinstance(nodes, str) else [str(n) for n in nodes or []]
            members = [fabric().nodes[n] for n in names if n in fabric().nodes]
            count = len(members)
        shape = node_shape(members)
        return _plain(expected_busbw(str(collective), count, shape)) if shape else None

    def nics_of(node: str) -> list[str]:
        """`node:mlx5_N` of every rail NIC of `node`, in rail order (4 on a GB200 tray, 8 on
        an HGX node); empty for a name that is not a node."""
        found = fabric().nodes.get(str(node))
        nics = sorted(found.nics, key=lambda n: (n.rail, n.name)) if found is not None else []
        return [f"{found.hostname}:{n.name}" for n in nics] if found is not None else []

    def gpus_of(node: str) -> int:
        """How many GPUs the topology gives `node` (0 for a name that is not a node)."""
        found = fabric().nodes.get(str(node))
        return len(found.gpus) if found is not None else 0

    def platform(node: str) -> dict[str, Any]:
        """What `node`'s GPUs are and which rules apply to them (fabtui.topology.platform):
        `{generation, grace, gpu_nic_paths, rule, nvlink_domain, domain_nodes}`;
        `generation` None when the topology does not name a known GPU."""
        found = fabric().nodes.get(str(node))
        gpu = platform_of(found.gpus[0].model) if found is not None and found.gpus else None
        domain = found.nvlink_domain if found is not None else None
        members = sorted(n.hostname for n in fabric().nodes.values()
                         if domain is not None and n.nvlink_domain == domain)
        return {"generation": gpu.generation if gpu else None,
                "grace": bool(gpu and gpu.grace),
                "gpu_nic_paths": list(gpu.gpu_nic_paths if gpu else PCIE_PATHS),
                "rule": gpu.gpu_nic_rule if gpu else "PIX or PXB",
                "nvlink_domain": domain, "domain_nodes": members}

    def expected_rdma(endpoint: str) -> dict[str, Any] | None:
        """The RDMA write ceiling (Gb/s, with limits) of the NIC at `endpoint` (`node:mlx5_0`)."""
        device, port = split_key(str(endpoint))
        nic = fabric().find_nic(device, port)
        return _plain(expected_rdma_gbps(nic.speed)) if nic is not None else None

    functions.update({
        "expected_busbw": expected_busbw_of, "expected_rdma": expected_rdma,
        "far_end": far_end, "optic": optic, "node_of_rank": node_of_rank,
        "gpu_of_rank": gpu_of_rank, "nic_of_rank": nic_of_rank, "leaf_of": leaf_of,
        "netdev": netdev, "nic_speed": nic_speed, "blast": blast,
        "nic_by_ip": nic_by_ip, "nodes_behind": nodes_behind, "is_switch": is_switch,
        "ib_element": ib_element,
        "pfc_origin": pfc_origin, "ecn_evidence": ecn_evidence, "nics_of": nics_of,
        "gpus_of": gpus_of,
        "platform": platform,
        "nodes": lambda: sorted(fabric().nodes), "switches": lambda: sorted(fabric().switches),
    })
    return functions
