"""A link flap against the job's IB retry window, computed from its NCCL version and env.

4.096 us x 2^NCCL_IB_TIMEOUT x (NCCL_IB_RETRY_CNT + 1): 8.6 s on NCCL 2.21 (timeout 18), so a
5 s flap is ridden out and a 20 s one ends the job with completion error 12; with
NCCL_IB_TIMEOUT=22 the same 20 s flap is survived (docs/thresholds.md section 1).
"""

from __future__ import annotations

import pytest

from fabtui.model.probe import Verdict
from fabtui.parsers import registry
from fabtui.paths import demo_topology, shipped_templates
from fabtui.sim.core import Sim
from fabtui.sim.logs import job_log
from fabtui.sim.scenario import Workload, find_scenario
from fabtui.sim.state import build_sim, fresh_state
from fabtui.topology.expected import ib_retry_window_s
from tests.support.sim import JOB_LOG, Fabric, fabric, flagged, only, scenario

__all__ = ["fabric"]  # the fixture, from tests.support.sim


def sim_of(name: str, **workload: object) -> Sim:
    sim = build_sim(fresh_state(demo_topology(), find_scenario(name), [shipped_templates()]))
    if not workload:
        return sim
    changed = sim.scenario.model_copy(update={"workload": Workload(**{
        **sim.scenario.workload.model_dump(), **workload})})
    return Sim(sim.topology, changed, seed=sim.seed)


@scenario("link-flap-short")
def test_a_flap_shorter_than_the_retry_window_is_survived(fabric: Fabric) -> None:
    log = fabric.probe("logs.nccl", "node001", **JOB_LOG)
    assert log.verdict is not Verdict.FAIL, flagged(log)
    window = [m.value for m in log.metrics if m.name == "ib_retry_window_s"]
    assert window == [pytest.approx(8.59, abs=0.01)]
    only(fabric.probe("logs.dmesg", "node004"), "node004:mlx5_2", Verdict.FAIL)  # 5 in 24 h
    sim = sim_of("link-flap-short")
    assert sim.job_failure() is None and sim.job_factor(sim.scenario.start) == 1.0


@scenario("link-flap-long")
def test_a_flap_longer_than_the_retry_window_ends_the_job_with_error_12(
        fabric: Fabric) -> None:
    log = fabric.probe("logs.nccl", "node001", **JOB_LOG)
    assert log.verdict is Verdict.FAIL
    suspects = {m.component for m in log.metrics if m.name == "suspect_nic"}
    assert "node005:mlx5_6" in suspects, suspects
    sim = sim_of("link-flap-long")
    failure = sim.job_failure()
    assert failure is not None and failure[0] == pytest.approx(120 + 8.59, abs=0.01)
    assert sim.job_factor(failure[0] + 1) == 0.0  # the job is gone: no more steps or traffic
    assert sim.rate(sim.link_of("node001:mlx5_0") or 0, failure[0] + 1) == 0.0


def test_the_retry_window_follows_the_jobs_nccl_version_and_env() -> None:
    longer = sim_of("link-flap-long", nccl_env={"NCCL_IB_TIMEOUT": "22"})
    assert longer.retry_window_s() == pytest.approx(137.4, abs=0.1)
    assert longer.job_failure() is None  # a 20 s flap is nothing to a 137 s window
    newer = sim_of("link-flap-long", nccl_version="2.23.4")
    assert newer.retry_window_s() == pytest.approx(34.36, abs=0.01) and not newer.job_failure()
    # What the job's log says gives the evaluator the same window as the simulation uses.
    text = job_log(longer, 300.0)
    assert "NCCL_IB_TIMEOUT set by environment to 22." in text
    parsed = registry.get("nccl-log").module.parse(text)
    assert ib_retry_window_s(parsed.nccl_version, parsed.env) == longer.retry_window_s()
