"""Baselines (issue 41, point 2): versions and settings recorded at a known-good moment, and
what changed since, per node, port and job, on the demo fabric read through the probes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

from click.testing import Result

from fabtui.config import load_settings, with_scenario
from fabtui.intent.baseline import BaselineStore, Change, changes
from fabtui.workspace import Workspace


def _ws(scenario: str) -> Workspace:
    return Workspace(with_scenario(load_settings(None), scenario))


def _since(scenario: str, name: str | None = None,
           nodes: tuple[str, ...] = ()) -> list[Change]:
    with _ws(scenario) as ws:
        return asyncio.run(ws.since_baseline(name, nodes))[1]


def test_store_keeps_named_states_and_finds_the_newest_good_one(tmp_path: Path) -> None:
    store = BaselineStore(tmp_path / "b.sqlite")
    store.record("first", {"n1\tfirmware": "1"}, findings=0, scenario="s", topology="t")
    store.record("bad", {"n1\tfirmware": "2"}, findings=3, scenario="s", topology="t")
    first = store.latest_good()
    assert first is not None and first.name == "first"
    store.record("second", {"n1\tfirmware": "3"}, findings=0, scenario="s", topology="t")
    store.close()
    again = BaselineStore(tmp_path / "b.sqlite")
    good = again.latest_good()
    assert good is not None and good.name == "second" and good.facts == {"n1\tfirmware": "3"}
    assert [b.name for b in again.all()] == ["first", "bad", "second"]
    bad = again.get("bad")
    assert bad is not None and not bad.good and bad.findings == 3
    again.close()


def test_a_device_not_read_now_has_not_changed() -> None:
    before = {"n1:mlx5_0\tfirmware": "1", "n2:mlx5_0\tfirmware": "1", "n1\tdriver": "a"}
    after = {"n1:mlx5_0\tfirmware": "2", "n1\tdriver": "a", "n1\tcuda": "12.4"}
    found = changes(before, after, read_now=["n1"])
    assert [(c.component, c.setting, c.before, c.after) for c in found] == [
        ("n1", "cuda", None, "12.4"),
        ("n1:mlx5_0", "firmware", "1", "2")]


def test_what_changed_since_the_good_state_per_node_and_port() -> None:
    with _ws("healthy") as ws:
        saved, judged = asyncio.run(ws.record_baseline("golden"))
    assert saved.good and not judged.drift.lines and not judged.fleet.findings
    assert not judged.links and not judged.unreadable
    assert _since("healthy") == []
    found = {(c.component, c.setting, c.before, c.after) for c in _since("qos-misconfig")}
    assert found == {("node002:mlx5_4", "trust", "dscp", "pcp"),
                     ("node002:mlx5_4", "pfc", "3", "4"),
                     ("leaf-g00-r4", "WRED_PROFILE|AZURE_LOSSLESS green_min_threshold",
                      "153600", "1536000")}
    firmware = _since("new-node-bad-firmware")
    assert {c.component for c in firmware} == {f"node008:mlx5_{i}" for i in range(8)}
    assert all((c.setting, c.before, c.after) == ("firmware", "28.39.1002", "28.36.1010")
               for c in firmware)
    ports = {c.component for c in _since("headroom-short") if c.setting == "CABLE_LENGTH|AZURE"}
    assert "leaf-g00-r0:Ethernet0" in ports and all(p.startswith("leaf-g00-r0:") for p in ports)


def test_a_job_sees_only_what_it_uses() -> None:
    with _ws("healthy") as ws:
        asyncio.run(ws.record_baseline("golden"))
    # node003 and node004 share leaf-g00-r4 (rail 4) with node002, not node002 itself
    found = {(c.component, c.setting) for c in _since("qos-misconfig",
                                                       nodes=("node003", "node004"))}
    assert found == {("leaf-g00-r4", "WRED_PROFILE|AZURE_LOSSLESS green_min_threshold")}


def test_cli(run: Callable[..., Result], tmp_path: Path) -> None:
    none_yet = run("--scenario", "healthy", "drift", "--since-good")
    assert none_yet.exit_code == 2 and "no good baseline" in none_yet.stderr
    assert run("--scenario", "healthy", "baseline", "record", "golden").exit_code == 0
    recorded = run("--scenario", "ecn-off", "baseline", "record", "later")
    assert recorded.exit_code == 0 and "NOT a good state" in recorded.stderr
    listed = run("baseline", "list")
    assert "golden" in listed.stdout and "later" in listed.stdout
    changed = run("--scenario", "ecn-off", "drift", "--since-good")
    assert changed.exit_code == 1
    assert "leaf-g00-r2: WRED_PROFILE|AZURE_LOSSLESS ecn ecn_all -> ecn_none" in changed.stdout
    assert run("--scenario", "ecn-off", "drift", "--baseline", "later").exit_code == 0
    job = tmp_path / "job.txt"
    job.write_text("JobId=77 JobName=small\n   JobState=RUNNING Reason=None\n"
                   "   NodeList=node[005-006]\n   NumNodes=2 NumCPUs=64 NumTasks=16\n")
    scoped = run("--scenario", "ecn-off", "drift", "--since-good", "--job", "77",
                 "--job-file", str(job))
    assert scoped.exit_code == 1 and "for job 77 (2 nodes)" in scoped.stdout
    assert run("baseline", "record", "bad name").exit_code == 2


def test_re_recording_a_good_name_mid_incident_keeps_the_good_state(
        run: Callable[..., Result]) -> None:
    assert run("--scenario", "healthy", "baseline", "record", "golden").exit_code == 0
    again = run("--scenario", "healthy", "baseline", "record", "golden", "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["good"] is True  # good for good
    refused = run("--scenario", "qos-misconfig", "baseline", "record", "golden")
    assert refused.exit_code == 2
    message = refused.stderr.strip().splitlines()[-1]
    assert "'golden' is a good state" in message and "--replace" in message
    listed = run("baseline", "list", "--json")
    assert [(b["name"], b["good"]) for b in json.loads(listed.stdout)] == [("golden", True)]
    # the known-good state is still what --since-good compares with
    since = run("--scenario", "qos-misconfig", "drift", "--since-good")
    assert since.exit_code == 1 and "since golden (good" in since.stdout
    assert "node002:mlx5_4: trust dscp -> pcp" in since.stdout
    # under another name the incident's state is recorded, not good
    other = run("--scenario", "qos-misconfig", "baseline", "record", "incident")
    assert other.exit_code == 0 and "NOT a good state" in other.stderr
    # asked for, the good one is overwritten; then no good state is left to compare with
    replaced = run("--scenario", "qos-misconfig", "baseline", "record", "golden", "--replace")
    assert replaced.exit_code == 0 and "NOT a good state" in replaced.stderr
    assert run("drift", "--since-good").exit_code == 2



def test_a_state_with_a_dead_link_or_a_dead_switch_is_not_good(
        run: Callable[..., Result]) -> None:
    healthy = run("--scenario", "healthy", "baseline", "record", "golden")
    assert healthy.exit_code == 0
    # a good verdict says what it rests on and what it does not look at
    assert "links up with optics and error counters within limits on the 64 NIC ports and 10 " \
        "switches read" in healthy.stdout and "not judged: traffic" in healthy.stdout
    # nccl-hang: the optic behind node003 GPU 5 is dead, configuration is untouched
    hang = run("--scenario", "nccl-hang", "baseline", "record", "hang", "--json")
    assert hang.exit_code == 0
    recorded = json.loads(hang.stdout)
    assert recorded["good"] is False and recorded["drift"] == 0 and recorded["fleet"] == 0
    assert set(recorded["links"]) == {"node003:mlx5_5", "leaf-g00-r5:Ethernet16"}
    assert "port.state PORT_DOWN" in recorded["links"]["node003:mlx5_5"]
    said = run("--scenario", "nccl-hang", "baseline", "record", "hang")
    assert said.exit_code == 0 and "NOT a good state: 2 link(s) down" in said.stderr
    # --since-good still compares with the healthy state, not the one with the dead link
    since = run("--scenario", "nccl-hang", "drift", "--since-good")
    assert "since golden (good" in since.stdout
    # a leaf that does not answer is not a good state either (its rail's NICs are down too)
    down = json.loads(run("--scenario", "leaf-down", "baseline", "record", "down",
                          "--json").stdout)
    assert down["good"] is False and list(down["unreadable"]) == ["leaf-g00-r2"]
    assert "node001:mlx5_2" in down["links"]


def test_what_the_probes_cannot_read_is_said_not_judged_not_bad(
        run: Callable[..., Result]) -> None:
    # the InfiniBand demo's switches answer, but no link probe has a command for them: the
    # verdict rests on the NIC ends alone and says so, and is not held against the fabric
    recorded = run("--scenario", "ib-healthy", "baseline", "record", "ib", "--json")
    found = json.loads(recorded.stdout)
    assert recorded.exit_code == 0 and found["good"] is True and found["unreadable"] == {}
    assert {"leaf-g00-r0", "spine-01"} <= set(found["not_taken"])
    said = run("--scenario", "ib-healthy", "baseline", "record", "ib")
    assert "on the 64 NIC ports and 0 switches read" in said.stdout
    assert "readings the probes cannot take on leaf-g00-r0" in said.stdout
