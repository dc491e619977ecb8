"""From planted faults to incidents through a real Prometheus and a real Alertmanager (issue 40,
"Must show"): a healthy fabric raises none; a PFC storm spreading to the uplinks, a leaf uplink
down and an ageing optic each become exactly one incident naming the planted element first;
resolved alerts resolve it. The stack and how faults are planted: tests/support/alert_stack.py
(the other half of the faults: tests/test_alerts_live_more.py, a stack of its own, so the two
run side by side).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.support.alert_stack import Stack, finish, planted, stack_fixture


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    yield from stack_fixture(tmp_path_factory)


def test_a_healthy_fabric_raises_no_incident(stack: Stack) -> None:
    stack.all_resolved()
    before = len(stack.receiver.book.incidents)
    time.sleep(15)  # a rate window and then some, every rule evaluated many times
    assert stack.firing() == []
    assert len(stack.receiver.book.incidents) == before


@pytest.mark.parametrize(("scenario", "suspect"), [
    ("pfc-storm-spreading", "node006:mlx5_4"), ("leaf-uplink-down", "leaf-g00-r6:Ethernet80"),
    ("optic-degrading", "leaf-g00-r3:Ethernet16")])
def test_each_planted_fault_is_one_incident_naming_it_first(stack: Stack, scenario: str,
                                                           suspect: str) -> None:
    try:
        incidents = planted(stack, scenario)
        assert [i.suspect for i in incidents] == [suspect], stack.lines[-10:]
        (incident,) = incidents
        assert incident.explains[0].element in (suspect, *(
            a.element for a in incident.explains if a.role == "cause"))
        assert incident.context.blast.get("component") == suspect
        assert incident.context.runbook
        if scenario == "pfc-storm-spreading":  # the uplinks' pause is explained, not paged
            spread = {a.element for a in incident.explains if a.role == "symptom"}
            assert spread and all(e.startswith("leaf-g00-r4:") for e in spread), spread
    finally:
        finish(stack)


def test_alerts_resolved_resolve_the_incident(stack: Stack) -> None:
    try:
        (incident,) = planted(stack, "leaf-uplink-down")
    finally:
        finish(stack)
    assert stack.receiver.book.incidents[incident.id].status == "resolved"
