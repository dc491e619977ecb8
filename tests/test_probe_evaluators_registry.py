"""The evaluator registry fails loudly: every shipped probe has an evaluator, a kind cannot be
registered twice, and output no evaluator judges is an `error` result, never a silent `ok`."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from fabtui.errors import RequestError
from fabtui.model.probe import Metric, ProbeDef, Verdict
from fabtui.paths import shipped_dir
from fabtui.probes.catalog import load_catalog
from fabtui.probes.evaluate import EvalContext, evaluate, hardware_classes
from fabtui.probes.evaluators.base import (
    REGISTRY,
    EvaluatorAlreadyRegistered,
    EvaluatorRegister,
    NoEvaluator,
    evaluator,
)
from fabtui.probes.runner import ProbeRunner
from fabtui.probes.targets import resolve
from fabtui.prom.catalog import MAPPED
from fabtui.prom.results import Assembler, Readings
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology

FIXTURES = Path(__file__).parent / "fixtures"
UNJUDGED = "ibswinfo"
"""A parser kind the tests make sure has no evaluator (they remove one if it ever gets one)."""


def _kind(probe: ProbeDef) -> str | None:
    """The output kind the runner evaluates a probe's result as."""
    return "nvml" if probe.transport == "nvml" else probe.parser


def test_every_shipped_probe_has_an_evaluator_for_its_output() -> None:
    catalog = load_catalog([shipped_dir("probes")])
    assert catalog
    missing = {name: _kind(probe) for name, probe in catalog.items()
               if _kind(probe) is None or _kind(probe) not in REGISTRY}
    assert not missing, f"probes whose output no evaluator judges: {missing}"


def _noop(_before: object, _after: object, _ctx: EvalContext) -> list[Metric]:
    return []


def _other(_before: object, _after: object, _ctx: EvalContext) -> list[Metric]:
    return []


def test_a_kind_registered_twice_raises_naming_the_kind_and_both_functions() -> None:
    register = EvaluatorRegister()
    register.register("some-kind", _noop)
    register.register("some-kind", _noop)  # the same function again changes nothing
    with pytest.raises(EvaluatorAlreadyRegistered) as caught:
        register.register("some-kind", _other)
    message = str(caught.value)
    assert "'some-kind'" in message
    assert f"{__name__}._noop" in message and f"{__name__}._other" in message
    assert register.get("some-kind") is _noop


def test_the_decorator_refuses_a_second_evaluator_for_a_shipped_kind() -> None:
    shipped = REGISTRY.get("ethtool-stats")
    with pytest.raises(EvaluatorAlreadyRegistered,
                       match=r"'ethtool-stats'.*ethtool_stats\.ethtool_stats.*_impostor"):
        @evaluator("ethtool-stats")
        def _impostor(_before: object, _after: object, _ctx: EvalContext) -> list[Metric]:
            return []
    assert REGISTRY.get("ethtool-stats") is shipped


def test_deregistering_an_unknown_kind_raises() -> None:
    register = EvaluatorRegister()
    with pytest.raises(NoEvaluator):
        register.deregister("nope")
    register.register("k", _noop)
    register.deregister("k")
    assert "k" not in register and register.kinds() == []


def test_evaluating_a_kind_without_an_evaluator_raises_never_returns_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(REGISTRY.available, UNJUDGED, raising=False)
    probe = ProbeDef(name="x.y", description="d", target="local", transport="local",
                     parser=UNJUDGED, command={"argv": ["true"]})
    target = resolve(None, None, "local")
    ctx = EvalContext(probe=probe, target=target, interval=1.0,
                      hardware=hardware_classes(target))
    with pytest.raises(NoEvaluator, match=f"no evaluator judges output of kind '{UNJUDGED}'"):
        evaluate(UNJUDGED, None, object(), ctx)
    assert issubclass(NoEvaluator, RequestError)


def test_a_probe_whose_output_no_evaluator_judges_is_an_error_result(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(REGISTRY.available, UNJUDGED, raising=False)
    capture = next((FIXTURES / "ibswinfo").glob("*.txt"))
    (tmp_path / "site.toml").write_text(
        '[[probe]]\nname = "site.ibswinfo"\ndescription = "vitals of an unmanaged IB switch"\n'
        f'target = "local"\ntransport = "local"\nparser = "{UNJUDGED}"\n'
        f'command.argv = ["cat", "{capture}"]\n', encoding="utf-8")
    probe = load_catalog([tmp_path])["site.ibswinfo"]

    async def run() -> tuple[Verdict, str | None, bool]:
        runner = ProbeRunner(None)
        try:
            result = await runner.run(probe, None)
        finally:
            await runner.close()
        return result.verdict, result.error, result.parsed is not None

    verdict, error, parsed = asyncio.run(run())
    assert verdict is Verdict.ERROR  # never `ok`: nothing looked at the output
    assert error is not None and f"no evaluator judges output of kind '{UNJUDGED}'" in error
    assert parsed  # what was read is still shown


def test_prometheus_values_of_a_kind_without_an_evaluator_are_an_error_result(
        monkeypatch: pytest.MonkeyPatch) -> None:
    graph = FabricGraph(load_topology(shipped_dir("topology") / "demo.yaml").topology)
    catalog = load_catalog([shipped_dir("probes")])
    mapped = next(m for m in MAPPED if m.probe == "nic.ethtool" and m.counter)
    node = next(iter(graph.nodes))
    key = f"{node}:{graph.nodes[node].nics[0].name}"
    readings = Readings()
    readings.add(mapped, key, (), 3.0)
    readings.sampled[node] = time.time()
    assembler = Assembler(graph, catalog, (mapped,))
    [ok] = assembler.results(readings, {})
    assert ok.verdict is not Verdict.ERROR and ok.metrics
    monkeypatch.delitem(REGISTRY.available, "ethtool-stats")
    [result] = assembler.results(readings, {})
    assert result.verdict is Verdict.ERROR and not result.metrics
    assert result.error and "no evaluator judges output of kind 'ethtool-stats'" in result.error
