"""Hang triage on hung jobs whose answer is known: the hard cases of issue 13, the real samples.

Fixtures: tests/triage_fixtures (see its SOURCES.md), the shared real samples, Flight Recorder
dumps built here as PyTorch writes them (pickles and JSON).
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from fabtui.errors import InputError
from fabtui.model.triage import TriageReport
from fabtui.paths import demo_topology
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology
from fabtui.triage import triage_paths
from fabtui.triage.frpickle import UnsafePickle, load_plain
from fabtui.triage.ingest import key_lines
from fabtui.triage.report import markdown, tables

FIXTURES = Path(__file__).parent / "triage_fixtures"
SAMPLES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"


@pytest.fixture(scope="module")
def demo() -> FabricGraph:
    return FabricGraph(load_topology(demo_topology()).topology)


def run(case: str, graph: FabricGraph | None = None) -> TriageReport:
    return triage_paths([FIXTURES / case], graph)


def first_ranks(report: TriageReport) -> list[int | None]:
    return [s.rank for s in report.suspects if s.fault == 1]


# ---- the hard cases -----------------------------------------------------------------------

def test_the_first_watchdog_is_a_victim_and_the_rank_that_never_arrived_is_the_culprit() -> None:
    report = run("victim-first")
    assert report.verdict == "culprit found"
    assert first_ranks(report) == [2]
    assert report.suspects[0].kind == "lagging"
    assert report.collective is not None and report.collective.seq == 1042
    assert report.collective.op == "ALLREDUCE"
    assert any("rank 0's watchdog fired first" in n and "victim" in n for n in report.notes)
    evidence = report.suspects[0].evidence[0]
    assert evidence.file.endswith("rank2.log") and "Last enqueued NCCL work: 1041" in evidence.text
    states = {(r.rank, r.state) for r in report.ranks}
    assert {(0, "stopped"), (1, "stopped"), (3, "stopped"), (2, "lagging")} <= states


def test_the_culprit_can_be_rank_0_while_torchrun_blames_another() -> None:
    report = run("culprit-rank0")
    assert first_ranks(report) == [0]
    assert report.collective is not None and report.collective.seq == 312
    assert any("torchrun reports rank 3 as the first failure" in n for n in report.notes)


def test_a_rank_whose_log_is_missing_is_the_suspect_when_all_others_wait() -> None:
    report = run("missing-log")
    assert report.verdict == "culprit found"
    assert [(s.kind, s.rank) for s in report.suspects] == [("missing log", 7)]
    assert report.world_size == 8 and report.ranks_seen == list(range(7))


def test_ras_naming_the_ranks_ahead_makes_the_unnamed_many_the_suspects() -> None:
    report = run("ras-ahead")
    assert report.verdict == "culprit found"
    ranks = [s.rank for s in report.suspects]
    assert ranks == [r for r in range(32) if r not in (9, 17)]
    assert any("ahead" in n and "9, 17" in n for n in report.notes)


def test_ras_naming_the_ranks_behind_makes_them_the_suspects() -> None:
    report = run("ras-behind")
    # RAS prints the host as an address; no log or topology names it, so it is no node.
    assert [(s.rank, s.node, s.gpu) for s in report.suspects] == [(4, None, 4), (5, None, 5),
                                                                 (7, None, 7)]
    assert "on host 172.16.64.210" in report.suspects[0].reason


def test_status_12_is_the_signal_and_the_status_5_flushes_are_teardown(demo: FabricGraph) -> None:
    report = run("ib-flush", demo)
    # The first signal names the rank whose NIC saw it: that NIC is the culprit.
    assert report.verdict == "culprit found"
    link = report.suspects[0]
    assert (link.kind, link.rank, link.node, link.nic) == ("link", 13, "node002", "mlx5_5")
    assert link.port == "leaf-g00-r5:Ethernet8" and link.optic
    assert link.peer == "::ffff:10.205.0.1"
    peer = report.suspects[1]
    assert (peer.kind, peer.node, peer.nic, peer.port) == \
        ("peer", "node001", "mlx5_5", "leaf-g00-r5:Ethernet0")
    roles = [(w.status, w.role) for w in report.warnings if w.type == "ib_completion_error"]
    assert roles[0] == (12, "signal") and {r for s, r in roles[1:]} == {"teardown"}
    assert len(roles) == 5  # the same line said again is counted, not listed again
    assert any("10 IB completion(s) with status 5" in n for n in report.notes)
    assert "retry counter exceeded" in (report.warnings[0].meaning or "")
    # Only one fault: the flushes never become suspects of their own.
    assert {s.fault for s in report.suspects} == {1}


def test_connection_closed_by_local_rank_names_the_process_that_went_away(
        demo: FabricGraph) -> None:
    report = run("localrank-cascade", demo)
    assert report.verdict == "culprit found"
    first = report.suspects[0]
    assert (first.kind, first.rank, first.node, first.gpu) == ("local rank", 11, "node002", 3)
    assert first.port == "leaf-g00-r3:Ethernet8"
    assert len(report.suspects) == 1
    assert any("6 later `Connection closed by localRank`" in n for n in report.notes)


def test_the_line_prefix_is_the_global_rank_and_a_stale_message_rank_is_not_used() -> None:
    report = run("stale-pg-rank")
    assert first_ranks(report) == [1]
    states = {r.rank: r for r in report.ranks}
    assert states[3].timed_out == 900 and states[1].state == "lagging"
    assert any("rank 3's (prefix) but the message says Rank 1" in n for n in report.notes)


def test_all_launched_none_completed_with_ras_healthy_names_no_rank() -> None:
    report = run("network-path")
    assert report.verdict == "network path"
    assert len(report.suspects) == 1
    stuck = report.suspects[0]
    assert stuck.rank is None and stuck.kind == "stuck" and stuck.ranks == [0, 1, 2, 3]
    assert "do not name a rank" in report.summary
    assert report.collective is not None and report.collective.seq == 500


def test_without_ras_or_every_log_an_all_stuck_job_cannot_be_told(tmp_path: Path) -> None:
    for name in ("rank0.log", "rank1.log"):
        (tmp_path / name).write_bytes((FIXTURES / "network-path" / name).read_bytes())
    report = triage_paths([tmp_path])
    assert report.verdict == "cannot tell" and report.suspects == []


def test_different_collectives_at_one_sequence_number_are_an_application_desync() -> None:
    report = run("app-desync")
    assert report.verdict == "application desync"
    assert [(s.kind, s.rank) for s in report.suspects] == [("desync", 3)]
    assert "_ALLGATHER_BASE 1024" in report.suspects[0].reason
    assert "ALLREDUCE 4096" in report.suspects[0].reason
    assert "Not a network fault" in report.summary


def test_two_independent_faults_are_both_reported(demo: FabricGraph) -> None:
    report = run("two-faults", demo)
    assert report.verdict == "culprit found"
    by_fault = {(s.fault, s.kind, s.rank) for s in report.suspects}
    assert (1, "lagging", 2) in by_fault and (2, "link", 6) in by_fault
    link = next(s for s in report.suspects if s.kind == "link")
    assert (link.node, link.nic, link.port) == ("node002", "mlx5_2", "leaf-g00-r2:Ethernet8")
    assert "second, independent fault" in report.summary


def test_the_demo_fabrics_nccl_hang_names_the_planted_rank_node_and_port_first(
        demo: FabricGraph, tmp_path: Path) -> None:
    from fabtui.paths import shipped_templates
    from fabtui.sim.logs import job_log
    from fabtui.sim.scenario import find_scenario
    from fabtui.sim.state import build_sim, fresh_state

    sim = build_sim(fresh_state(demo_topology(), find_scenario("nccl-hang"),
                                [shipped_templates()]))
    log = tmp_path / "job.log"
    log.write_text(job_log(sim, 3600))
    report = triage_paths([log], demo)
    first = report.suspects[0]
    assert (first.rank, first.node, first.nic, first.port, first.optic) == \
        (21, "node003", "mlx5_5", "leaf-g00-r5:Ethernet16", "MT24000043")
    assert report.verdict == "culprit found"
    assert report.next[0].runbook == "nccl-hang-triage"


# ---- Flight Recorder dumps ----------------------------------------------------------------

def _dump(rank: int, last: int, lagging: bool) -> dict[str, Any]:
    entries = []
    for seq in range(1, last + 1):
        done = seq < last or lagging
        entries.append({
            "frames": [{"name": "all_reduce", "filename": "distributed_c10d.py", "line": 2696}],
            "record_id": seq - 1, "pg_id": 0, "process_group": ("0", "default_pg"),
            "collective_seq_id": seq, "p2p_seq_id": 0, "op_id": seq,
            "profiling_name": "nccl:all_reduce", "time_created_ns": 1724779239936775119 + seq,
            "input_sizes": [[3, 4]], "input_dtypes": ["Float"], "output_sizes": [[3, 4]],
            "output_dtypes": ["Float"], "state": "completed" if done else "scheduled",
            "time_discovered_started_ns": None,
            "time_discovered_completed_ns": 1724779239975811724 if done else None,
            "retired": done, "timeout_ms": 600000, "is_p2p": False})
    return {"version": "2.5", "rank": rank,
            "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3]"}},
            "pg_status": {"0": {"last_enqueued_collective": last, "last_started_collective": -1,
                                "last_completed_collective": last if lagging else last - 1}},
            "entries": entries}


@pytest.mark.parametrize("form", ["pickle", "json"])
def test_flight_recorder_dumps_find_the_rank_that_never_joined(tmp_path: Path, form: str) -> None:
    for rank in range(4):
        dump = _dump(rank, 4 if rank == 1 else 5, lagging=rank == 1)
        path = tmp_path / f"nccl_trace_rank_{rank}"
        if form == "pickle":
            path.write_bytes(pickle.dumps(dump))
        else:
            path.write_text(json.dumps(dump))
    report = triage_paths([tmp_path])
    assert report.verdict == "culprit found"
    assert [(s.kind, s.rank) for s in report.suspects] == [("lagging", 1)]
    assert report.collective is not None and report.collective.seq == 5
    assert report.collective.op == "all_reduce"
    states = {r.rank: r for r in report.ranks}
    assert states[0].dtype == "Float" and states[0].numel_in == 12
    assert report.world_size == 4


def test_a_pickled_dump_reads_as_its_json_and_a_pickle_of_no_dump_is_refused(
        tmp_path: Path) -> None:
    from fabtui.parsers import flight_recorder
    from fabtui.parsers.errors import ParseError
    from fabtui.triage.frpickle import read_dump

    dump = _dump(2, 5, lagging=False)
    dump["entries"][0]["input_sizes"] = ((2, 3),)  # as PyTorch pickles them: tuples
    dump["entries"][0]["time_created_ns"] = float("nan")
    read = read_dump(pickle.dumps(dump))
    assert read == flight_recorder.parse(json.dumps(dump).replace("NaN", "null"))
    assert read.entries[0].input_sizes == [[2, 3]] and read.entries[0].time_created_ns is None
    with pytest.raises(ParseError, match="no Flight Recorder dump keys"):
        read_dump(pickle.dumps({"version": "2.5", "rank": 0}))
    other = tmp_path / "nccl_trace_rank_0"
    other.write_bytes(pickle.dumps({"weights": [1, 2]}))
    with pytest.raises(InputError, match="no Flight Recorder dump keys"):
        triage_paths([other])


def test_a_pickle_that_would_run_code_is_refused_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self) -> tuple[Any, ...]:
            return (open, (str(marker), "w"))

    evil = tmp_path / "trace_0"
    evil.write_bytes(pickle.dumps({"entries": [Payload()]}))
    with pytest.raises(InputError) as caught:
        triage_paths([evil])
    assert "refers to io.open" in str(caught.value)
    assert not marker.exists()
    with pytest.raises(UnsafePickle):
        load_plain(b"\x80\x04garbage")


def test_different_dtypes_in_dumps_at_one_seq_are_a_desync(tmp_path: Path) -> None:
    for rank in range(3):
        dump = _dump(rank, 3, lagging=False)
        if rank == 2:
            dump["entries"][-1]["input_dtypes"] = ["BFloat16"]
        (tmp_path / f"trace_{rank}.json").write_text(json.dumps(dump))
    report = triage_paths([tmp_path])
    assert report.verdict == "application desync"
    assert [s.rank for s in report.suspects] == [2]


# ---- the real samples ---------------------------------------------------------------------

def sample(kind: str, name: str) -> Path:
    return SAMPLES / kind / name


def test_real_watchdog_with_desync_report_names_the_lagging_rank() -> None:
    report = triage_paths([sample("nccl-log",
                                  "mlengineering-pytorch-watchdog-timeout-desync-report.txt")])
    assert report.verdict == "culprit found"
    assert [(s.kind, s.rank) for s in report.suspects] == [("lagging", 1)]
    assert report.collective is not None and report.collective.seq == 2
    assert report.collective.op == "ALLREDUCE"


def test_real_single_rank_timeout_cannot_tell_but_reports_rank_and_seq() -> None:
    report = triage_paths([sample("nccl-log",
                                  "pytorch-watchdog-allreduce-rank1-cpp-stack-terminate.txt")])
    assert report.verdict == "cannot tell" and report.suspects == []
    assert report.ranks_seen == [1]
    state = report.ranks[0]
    assert (state.rank, state.timed_out, state.last_enqueued, state.last_completed) == \
        (1, 6463, 6463, 6462)
    assert report.collective is not None and report.collective.seq == 6463


def test_real_completion_error_12_points_at_the_path_to_its_peer() -> None:
    report = triage_paths([sample("nccl-log", "mlengineering-net-ib-completion-error12.txt")])
    assert report.verdict == "network path"
    assert (report.suspects[0].node, report.suspects[0].peer) == ("node-2", "10.2.0.5")
    assert report.warnings[0].status_name == "IBV_WC_RETRY_EXC_ERR"


def test_real_analyzer_report_names_the_missing_rank_and_sequence_number() -> None:
    report = triage_paths([sample("flight-recorder",
                                  "pytorch-tutorial-torchfrtrace-missing-rank.txt")])
    assert [(s.kind, s.rank) for s in report.suspects] == [("lagging", 1)]
    assert report.collective is not None and report.collective.seq == 5


@pytest.mark.parametrize("kind, name", [
    ("nccl-log", "slurmv4-nccl-2.27.5-full-init-2node-16gpu-roce-gdrdma.txt"),
    ("nccl-log", "felixfu-nccl-bootstrap-no-socket-interface-mpspawn.txt"),
    ("nccl-log", "awsome-fsdp-llama3-4node-p5-srun-torchrun-nccl-ofi.txt"),
    ("flight-recorder", "pytorch-tutorial-fr-unpickled-dump-v2.5.json.txt"),
    ("flight-recorder", "mlengineering-fr-pickle-analyze-output.txt"),
])
def test_real_samples_without_hang_evidence_cannot_tell(kind: str, name: str) -> None:
    report = triage_paths([sample(kind, name)])
    assert report.verdict == "cannot tell"
    assert report.suspects == []


def test_a_refused_connection_is_listed_but_not_called_a_network_fault() -> None:
    report = triage_paths([sample("nccl-log", "mlengineering-socket-connect-refused-line.txt")])
    assert report.verdict == "cannot tell"
    assert report.suspects[0].peer == "10.148.3.247"


# ---- reading ------------------------------------------------------------------------------

def test_key_lines_finds_every_key_line_with_its_number_across_chunk_edges(
        tmp_path: Path) -> None:
    lines = [f"plain training line {i}" for i in range(3000)]
    for at in (0, 17, 999, 1000, 2999):
        lines[at] = f"host:1:2 [0] NCCL WARN something {at}"
    lines[1500] = "node:1:2 [0] NCCL WARN NET/IB : Got completion from peer 1.2.3.4<5> with " \
                  "error 12, opcode 0, len"
    lines[1501] = "0, vendor err 129 (Recv)"
    path = tmp_path / "log"
    path.write_text("\n".join(lines))
    total: list[int] = []
    with open(path, "rb") as handle:
        found = list(key_lines(handle, chunk=997, total=total))
    assert total == [3000]
    assert [n for n, _, _ in found] == [1, 18, 1000, 1001, 1501, 1502, 3000]
    assert [n for n, _, follows in found if follows] == [1502]
    assert all(raw.decode() == lines[n - 1] for n, raw, _ in found)


def test_reports_render_as_text_and_markdown() -> None:
    report = run("victim-first")
    md = markdown(report)
    assert "**Verdict: culprit found.**" in md and "| 1 | lagging | 2 |" in md
    text = "\n".join(t.title[0] for t in tables(report) if t.title)
    assert "verdict: culprit found" in text


def test_a_missing_path_is_an_input_error() -> None:
    with pytest.raises(InputError) as caught:
        triage_paths([FIXTURES / "no-such-folder"])
    assert "no such file or folder" in str(caught.value)


def test_many_files_read_by_two_workers_give_the_same_report(tmp_path: Path) -> None:
    from fabtui.triage.analyze import analyze
    from fabtui.triage.ingest import PARALLEL_FROM, read_all

    source = (FIXTURES / "victim-first" / "rank0.log").read_text()
    lagging = (FIXTURES / "victim-first" / "rank2.log").read_text()
    ranks = PARALLEL_FROM + 8
    for rank in range(ranks):
        text = (lagging if rank == 33 else source).replace("Rank 0]", f"Rank {rank}]") \
            .replace("Rank 2]", f"Rank {rank}]")
        (tmp_path / f"rank{rank}.log").write_text(text)
    alone = analyze(read_all([tmp_path], workers=1))
    shared = analyze(read_all([tmp_path], workers=2))
    assert alone.model_dump() == shared.model_dump()
    assert [(s.kind, s.rank) for s in shared.suspects] == [("lagging", 33)]


def test_a_completion_error_told_only_in_last_error_still_names_the_path() -> None:
    name = "alpaca-issue207-terminate-ncclremoteerror-last-error-ib-error12-one-line.txt"
    report = triage_paths([sample("nccl-log", name)])
    assert report.verdict == "network path"
    assert report.suspects[0].peer == "11.214.147.122"
    assert report.warnings[0].status_name == "IBV_WC_RETRY_EXC_ERR"


def test_a_rendezvous_connect_timeout_is_not_called_a_network_path() -> None:
    report = triage_paths([sample(
        "nccl-log", "grl-issue27-c10d-client-socket-connect-timed-out-errno110.txt")])
    assert report.verdict == "cannot tell"
    assert "socket (bootstrap / rendezvous) failure" in report.summary


def test_real_watchdog_from_three_ranks_reports_them_and_their_seq_but_cannot_tell() -> None:
    report = triage_paths([sample(
        "nccl-log", "llamafactory-issue7396-watchdog-numbered-lines-rank-tags.txt")])
    assert report.verdict == "cannot tell"
    assert report.ranks_seen == [0, 3, 4]
    assert {r.timed_out for r in report.ranks} == {1580}


def test_analyzer_errors_and_missing_ranks_name_the_missing_ranks() -> None:
    report = triage_paths([sample("flight-recorder",
                                  "synthetic-fr-trace-2.6-errors-and-missing-ranks.txt")])
    assert report.verdict == "culprit found"
    assert [s.rank for s in report.suspects[:3]] == [3, 5, 7]
    assert report.collective is not None and report.collective.seq == 13


def test_ras_json_names_the_missing_rank(tmp_path: Path) -> None:
    path = tmp_path / "ras.json"
    path.write_text(json.dumps({
        "nccl_version": "2.29.1", "communicators_count": 1,
        "communicators": [{
            "hash": "0xae94423cfbb2ef4a", "size": 2, "ranks_count": 1, "missing_ranks_count": 1,
            "ranks": [{"rank": 0, "host": "172.16.64.245", "pid": 1524344, "cuda_dev": 0,
                       "nvml_dev": 0, "status": {"init_state": 0, "async_error": 0},
                       "collective_counts": {"AllReduce": 7, "Broadcast": 0}}],
            "missing_ranks": [{"rank": 1, "host": "172.16.64.245", "pid": 1524345,
                               "cuda_dev": 1, "nvml_dev": 1,
                               "status": {"unresponsive": True, "considered_dead": False}}]}],
        "ras": {"collection_time_sec": 0.0, "timeouts_count": 0}}, indent=2))
    report = triage_paths([path])
    assert report.verdict == "culprit found"
    assert [(s.kind, s.rank) for s in report.suspects] == [("dead", 1)]


def test_two_threads_on_one_communicator_are_an_application_desync(tmp_path: Path) -> None:
    for rank in range(2):
        dump = _dump(rank, 3, lagging=False)
        if rank == 1:
            extra = dict(dump["entries"][-1], record_id=99, profiling_name="nccl:broadcast")
            dump["entries"].append(extra)
        (tmp_path / f"trace_{rank}.json").write_text(json.dumps(dump))
    report = triage_paths([tmp_path])
    assert report.verdict == "application desync"
    first = report.suspects[0]
    assert first.rank == 1 and "two threads" in first.reason


def test_mpirun_tagged_lines_carry_the_global_rank(tmp_path: Path) -> None:
    lines = []
    for rank in range(4):
        text = (FIXTURES / "victim-first" / f"rank{rank}.log").read_text().splitlines()
        lines += [f"[1,{rank}]<stderr>:{line}" for line in text]
    log = tmp_path / "mpirun.out"
    log.write_text("\n".join(lines) + "\n")
    report = triage_paths([log])
    assert [(s.kind, s.rank) for s in report.suspects] == [("lagging", 2)]
    assert report.sources[0].ranks == [0, 1, 2, 3]


def test_docs_triage_documents_every_field_of_the_report() -> None:
    from fabtui.model import triage as model

    doc = (Path(__file__).resolve().parents[1] / "docs" / "triage.md").read_text()
    for cls in (model.TriageReport, model.Suspect, model.Evidence, model.Collective,
                model.RankState, model.WarnEvent, model.NextStep, model.SourceFile):
        section = doc.split(f"### `{cls.__name__}`", 1)[1].split("###", 1)[0]
        for name in cls.model_fields:
            assert f"| `{name}` |" in section, f"{cls.__name__}.{name}"


def test_a_log_repeating_failures_keeps_few_events_and_counts_the_rest(tmp_path: Path) -> None:
    from fabtui.triage.ingest import MAX_EVENTS_PER_TYPE, read_all

    log = tmp_path / "rank5.log"
    with log.open("w") as out:
        for i in range(4000):
            out.write(f"node001:4100:4160 [5] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got "
                      f"completion from peer 10.205.0.2<{50000 + i % 500}> with "
                      f"status=IBV_WC_WR_FLUSH_ERR(5) opcode=0 len=0 vendor err 249 (Recv)\n")
            out.write(f"[2025-10-03 18:10:{i % 60:02d}] step {i} loss 2.7 step_time 1.02s\n")
    facts = read_all([log])
    assert len(facts.events) == MAX_EVENTS_PER_TYPE
    assert facts.dropped[("ib_completion_error", 5)] == 4000 - MAX_EVENTS_PER_TYPE
    assert facts.sources[0].lines == 8000


def test_the_first_watchdog_is_told_by_its_time_stamp_not_the_file_order(tmp_path: Path) -> None:
    for path in (FIXTURES / "victim-first").iterdir():
        text = path.read_text()
        if path.name == "rank3.log":
            text = text.replace("[E1003 18:37:04.", "[E1003 18:36:58.")
        (tmp_path / path.name).write_text(text)
    report = triage_paths([tmp_path])
    assert any(n.startswith("rank 3's watchdog fired first") for n in report.notes)


def test_an_old_timeout_does_not_hide_a_rank_that_never_arrived(tmp_path: Path) -> None:
    """A rank that timed out long ago, then went on, is judged by where it is now: behind."""
    def watchdog(rank: int, seq: int) -> str:
        return (f"[rank{rank}]:[E1003 18:37:01.832146912 ProcessGroupNCCL.cpp:607] [Rank {rank}] "
                f"Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, "
                "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800017 "
                "milliseconds before timing out.\n")

    for rank in range(3):
        (tmp_path / f"rank{rank}.log").write_text(watchdog(rank, 10))
    (tmp_path / "rank3.log").write_text(
        watchdog(3, 5) + "[rank3]:[E1003 18:37:02.833575187 ProcessGroupNCCL.cpp:1394] [PG 0 "
        "(default_pg) Rank 3] Received a dump signal due to a collective timeout from rank 0 and "
        "we will try our best to dump the debug info. Last enqueued NCCL work: 9, last "
        "completed NCCL work: 9.\n")
    report = triage_paths([tmp_path])
    assert [(s.kind, s.rank) for s in report.suspects] == [("lagging", 3)]
