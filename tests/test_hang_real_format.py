"""The hang path on logs in real NCCL's shape (issue 35: N1, S7, N9, N10).

- Real NCCL prints a completion error's `peer` as the address of the connection's socket: the
  OOB interface (`NCCL_SOCKET_IFNAME`) the same process prints at init (`OOB bond0:10.40.0.3`),
  not the RDMA NIC's. The NICs of the failed path are the GIDs printed with it (`localGid`,
  `remoteGids`). The real samples below show it (peer 192.168.3.5, GIDs 192.168.6.x).
- The hang runbook (`logs.nccl`, evaluator `nccl-log`) and `fabtui triage nccl` judge the same
  lines by one rule (`fabtui.topology.failed_paths`): status-5 flushes are teardown, the NIC is
  the address every failed path meets at, and paths that chain over three or more NICs of one
  rail with no address in all of them are the rail's leaf (or PFC on it), not one NIC.
- `ibv_wc_status` names and values as rdma-core's `libibverbs/verbs.h` defines them.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from fabtui.model import runbook as runbook_model
from fabtui.model.probe import Metric
from fabtui.model.triage import TriageReport
from fabtui.parsers import registry
from fabtui.paths import demo_topology, shipped_dir, shipped_templates
from fabtui.probes.catalog import load_catalog
from fabtui.probes.evaluate import EvalContext, evaluate, hardware_classes
from fabtui.probes.targets import resolve
from fabtui.runbooks.library import load_library
from fabtui.runbooks.testing import run_test
from fabtui.sim.hangjob import JobSpec, generate
from fabtui.sim.logs import job_log
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import build_sim, fresh_state
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology
from fabtui.triage import triage_paths

ROOT = Path(__file__).resolve().parent
CATALOG = load_catalog([shipped_dir("probes")])
GRAPH = FabricGraph(load_topology(shipped_dir("topology") / "demo.yaml").topology)
REAL_THREADS = ROOT / "triage_fixtures" / "real"
REAL_SAMPLES = [
    REAL_THREADS / "nccl-1698-net-ib-colon-hca" / "job.log",
    REAL_THREADS / "nccl-1814-status12-then-5" / "job.log",
    ROOT / "fixtures" / "nccl-log" / "nccl-issue1405-ib-completion-status12-device4-no-rank.txt",
    ROOT / "fixtures" / "nccl-log" / "mlengineering-net-ib-completion-error12.txt",
]
"""Completion errors as real jobs printed them (sources: tests/triage_fixtures/real/SOURCES.md,
tests/fixtures/nccl-log/SOURCES.md)."""

# The completion-error WARN as NCCL prints it (net_ib.cc, every release since 2.12): the socket
# address of the connection and its port, the status (`error N,` before 2.20), opcode, length,
# vendor error and request type; with RoCE the two GIDs (`remoteGid ` before 2.20,
# `remoteGids` after, without a space); from 2.23 the HCA. Built from the real samples, which
# it must match (test_the_shape_matches_every_real_sample).
COMPLETION = re.compile(
    r"NCCL WARN NET/IB ?: Got completion from peer (?P<peer>[^\s<>]+)<(?P<port>\d+)> with "
    r"(?:error (?P<old>\d+), opcode \d+, len \d+, vendor err \d+ \((?:Recv|Send|Flush)\)"
    r"(?: localGid (?P<old_local>\S+) remoteGid (?P<old_remote>\S+))?"
    r"|status=(?P<status>\d+) opcode=\d+ len=\d+ vendor err \d+ \((?:Recv|Send|Flush)\)"
    r"(?: localGid (?P<local>\S+) remoteGids(?P<remote>\S+))?(?: hca (?P<hca>\S+))?)$")
_OOB = re.compile(r"^(?:\d+: )?([\w.\-]+):\d+:\d+ \[\d+\] NCCL INFO NET/IB : Using .*; "
                  r"OOB \w+:([\d.]+)<0>$")


def _completions(text: str) -> list[re.Match[str]]:
    """Every completion-error line of `text`, matched by the real shape (none may miss it)."""
    found = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if "Got completion from peer" in line:
            if "vendor" not in line and index + 1 < len(lines):
                line += " " + lines[index + 1].strip()  # wrapped as the thread posted it
            match = COMPLETION.search(line)
            assert match is not None, f"not the real shape: {line}"
            found.append(match)
    return found


def _ip(gid: str | None) -> str | None:
    return gid.removeprefix("::ffff:") if gid else None


def _log_metrics(text: str, graph: FabricGraph | None = GRAPH) -> list[Metric]:
    """The `logs.nccl` probe's metrics for `text`, as the hang runbook reads them."""
    definition = CATALOG["logs.nccl"]
    target = resolve(GRAPH, "node001", definition.target)
    ctx = EvalContext(probe=definition, target=target, interval=5.0,
                      hardware=hardware_classes(target), graph=graph)
    return evaluate("nccl-log", None, registry.get("nccl-log").parse(text), ctx)


def _named(metrics: list[Metric], name: str) -> list[str]:
    return [m.component for m in metrics if m.name == name]


def _optic_job(tmp_path: Path, nccl: str = "2.21") -> dict[str, Any]:
    """`fabtui sim hang-logs OUT --case optic --ranks 64 --nccl NCCL` (the review's N1)."""
    return generate(tmp_path / "job", JobSpec(case="optic", ranks=64, nccl=nccl,
                                              flight_recorder=False), GRAPH)


def _demo_log(at: float = 16 * 60) -> str:
    """The demo fabric's job log, `nccl-hang` scenario, `at` seconds in (the runbook's test)."""
    sim = build_sim(fresh_state(demo_topology(), find_scenario("nccl-hang"),
                                [shipped_templates()]))
    return job_log(sim, at)


def _oob_peers(text: str) -> str:
    """Each completion error's peer replaced by the OOB address its host prints at init."""
    oob = {host: ip for line in text.splitlines() if (m := _OOB.match(line))
           for host, ip in [m.groups()]}
    rail = {nic.ip: host for host, node in GRAPH.nodes.items() for nic in node.nics if nic.ip}
    return re.sub(r"(from peer )([\d.]+)(<)",
                  lambda m: m.group(1) + oob.get(rail.get(m.group(2), ""), m.group(2))
                  + m.group(3), text)


# ---- N1: the hang runbook's suspect on real-format logs ---------------------------------------

@pytest.mark.parametrize("nccl", ["2.18", "2.21", "2.24", "2.27"])
def test_the_runbook_names_the_dead_nic_of_the_optic_case_not_its_victim(
        tmp_path: Path, nccl: str) -> None:
    """`sim hang-logs --case optic`: two status-12 errors and 62 status-5 flushes. The flushes
    are teardown; the NIC both status-12 paths meet at is node003's mlx5_5 (rank 21), not rank
    13's node002, the sender toward the dead link that the desync report lists first."""
    _optic_job(tmp_path, nccl)
    metrics = _log_metrics((tmp_path / "job" / "job.log").read_text())
    assert _named(metrics, "suspect_nic") == ["node003:mlx5_5"]
    assert _named(metrics, "suspect_switch") == []


def test_the_runbook_names_the_dead_nic_when_peers_are_oob_addresses() -> None:
    """The demo job log with each peer the OOB address its own init lines print (the review's
    reproduction, N1 step 4): the GIDs still say which NIC both failed paths meet at."""
    text = _oob_peers(_demo_log())
    assert "from peer 10.40.0." in text and "from peer 10.205." not in text
    metrics = _log_metrics(text)
    assert _named(metrics, "suspect_nic") == ["node003:mlx5_5"]


def test_without_a_topology_the_nic_is_named_by_host_and_hca(tmp_path: Path) -> None:
    """NCCL 2.23+ prints the HCA: the suspect is `host:hca` of the end every path meets at."""
    _optic_job(tmp_path, "2.27")
    metrics = _log_metrics((tmp_path / "job" / "job.log").read_text(), graph=None)
    assert _named(metrics, "suspect_nic") == ["node003:mlx5_5"]


def test_a_flush_alone_names_no_nic() -> None:
    """Only status-5 lines: the QPs were torn down after a failure these lines do not show."""
    lines = (REAL_THREADS / "nccl-1814-status12-then-5" / "job.log").read_text().splitlines()
    flushes = "\n".join(line for line in lines if "status=12" not in line) + "\n"
    assert "status=5" in flushes
    assert _named(_log_metrics(flushes, graph=None), "suspect_nic") == []


# ---- S7: the simulator's completion errors have the real shape ---------------------------------

def test_the_shape_matches_every_real_sample() -> None:
    """The regex is the real lines' shape, and in the real lines with GIDs the peer is not the
    address of either GID: it is the socket's (OOB) address."""
    found = [m for path in REAL_SAMPLES for m in _completions(path.read_text())]
    assert len(found) == 2 + 3 + 3 + 1
    for match in found:
        local, remote = match.group("local"), match.group("remote")
        if local and remote and local.startswith("::ffff:"):
            assert match.group("peer") not in (_ip(local), _ip(remote)), match.group(0)


@pytest.mark.parametrize("nccl", ["2.18", "2.21", "2.22", "2.24", "2.26", "2.27"])
def test_simulated_hang_logs_print_the_oob_address_as_peer(tmp_path: Path, nccl: str) -> None:
    """Every completion error `sim hang-logs` writes has the real shape; its peer is the OOB
    address the far host prints at init; its GIDs are the two rail NICs of the topology."""
    _optic_job(tmp_path, nccl)
    text = (tmp_path / "job" / "job.log").read_text()
    _check_simulated(text)


def test_the_demo_fabrics_job_log_prints_the_oob_address_as_peer() -> None:
    """The same for the demo fabric's job log (`nccl-hang`, read by the hang runbook)."""
    _check_simulated(_demo_log())


def _check_simulated(text: str) -> None:
    oob = {host: ip for line in text.splitlines() if (m := _OOB.match(line))
           for host, ip in [m.groups()]}
    found = _completions(text)
    assert found
    for match in found:
        local = _ip(match.group("local") or match.group("old_local"))
        remote = _ip(match.group("remote") or match.group("old_remote"))
        assert local in GRAPH.nic_ips and remote in GRAPH.nic_ips, match.group(0)
        far_host = GRAPH.nic_ips[remote][0]
        assert match.group("peer") == oob[far_host] != remote, match.group(0)
    parsed: Any = registry.get("nccl-log").parse(text)
    errors = [e for e in parsed.events if e.type == "ib_completion_error"]
    assert errors and all(e.peer in oob.values() and e.remote_gid for e in errors)


# ---- N9: a rail-wide failure is the rail's leaf, not one NIC ----------------------------------

def _replace_status12(text: str, paths: list[tuple[int, int]]) -> str:
    """`text` with its status-12 lines replaced by one per (k, j): node00k's GPU 5 (its own
    task prefix and pid) failing toward node00j's rail-5 NIC, the peer being node00j's OOB
    address, as real NCCL 2.21 prints it."""
    oob = {host: ip for line in text.splitlines() if (m := _OOB.match(line))
           for host, ip in [m.groups()]}
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "status=12" in line)
    kept = [line for line in lines if "status=12" not in line]
    added = []
    for k, j in paths:
        node = f"node{k:03d}"
        head = next(m for line in lines
                    if (m := re.match(rf"^(\d+): {node}:(\d+):\d+ \[5\] NCCL INFO", line)))
        task, pid = head.group(1), int(head.group(2))
        added.append(f"{task}: {node}:{pid}:{pid + 57} [5] transport/net_ib.cc:1909 NCCL WARN "
                     f"NET/IB : Got completion from peer {oob[f'node{j:03d}']}<{50000 + k}> with "
                     f"status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.205.0.{k} "
                     f"remoteGids::ffff:10.205.0.{j}")
    return "\n".join(kept[:at] + added + kept[at:]) + "\n"


RAIL_RING = [(k, k % 8 + 1) for k in range(1, 9)]
"""Every rail-5 NIC toward its ring neighbour (the review's N9 reproduction)."""


def _rail_wide(tmp_path: Path) -> Path:
    """The optic case's job.log with its two status-12 lines replaced by one per rail-5 rank:
    node00k's GPU 5 toward its rail neighbour node00(k mod 8 + 1), as the review's N9
    reproduction does."""
    _optic_job(tmp_path)
    path = tmp_path / "rail-wide.log"
    path.write_text(_replace_status12((tmp_path / "job" / "job.log").read_text(), RAIL_RING))
    return path


def test_triage_blames_the_rails_leaf_when_failed_paths_chain_over_the_rail(
        tmp_path: Path) -> None:
    report: TriageReport = triage_paths([_rail_wide(tmp_path)], GRAPH)
    assert report.verdict == "network path", report.summary
    first = report.suspects[0]
    assert (first.kind, first.rank, first.switch, first.rail) == \
        ("switch", None, "leaf-g00-r5", 5)
    assert first.ranks == [5, 13, 21, 29, 37, 45, 53, 61]
    assert "toward its NIC" not in report.summary
    assert "leaf-g00-r5" in report.summary and "PFC" in report.summary
    assert "cannot tell" in report.summary  # which of the leaf, PFC or a common cause
    assert not any(s.kind == "link" and "toward" in s.reason and "NIC" in s.reason
                   for s in report.suspects)
    assert [(n.runbook, n.inputs) for n in report.next] == [("pfc-storm",
                                                             {"leaf": "leaf-g00-r5"})]


def test_the_triage_probe_fails_the_switch_of_a_rail_wide_failure(tmp_path: Path) -> None:
    """`triage.nccl` (the report read back) puts the `switch` suspect on the leaf itself."""
    report = triage_paths([_rail_wide(tmp_path)], GRAPH)
    definition = CATALOG["triage.nccl"]
    target = resolve(GRAPH, "node001", definition.target)
    ctx = EvalContext(probe=definition, target=target, interval=5.0,
                      hardware=hardware_classes(target), graph=GRAPH)
    parsed = registry.get("nccl-triage").parse(report.model_dump_json())
    metrics = evaluate("nccl-triage", None, parsed, ctx)
    assert _named(metrics, "suspect.switch") == ["leaf-g00-r5"]


def test_the_runbook_names_the_rails_leaf_not_one_nic(tmp_path: Path) -> None:
    metrics = _log_metrics(_rail_wide(tmp_path).read_text())
    assert _named(metrics, "suspect_nic") == []
    assert _named(metrics, "suspect_switch") == ["leaf-g00-r5"]


def test_the_hang_runbook_hands_a_rail_wide_failure_to_pfc_storm(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The runbook on the demo fabric, its job log the rail-wide failure: no node is cordoned;
    the rail's leaf is read and the run hands over to pfc-storm."""
    import fabtui.sim.logs

    text = _replace_status12(_demo_log(), RAIL_RING)
    monkeypatch.setattr(fabtui.sim.logs, "job_log", lambda sim, t: text)
    book = load_library([shipped_dir("runbooks")]).runbooks["nccl-hang-triage"]
    expect = runbook_model.TestExpect(
        path=["read-the-log", "rail-wide-failure"], outcome="fail",
        vars={"rail_switch": "leaf-g00-r5", "suspect": None},
        says=["leaf-g00-r5", "next: runbook pfc-storm"])
    case = runbook_model.RunbookTest(name="rail-wide", scenario="nccl-hang", at="16m",
                                     expect=expect)
    outcome = asyncio.run(run_test(book, case, topology=demo_topology(),
                                   template_dirs=[shipped_templates()], catalog=CATALOG))
    assert outcome.passed, "\n".join(outcome.problems)


def test_failures_toward_one_silent_nic_name_that_nic_not_a_reporter(tmp_path: Path) -> None:
    """node002 and node004 fail toward node003's rail-5 NIC, which reports nothing: the NIC in
    every path is node003's; neither reporter is the culprit ("toward its NIC" is not said of
    a reporter whose own NIC is not in every path)."""
    _optic_job(tmp_path)
    text = _replace_status12((tmp_path / "job" / "job.log").read_text(), [(2, 3), (4, 3)])
    assert _named(_log_metrics(text), "suspect_nic") == ["node003:mlx5_5"]
    (tmp_path / "toward.log").write_text(text)
    report = triage_paths([tmp_path / "toward.log"], GRAPH)
    first = report.suspects[0]
    assert (first.kind, first.node, first.nic, first.port) == \
        ("peer", "node003", "mlx5_5", "leaf-g00-r5:Ethernet16")
    assert "toward its NIC" not in report.summary and "10.205.0.3" in report.summary


def test_the_nic_two_paths_meet_at_is_still_a_nic(tmp_path: Path) -> None:
    """Three NICs, two paths, one address in both (the optic case): the NIC, not the leaf."""
    _optic_job(tmp_path)
    report = triage_paths([tmp_path / "job" / "job.log"], GRAPH)
    assert report.verdict == "culprit found"
    first = report.suspects[0]
    assert (first.rank, first.node, first.nic, first.port) == \
        (21, "node003", "mlx5_5", "leaf-g00-r5:Ethernet16")
    assert "1 other rank(s) failed toward its NIC" in report.summary


# ---- the rule itself (fabtui.topology.failed_paths) -------------------------------------------

def _error(local: int, remote: int, status: int = 12, rank: int | None = None) -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(type="ib_completion_error", status=status, rank=rank,
                           local_gid=f"::ffff:10.205.0.{local}",
                           remote_gid=f"::ffff:10.205.0.{remote}", peer=f"10.40.0.{remote}")


def test_the_rule_pairs_gids_skips_flushes_and_the_far_ends_report() -> None:
    from fabtui.topology.failed_paths import path_groups

    errors = [_error(3, 4, rank=21), _error(4, 3, rank=29),  # one path, both ends
              _error(2, 3, rank=13), _error(6, 7, 5, rank=45)]  # a flush: no path
    [group] = path_groups(errors, lambda e: e.rank)
    assert [e.rank for e in group.members] == [21, 13] and group.nic == "10.205.0.3"
    assert group.reported_from_nic and not group.chained


def test_a_path_linking_two_chains_makes_one_group_in_logged_order() -> None:
    from fabtui.topology.failed_paths import path_groups

    errors = [_error(1, 2, rank=5), _error(3, 4, rank=21), _error(2, 3, rank=13)]
    [group] = path_groups(errors, lambda e: e.rank)
    assert [e.rank for e in group.members] == [5, 21, 13]
    assert group.nic is None and group.chained
    assert group.addresses == [f"10.205.0.{k}" for k in (1, 2, 3, 4)]
