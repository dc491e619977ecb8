"""From planted faults to incidents through a real Prometheus and a real Alertmanager (issue 40,
"Must show"): a healthy fabric raises none; a PFC storm spreading to the uplinks, a leaf uplink
down and an ageing optic each become exactly one incident naming the planted element first;
resolved alerts resolve it. The stack and how faults are planted: tests/support/alert_stack.py
(one stack per test; the other half of the faults: tests/test_alerts_live_more.py).
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabtui.alerts.incidents import RESOLVED
from fabtui.errors import RequestError
from fabtui.workspace.alerting import apply_silences
from tests.support.alert_stack import Stack, planted, stack_fixture


@pytest.fixture
def stack(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Stack]:
    yield from stack_fixture(tmp_path, request)


def test_a_healthy_fabric_raises_no_incident(stack: Stack) -> None:
    """Every rule evaluated over a whole rate window of healthy samples, and twice more:
    nothing fires, nothing reaches the receiver."""
    stack.wait_evaluated(stack.scraped + stack.window + 2 * stack.interval)
    assert stack.firing() == []
    assert stack.arrivals == [] and stack.receiver.book.incidents == {}


@pytest.mark.parametrize(("scenario", "suspect"), [
    ("pfc-storm-spreading", "node006:mlx5_4"), ("leaf-uplink-down", "leaf-g00-r6:Ethernet80"),
    ("optic-degrading", "leaf-g00-r3:Ethernet16")])
def test_each_planted_fault_is_one_incident_naming_it_first(stack: Stack, scenario: str,
                                                           suspect: str) -> None:
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
    if scenario != "leaf-uplink-down":
        # The fault ends: its alerts resolve, and so does the incident. (Not for the port
        # that comes back up: its down and up is a flap for the flap window's length.)
        stack.end_faults()
        stack.all_resolved()
        assert stack.receiver.book.incidents[incident.id].status == RESOLVED


def test_silences_go_through_the_typed_gate(stack: Stack) -> None:
    """A wrong phrase applies nothing and journals nothing; the suspect typed sends one
    silence per element to the real Alertmanager, which lists them, and the journal says so."""
    (incident,) = planted(stack, "leaf-uplink-down")
    with pytest.raises(RequestError, match="type the suspect 'leaf-g00-r6:Ethernet80'"):
        apply_silences(stack.ws, incident, "leaf-g00-r6", author="test")
    events = [e.kind for e in stack.receiver.book.journal.events(incident.id)]
    assert "silence_requested" not in events
    ids = apply_silences(stack.ws, incident, "leaf-g00-r6:Ethernet80", author="test",
                         alertmanager=stack.alertmanager.url)
    assert len(ids) == 2  # the leaf port and the spine port
    with urllib.request.urlopen(f"{stack.alertmanager.url}/api/v2/silences") as answer:
        silences = {s["id"]: s for s in json.load(answer)}
    assert set(ids) <= set(silences)
    assert all(silences[i]["comment"].startswith(f"fabtui incident {incident.id}")
               for i in ids)
    kinds = [str(e.kind) for e in stack.receiver.book.journal.events(incident.id)]
    assert kinds.index("silence_requested") < kinds.index("silence_applied")
    assert stack.receiver.book.incidents[incident.id].silences[-1]["ids"] == ids
