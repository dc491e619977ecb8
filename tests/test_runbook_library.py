"""Every shipped runbook passes its own declared tests on the simulated fabric.

The cases (scenario, inputs, answers, expected path and outcome) live in each runbook's front
matter; this runs each one headless on the simulated fabric, as `fabtui runbook test`
does in CI.
"""

from __future__ import annotations

import asyncio

import pytest

from fabtui.model.runbook import Runbook, RunbookTest
from fabtui.paths import demo_topology, shipped_dir, shipped_templates
from fabtui.probes.catalog import load_catalog
from fabtui.runbooks.library import load_library
from fabtui.runbooks.testing import run_test

LIBRARY = load_library([shipped_dir("runbooks")])
CASES = [(book, case) for book in sorted(LIBRARY.runbooks.values(), key=lambda b: b.meta.id)
         for case in book.meta.tests]
SHIPPED = {"nccl-hang-triage", "optic-replacement", "busbw-low", "pfc-storm", "link-flap",
           "slow-node", "rdma-baseline", "new-node-acceptance", "gdr-not-effective",
           "rank-mapping-check", "multi-job-interference", "customer-acceptance",
           "cluster-bringup-audit", "network-expansion", "rdma-error-triage", "major-incident",
           "roce-qos-audit", "nccl-perf-tuning", "ib-fabric-triage"}


def test_the_library_is_complete_and_every_runbook_has_tests() -> None:
    assert not LIBRARY.broken
    assert set(LIBRARY.runbooks) >= SHIPPED
    assert all(len(book.meta.tests) >= 2 for book in LIBRARY.runbooks.values())


@pytest.mark.parametrize(("book", "case"), CASES,
                         ids=[f"{b.meta.id}/{c.name}" for b, c in CASES])
def test_runbook_case(book: Runbook, case: RunbookTest) -> None:
    outcome = asyncio.run(run_test(book, case, topology=demo_topology(),
                                   template_dirs=[shipped_templates()],
                                   catalog=load_catalog([shipped_dir("probes")])))
    assert outcome.passed, "\n".join(outcome.problems) + "\n" + (
        outcome.summary.text() if outcome.summary else "")


@pytest.mark.parametrize(("text", "expected"), [
    ("Watchdog caught collective operation timeout", "nccl-hang-triage"),
    ("训练任务卡住", "nccl-hang-triage"),
    ("光模块收光低", "optic-replacement"),
    ("pause frames storm on a port", "pfc-storm"),
    ("link goes down and up", "link-flap"),
    ("扩容", "network-expansion"),
    ("add nodes to the cluster", "network-expansion"),
    ("重大故障", "major-incident"),
    ("switch down", "major-incident"),
    ("RoCE QoS 配置检查", "roce-qos-audit"),
    ("PFC priority mismatch", "roce-qos-audit"),
    ("GID index mismatch", "rdma-error-triage"),
    ("RDMA 完成错误", "rdma-error-triage"),
    ("NCCL 调优", "nccl-perf-tuning"),
    ("tune NCCL environment variables", "nccl-perf-tuning"),
    ("新集群上线", "cluster-bringup-audit"),
    ("config audit", "cluster-bringup-audit"),
    ("ibdiagnet errors", "ib-fabric-triage"),
    ("PortXmitWait high", "ib-fabric-triage"),
    ("子网管理器切换", "ib-fabric-triage"),
])
def test_a_symptom_finds_its_runbook(text: str, expected: str) -> None:
    from fabtui.runbooks.library import match

    found = match(LIBRARY, text)
    assert found and found[0][1].meta.id == expected, [(s, b.meta.id) for s, b in found]
