"""`fabtui alerts list / show / silence / serve` on incidents the receiver journaled (issue 40):
the CLI reads the alerts journal a `serve` process writes; silences are printed, never applied
without the suspect typed; the HTTP receiver answers Alertmanager, a malformed body and an
oversized one each with a clear log line.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from click.testing import Result

from fabtui.alerts.present import summary
from fabtui.alerts.receiver import AlertReceiver
from fabtui.config import load_settings
from fabtui.topology.graph import LinkRef
from fabtui.workspace import Workspace
from fabtui.workspace.alerting import Receiver
from tests.test_alerts_grouping import STORM, UPLINK, payload, spine_down


def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'data_dir = "{tmp_path / "data"}"\n')
    return path


def post(url: str, body: bytes) -> tuple[int, str]:
    request = urllib.request.Request(url, data=body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_the_receiver_over_http_and_the_cli_reading_its_journal(
        tmp_path: Path, run: Callable[..., Result]) -> None:
    lines: list[str] = []
    ws = Workspace(load_settings(config(tmp_path)))
    receiver = Receiver(ws, lines.append)
    server = AlertReceiver(receiver.receive, lines.append, port=0, listing=lambda: [
        summary(i) for i in receiver.book.open_incidents()]).start()
    url = f"http://127.0.0.1:{server.port}"
    try:
        assert post(f"{url}/alerts", payload(*STORM))[0] == 200
        assert post(f"{url}/alerts", payload(*UPLINK))[0] == 200
        status, text = post(f"{url}/alerts", b'{"version": "4", "alerts": [')
        assert status == 400 and "body is not JSON (line 1 column 29" in text
        assert any("rejected a notification from 127.0.0.1:" in line and "not JSON" in line
                   for line in lines)
        request = urllib.request.Request(f"{url}/alerts", data=b"x", method="POST",
                                         headers={"Content-Length": str(1 << 30)})
        try:
            urllib.request.urlopen(request, timeout=30)
        except urllib.error.HTTPError as exc:
            assert exc.code == 413
        assert any("refused a body of '1073741824' bytes" in line for line in lines)
        assert post(f"{url}/nowhere", b"{}")[0] == 404
        with urllib.request.urlopen(f"{url}/incidents", timeout=30) as answer:
            listed = json.load(answer)
        assert sorted(i["suspect"] for i in listed) == ["leaf-g00-r6:Ethernet80",
                                                       "node006:mlx5_4"]
    finally:
        server.stop()
        ws.close()

    cfg = str(config(tmp_path))
    listed = run("--config", cfg, "alerts", "list")
    assert listed.exit_code == 0
    assert "node006:mlx5_4" in listed.output and "leaf-g00-r6:Ethernet80" in listed.output
    incidents = json.loads(run("--config", cfg, "alerts", "list", "--json").output)
    storm = next(i for i in incidents if i["suspect"] == "node006:mlx5_4")
    assert storm["runbook"] == "pfc-storm" and storm["blast"]["component"] == "node006:mlx5_4"
    assert storm["alerts"][0]["element"] == "node006:mlx5_4"  # the suspect's own first

    shown = run("--config", cfg, "alerts", "show", storm["id"][:-2])
    assert shown.exit_code == 0
    assert shown.output.splitlines()[1] == "suspect: node006:mlx5_4 (nic)"
    assert "runbook: fabtui runbook run pfc-storm" in shown.output
    assert "pfc-storm-node006-nic-stall-prevention" in shown.output  # a similar case
    assert "amtool silence add --alertmanager.url=http://am:9093" in shown.output

    refused = run("--config", cfg, "alerts", "silence", storm["id"])
    assert refused.exit_code == 2 and "--confirm node006:mlx5_4" in refused.stderr
    wrong = run("--config", cfg, "alerts", "silence", storm["id"], "--confirm", "node006")
    assert wrong.exit_code == 2 and "type the suspect 'node006:mlx5_4'" in wrong.stderr
    unknown = run("--config", cfg, "alerts", "show", "nope")
    assert unknown.exit_code == 2 and "no incident 'nope'" in unknown.stderr
    journal = Workspace(load_settings(config(tmp_path))).alerts.journal
    assert not any(e.kind.startswith("silence") for e in journal.events(storm["id"]))


def test_serve_refuses_a_bad_listen_address(tmp_path: Path,
                                            run: Callable[..., Result]) -> None:
    bad = run("--config", str(config(tmp_path)), "alerts", "serve", "--listen", "9095")
    assert bad.exit_code == 2 and "HOST:PORT" in bad.stderr


def _foreign(name: str, instance: str, device: str, summary: str = "") -> dict[str, object]:
    """An alert of a site's own rule pack: the exporter's labels, no fabtui labels and no
    `runbook` annotation."""
    return {"status": "firing", "labels": {"alertname": name, "severity": "critical",
                                           "instance": instance, "device": device},
            "annotations": {"summary": summary}, "startsAt": "2026-12-05T03:00:00Z",
            "endsAt": "0001-01-01T00:00:00Z", "fingerprint": f"{name}-{instance}-{device}"}


def test_alerts_from_another_rule_pack_get_the_runbook_their_names_match(
        tmp_path: Path) -> None:
    """A site's own rules name no runbook: the incident gets the library's clear match for the
    alerts' names (optic-replacement for a port's low light), never a vague one."""
    ws = Workspace(load_settings(config(tmp_path)))
    lines: list[str] = []
    receiver = Receiver(ws, lines.append)
    try:
        receiver.receive(json.dumps({"version": "4", "status": "firing", "alerts": [
            _foreign("FabricOpticRxPowerLow", "leaf-g00-r3", "Ethernet16"),
            _foreign("NicCrcErrors", "node003:9100", "mlx5_3")]}).encode())
        receiver.receive(json.dumps({"version": "4", "status": "firing", "alerts": [
            _foreign("ExporterScrapeSlow", "leaf-g00-r6", "Ethernet80",
                     "the exporter answered slowly")]}).encode())
        runbooks = {i.suspect: i.context.runbook for i in receiver.book.open_incidents()}
        assert runbooks["leaf-g00-r3:Ethernet16"] == "optic-replacement", runbooks
        assert runbooks["leaf-g00-r6:Ethernet80"] in (None, ""), runbooks
    finally:
        ws.close()


def test_show_says_how_many_links_the_blast_radius_left_out_and_where_they_are(
        tmp_path: Path, run: Callable[..., Result]) -> None:
    """A spine going down takes 32 links with it; the account names 4 and must say so, and
    the command it points to lists every one."""
    ws = Workspace(load_settings(config(tmp_path)))
    receiver = Receiver(ws, lambda _: None)
    try:
        assert receiver.receive(payload(*spine_down("spine-01")))[0] == 200
    finally:
        ws.close()
    cfg = str(config(tmp_path))
    incident = json.loads(run("--config", cfg, "alerts", "list", "--json").output)[0]
    assert incident["suspect"] == "spine-01"
    links = incident["blast"]["links_down"]
    assert len(links) > 4
    shown = run("--config", cfg, "alerts", "show", incident["id"]).output
    line = next(x for x in shown.splitlines() if x.startswith("blast radius:"))
    assert line.endswith(f"links down if it fails: {', '.join(links[:4])} and "
                         f"{len(links) - 4} more (fabtui topo blast spine-01 --json lists them)")
    listed = json.loads(run("--config", cfg, "topo", "blast", "spine-01", "--json").output)
    assert [str(LinkRef(**x)) for x in listed["links_down"]] == links
