"""The other half of the planted faults through a real Prometheus and Alertmanager (issue 40,
"Must show"; the first half: tests/test_alerts_live.py): a flapping link, a whole leaf down,
and two unrelated faults at once (two incidents, each naming its own element).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.alert_stack import Stack, planted, stack_fixture


@pytest.fixture
def stack(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Stack]:
    yield from stack_fixture(tmp_path, request)


@pytest.mark.parametrize(("scenario", "suspect"), [
    ("link-flap", "leaf-g00-r1:Ethernet32"), ("leaf-down", "leaf-g00-r2")])
def test_each_planted_fault_is_one_incident_naming_it_first(stack: Stack, scenario: str,
                                                           suspect: str) -> None:
    incidents = planted(stack, scenario)
    assert [i.suspect for i in incidents] == [suspect], stack.lines[-10:]
    (incident,) = incidents
    assert incident.context.blast.get("component") == suspect
    if scenario == "leaf-down":  # rail 2 of every node and both spines' ports to it
        elements = {a.element for a in incident.explains}
        assert {f"node00{n}:mlx5_2" for n in range(1, 9)} <= elements
        assert any(e.startswith("spine-01:") for e in elements)
        assert any(e.startswith("spine-02:") for e in elements)


def test_two_faults_at_once_are_two_incidents(stack: Stack) -> None:
    incidents = planted(stack, "flap-and-uplink-down", want=2)
    assert sorted(i.suspect for i in incidents) == ["leaf-g00-r1:Ethernet32",
                                                    "leaf-g00-r6:Ethernet80"]
