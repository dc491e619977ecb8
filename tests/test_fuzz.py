"""Whatever bytes arrive as a topology file, the answer is an InputError or a topology."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabtui.errors import InputError
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import LoadedTopology, topology_from_doc
from fabtui.topology.validate import validate
from fabtui.yamldoc import parse_yaml

KEYS = ["cluster", "name", "nodes", "hostname", "gpus", "nics", "index", "pci", "numa", "rail",
        "speed", "switches", "role", "links", "a", "b", "template", "params", "overrides",
        "planes", "plane", "mtu", "optic", "leaf", "spine", "gpus"]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 500), st.sampled_from(
    ["400G", "NDR", "0000:18:00.0", "18:00.0", "leaf", "n1:mlx5_0", "leaf1:Ethernet0", "", "x",
     "rail-optimized", "-inf", "mlx5_0"]))
VALUES: st.SearchStrategy[Any] = st.recursive(
    SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.sampled_from(KEYS), children, max_size=5)),
    max_leaves=25)


def _load(text: str) -> LoadedTopology | None:
    try:
        return topology_from_doc(parse_yaml(text, "fuzz.yaml"))
    except InputError as exc:
        assert exc.problems
        assert all(str(p).startswith("fuzz.yaml") or str(p).startswith("--param")
                   for p in exc.problems)
        return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_random_text_never_raises_anything_else(text: str) -> None:
    _load(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=6))
def test_random_structures_load_or_fail_cleanly(data: dict[str, Any]) -> None:
    import json

    loaded = _load(json.dumps(data))
    if loaded is not None:
        graph = FabricGraph(loaded.topology)
        validate(loaded, graph)
