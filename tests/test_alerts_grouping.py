"""Alert storms -> incidents on hand-made Alertmanager payloads (issue 40, point 1).

The payloads carry the labels `fabtui prom rules` gives its alerts (the element's own labels as
the exporters name them, `fabtui_element`, `fabtui_role`, `fabtui_suspect`) on the demo fabric;
each planted fault's alerts must become exactly one incident naming the planted element first,
two faults at once two incidents, and bad input a clear note with no incident lost.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fabtui.alerts.incidents import MERGED, OPEN, RESOLVED, UNMAPPED, IncidentBook
from fabtui.alerts.locate import Locator
from fabtui.alerts.payload import PayloadError, parse_notification
from fabtui.alerts.silence import gate_phrase, suggest
from fabtui.journal.store import Journal
from fabtui.paths import demo_topology
from fabtui.prom.labels import LabelMap
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology

GRAPH = FabricGraph(load_topology(demo_topology()).topology)


def alert(name: str, element: str, role: str = "cause", suspect: str = "self",
          status: str = "firing", **labels: str) -> dict[str, Any]:
    return {"status": status, "labels": {"alertname": name, "severity": "critical",
                                         "fabtui_element": element, "fabtui_role": role,
                                         "fabtui_suspect": suspect, **labels},
            "annotations": {"summary": f"{name} on {labels}", "runbook": "pfc-storm"},
            "startsAt": "2026-12-05T03:00:00Z", "endsAt": "0001-01-01T00:00:00Z",
            "fingerprint": f"{name}-{sorted(labels.items())}"}


def port(name: str, switch: str, device: str, **kw: str) -> dict[str, Any]:
    return alert(name, "port", instance=switch, device=device, **kw)


def nic(name: str, node: str, device: str, element: str = "nic", **kw: str) -> dict[str, Any]:
    return alert(name, element, instance=f"{node}:9100", device=device, **kw)


def payload(*alerts: dict[str, Any], status: str = "firing") -> bytes:
    return json.dumps({"version": "4", "groupKey": "{}:{}", "truncatedAlerts": 0,
                       "status": status, "receiver": "fabtui", "groupLabels": {},
                       "commonLabels": {}, "commonAnnotations": {},
                       "externalURL": "http://am:9093", "alerts": list(alerts)}).encode()


@pytest.fixture
def book(tmp_path: Path) -> IncidentBook:
    return IncidentBook(Journal(tmp_path / "alerts.sqlite"), Locator(GRAPH, LabelMap()))


def suspects(book: IncidentBook) -> list[str]:
    return sorted(i.suspect for i in book.open_incidents())


STORM = (nic("FabricPfcStormFromNic", "node006", "enp153s0f0np0"),
         port("FabricPfcStormFromHost", "leaf-g00-r4", "Ethernet40", suspect="far-end"),
         port("FabricPauseSpreadingUplink", "leaf-g00-r4", "Ethernet80", role="symptom"),
         port("FabricPauseSpreadingUplink", "leaf-g00-r4", "Ethernet88", role="symptom"))
UPLINK = (port("FabricPortDown", "leaf-g00-r6", "Ethernet80", suspect="link"),
          port("FabricPortDown", "spine-01", "Ethernet26/1", suspect="link"))
OPTIC = (port("FabricOpticLaunchLow", "leaf-g00-r3", "Ethernet16"),
         nic("FabricNicCrcErrors", "node003", "enp92s0f0np0", suspect="link"),
         nic("FabricNicOutOfSequence", "node003", "mlx5_3", element="ibport", role="symptom"))
FLAP = (port("FabricPortFlapping", "leaf-g00-r1", "Ethernet32", suspect="link"),
        nic("FabricNicLinkDown", "node005", "mlx5_1", element="ibport", suspect="link"))


def leaf_down(leaf: str, rail: int) -> list[dict[str, Any]]:
    """A dead leaf: its exporter stops answering, its hosts' NICs and its spines' ports go
    down."""
    found = [alert("FabricExporterDown", "target", instance=leaf, job="sonic")]
    for host in sorted(GRAPH.nodes):
        found.append(nic("FabricNicLinkDown", host, f"mlx5_{rail}", element="ibport",
                         suspect="link"))
    for index in GRAPH.uplinks(leaf):
        link = GRAPH.topology.links[index]
        far = link.b if link.a.startswith(leaf) else link.a
        switch, _, name = far.partition(":")
        found.append(port("FabricPortDown", switch, name, suspect="link"))
    return found


@pytest.mark.parametrize(("alerts", "planted"), [
    (STORM, "node006:mlx5_4"), (UPLINK, "leaf-g00-r6:Ethernet80"),
    (OPTIC, "leaf-g00-r3:Ethernet16"), (FLAP, "leaf-g00-r1:Ethernet32"),
    (tuple(leaf_down("leaf-g00-r2", 2)), "leaf-g00-r2")],
    ids=["pfc-storm", "leaf-uplink-down", "optic-degrading", "link-flap", "leaf-down"])
def test_each_fault_is_one_incident_naming_the_planted_element(
        book: IncidentBook, alerts: tuple[dict[str, Any], ...], planted: str) -> None:
    receipt = book.receive(parse_notification(payload(*alerts)))
    assert suspects(book) == [planted]
    (incident,) = book.open_incidents()
    assert receipt.opened == [incident.id]
    assert len(incident.alerts) == len(alerts)  # every alert explained by it
    assert incident.explains[0].element in (planted, incident.explains[0].element)


def test_alerts_arriving_one_by_one_stay_one_incident(book: IncidentBook) -> None:
    """Alertmanager sends each alert name's group on its own: the storm's pieces join the
    incident the first one opened, and its suspect is the NIC once the port's alert says so."""
    for item in reversed(STORM):
        book.receive(parse_notification(payload(item)))
    assert suspects(book) == ["node006:mlx5_4"]
    (incident,) = book.open_incidents()
    assert {a.name for a in incident.explains if a.role == "symptom"} == \
        {"FabricPauseSpreadingUplink"}


def test_two_faults_at_once_are_two_incidents(book: IncidentBook) -> None:
    book.receive(parse_notification(payload(*FLAP, *UPLINK)))
    assert suspects(book) == ["leaf-g00-r1:Ethernet32", "leaf-g00-r6:Ethernet80"]


def test_a_dead_leaf_and_another_uplink_down_stay_apart(book: IncidentBook) -> None:
    """The dead leaf's uplinks and leaf-g00-r6's share spine-01: the leaf explains its own,
    so the spine does not swallow both."""
    book.receive(parse_notification(payload(*leaf_down("leaf-g00-r2", 2), *UPLINK)))
    assert suspects(book) == ["leaf-g00-r2", "leaf-g00-r6:Ethernet80"]


def spine_down(spine: str) -> list[dict[str, Any]]:
    """A port-down alert at both ends of every link of `spine`, as a dead spine raises."""
    downs = []
    for index in GRAPH.downlinks(spine):
        link = GRAPH.topology.links[index]
        for end in (link.a, link.b):
            switch, _, name = end.partition(":")
            downs.append(port("FabricPortDown", switch, name, suspect="link"))
    return downs


def test_a_spine_down_is_one_incident_naming_the_spine(book: IncidentBook) -> None:
    book.receive(parse_notification(payload(*spine_down("spine-01"))))
    assert suspects(book) == ["spine-01"]


def test_two_nics_of_one_node_point_at_the_node(book: IncidentBook) -> None:
    book.receive(parse_notification(payload(
        nic("FabricNicLinkDown", "node003", "mlx5_0", element="ibport", suspect="link"),
        nic("FabricNicLinkDown", "node003", "mlx5_5", element="ibport", suspect="link"))))
    assert suspects(book) == ["node003"]


def test_resolved_alerts_resolve_the_incident_and_a_restart_reads_it_back(
        book: IncidentBook, tmp_path: Path) -> None:
    book.receive(parse_notification(payload(*FLAP, *UPLINK)))
    again = IncidentBook(Journal(tmp_path / "alerts.sqlite"), Locator(GRAPH, LabelMap()))
    assert suspects(again) == ["leaf-g00-r1:Ethernet32", "leaf-g00-r6:Ethernet80"]
    resolved = [{**a, "status": "resolved"} for a in UPLINK]
    receipt = again.receive(parse_notification(payload(*resolved, status="resolved")))
    assert suspects(again) == ["leaf-g00-r1:Ethernet32"]
    assert len(receipt.closed) == 1
    third = IncidentBook(Journal(tmp_path / "alerts.sqlite"), Locator(GRAPH, LabelMap()))
    assert suspects(third) == ["leaf-g00-r1:Ethernet32"]
    statuses = sorted(i.status for i in third.incidents.values())
    assert statuses == [OPEN, RESOLVED]
    # A new alert of the still-open flap joins it rather than opening another.
    third.receive(parse_notification(payload(
        port("FabricPortDown", "leaf-g00-r1", "Ethernet32", suspect="link"))))
    assert suspects(third) == ["leaf-g00-r1:Ethernet32"]


def test_incidents_that_meet_merge_into_the_oldest(book: IncidentBook) -> None:
    """A lone symptom (out-of-sequence packets on node003 mlx5_3) opens an incident, a cable
    down on leaf-g00-r5 another; a second cable down on that leaf, from node003, names the
    leaf and brings the symptom's node along: the two incidents become one, the oldest."""
    first = book.receive(parse_notification(payload(
        nic("FabricNicOutOfSequence", "node003", "mlx5_3", element="ibport",
            role="symptom")))).opened
    book.receive(parse_notification(payload(
        nic("FabricNicLinkDown", "node004", "mlx5_5", element="ibport", suspect="link"))))
    assert len(book.open_incidents()) == 2
    receipt = book.receive(parse_notification(payload(
        nic("FabricNicLinkDown", "node003", "mlx5_5", element="ibport", suspect="link"))))
    (incident,) = book.open_incidents()
    assert incident.id == first[0] and incident.suspect == "leaf-g00-r5"
    assert len(incident.alerts) == 3 and len(receipt.closed) == 1
    assert sum(i.status == MERGED for i in book.incidents.values()) == 1


def test_unknown_labels_are_kept_and_said(book: IncidentBook) -> None:
    receipt = book.receive(parse_notification(payload(
        port("FabricPortDown", "leaf-x99", "Ethernet0"),
        alert("SomethingElse", "", instance="db01:9100"), *UPLINK)))
    assert receipt.unmapped == 2
    assert any("name nothing in the topology" in n and "leaf-x99" in n
               for n in receipt.notes)
    kept = [i for i in book.open_incidents() if i.kind == UNMAPPED]
    assert sorted(i.suspect for i in kept) == [f"{UNMAPPED}:FabricPortDown",
                                              f"{UNMAPPED}:SomethingElse"]
    assert "leaf-g00-r6:Ethernet80" in suspects(book)


@pytest.mark.parametrize(("body", "says"), [
    (b"{not json", "body is not JSON (line 1 column 2"),
    (b"[1, 2]", "body is a JSON list"),
    (b'{"version": "3", "alerts": []}', "version '3'"),
    (b'{"version": "4"}', "no `alerts` list"),
    (b"\xff\xff{", "body is not UTF-8 text (invalid start byte at byte 0)"),
])
def test_malformed_bodies_say_what_is_wrong(body: bytes, says: str) -> None:
    with pytest.raises(PayloadError) as caught:
        parse_notification(body)
    assert says in str(caught.value)


def test_bad_alerts_inside_a_good_body_are_skipped_with_a_note(book: IncidentBook) -> None:
    body = json.dumps({"version": "4", "status": "firing", "truncatedAlerts": 3,
                       "alerts": [7, {"labels": "x"}, {"status": "odd", "labels": {"a": "b"}},
                                  *UPLINK]})
    notification = parse_notification(body)
    assert len(notification.alerts) == 2
    assert any("alerts[0]: not an object" in n for n in notification.notes)
    assert any("alerts[1].labels" in n for n in notification.notes)
    assert any("left out 3 alert(s)" in n for n in notification.notes)
    book.receive(notification)
    assert suspects(book) == ["leaf-g00-r6:Ethernet80"]


def test_a_flood_of_ten_thousand_alerts_loses_nothing(book: IncidentBook) -> None:
    """10,000 alerts at once: the storm and the dead leaf are found among 9,990 alerts no
    topology element carries; every alert is in some incident."""
    flood = [alert("NoiseAlert", "port", instance=f"elsewhere-{i}", device="Ethernet0")
             for i in range(10_000 - len(STORM) - 10)]
    dead = leaf_down("leaf-g00-r2", 2)[:10]
    receipt = book.receive(parse_notification(payload(*STORM, *dead, *flood)))
    assert receipt.alerts == 10_000 and receipt.unmapped == len(flood)
    owned = sum(len(i.alerts) for i in book.open_incidents())
    assert owned == 10_000
    assert suspects(book) == ["leaf-g00-r2", "node006:mlx5_4", f"{UNMAPPED}:NoiseAlert"]


def test_silences_are_suggested_per_element_and_gated_on_the_suspect(
        book: IncidentBook) -> None:
    book.receive(parse_notification(payload(*STORM)))
    (incident,) = book.open_incidents()
    specs = suggest(incident)
    assert len(specs) == 4  # the NIC, the host port, two uplinks
    texts = [s.amtool("http://am:9093") for s in specs]
    assert any("'device=\"Ethernet40\"'" in t and "'instance=\"leaf-g00-r4\"'" in t
               for t in texts)
    assert all(t.startswith("amtool silence add --alertmanager.url=http://am:9093") for t in
               texts)
    body = specs[0].body("oncall")
    assert body["createdBy"] == "oncall" and body["comment"].startswith("fabtui incident")
    assert gate_phrase(incident) == "node006:mlx5_4"


def test_a_link_that_flaps_again_reopens_its_incident(book: IncidentBook,
                                                      tmp_path: Path) -> None:
    opened = book.receive(parse_notification(payload(*FLAP))).opened
    book.receive(parse_notification(payload(*[{**a, "status": "resolved"} for a in FLAP],
                                            status="resolved")))
    assert book.open_incidents() == []
    again = book.receive(parse_notification(payload(*FLAP))).opened
    assert again == opened and suspects(book) == ["leaf-g00-r1:Ethernet32"]
    assert len(book.incidents) == 1
    restarted = IncidentBook(Journal(tmp_path / "alerts.sqlite"), Locator(GRAPH, LabelMap()))
    assert suspects(restarted) == ["leaf-g00-r1:Ethernet32"]
