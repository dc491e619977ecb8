"""Hang triage on log excerpts posted in public issue threads (tests/triage_fixtures/real).

Each case asserts what an expert reading only those lines can say: the ranks and sequence
numbers in them, the verdict, and the first signal. Sources and the threads' conclusions are in
tests/triage_fixtures/real/SOURCES.md; what triage reads differently from the expert (judgement
calls) is noted there, not asserted here.
"""

from __future__ import annotations

from pathlib import Path

from fabtui.model.triage import RankState, TriageReport
from fabtui.triage import triage_paths

REAL = Path(__file__).parent / "triage_fixtures" / "real"


def run(case: str) -> TriageReport:
    return triage_paths([REAL / case])


def state(report: TriageReport, rank: int) -> RankState:
    [found] = [r for r in report.ranks if r.rank == rank]
    return found


def test_status_12_before_status_5_on_a_host_that_names_no_rank_is_the_network_path() -> None:
    # NVIDIA/nccl#1814: `[4]` is the CUDA device, not a rank; the host and the peer are named.
    report = run("nccl-1814-status12-then-5")
    assert report.verdict == "network path"
    assert report.ranks_seen == []
    first = report.warnings[0]
    assert (first.status, first.role, first.evidence.line) == (12, "signal", 1)
    assert first.peer == "172.36.143.59" and first.node == "hostname-test"
    # The second status 5 line repeats the first word for word: counted, not listed again.
    assert [(w.status, w.role) for w in report.warnings[1:]] == [(5, "teardown")]
    assert any(n.startswith("2 IB completion(s) with status 5") for n in report.notes)
    link = report.suspects[0]
    assert (link.kind, link.rank, link.node) == ("link", None, "hostname-test")
    # The far end is the remote GID's NIC; 172.36.143.59 is its host's socket (OOB) address.
    far = next(s for s in report.suspects if s.kind == "peer")
    assert far.peer == "::ffff:29.87.4.221" and "172.36.143.59" in far.reason


def test_old_error_n_wording_and_the_local_rank_that_closed_first() -> None:
    # NVIDIA/nccl-tests#252: NCCL < 2.19 prints `with error 4, opcode ...`; no global rank.
    report = run("nccl-tests-252-error4-localrank")
    assert report.ranks_seen == []
    ib = [w for w in report.warnings if w.type == "ib_completion_error"]
    assert [(w.status, w.role, w.node, w.peer) for w in ib] == [
        (4, "signal", "kolyoz2", "10.0.35.1")]
    assert ib[0].meaning is not None and "not the network" in ib[0].meaning
    closed = [w for w in report.warnings if w.type == "connection_closed"]
    assert closed[0].node == "kolyoz2" and closed[0].role == "signal"
    assert all(w.role == "teardown" for w in closed[1:])
    assert report.verdict == "culprit found"
    first = report.suspects[0]
    assert (first.kind, first.rank, first.node) == ("local rank", None, "kolyoz2")
    assert "local rank 0" in first.reason
    # The error 4 is made by kolyoz2 itself: no far end is suspected.
    assert not any(s.kind == "peer" for s in report.suspects)


def test_a_desync_report_that_names_the_lagging_rank() -> None:
    # pytorch/pytorch#152623: TORCH_NCCL_DESYNC_DEBUG names rank 7, 133 collectives behind.
    report = run("pytorch-152623-desync-report")
    assert report.verdict == "culprit found"
    assert [(s.kind, s.rank) for s in report.suspects] == [("lagging", 7)]
    assert "#182" in report.suspects[0].reason and "#183" in report.suspects[0].reason
    rank0 = state(report, 0)
    assert (rank0.timed_out, rank0.last_enqueued, rank0.last_completed) == (241, 315, 183)
    assert rank0.op == "ALLREDUCE" and rank0.numel_in == 6
    assert any("rank 0's watchdog fired first" in n and "victim" in n for n in report.notes)


def test_broadcast_and_allreduce_at_one_sequence_number_is_an_application_desync() -> None:
    # NVIDIA/nccl#1409: rank 7 times out in BROADCAST, rank 3 in ALLREDUCE, both SeqNum 80078.
    report = run("nccl-1409-broadcast-vs-allreduce")
    assert report.verdict == "application desync"
    assert report.ranks_seen == [3, 7]
    ops = {r.rank: (r.timed_out, r.op, r.numel_in) for r in report.ranks}
    assert ops == {7: (80078, "BROADCAST", 5056), 3: (80078, "ALLREDUCE", 2106881)}
    assert (state(report, 7).last_enqueued, state(report, 7).last_completed) == (80078, 80077)
    desync = report.suspects[0]
    assert desync.kind == "desync" and sorted(desync.ranks) == [3, 7]


def test_a_numeric_prefix_before_rank_prefix_and_three_ranks_all_timed_out_cannot_tell() -> None:
    # hiyouga/LlamaFactory#7396: `[80746] [rank0]:...`, ranks 0, 3, 4 all in SeqNum 1580 of PG 1.
    report = run("llamafactory-7396-pg1-all-timed-out")
    assert report.verdict == "cannot tell"
    assert report.suspects == []
    assert report.ranks_seen == [0, 3, 4]
    assert {r.rank: r.timed_out for r in report.ranks} == {0: 1580, 3: 1580, 4: 1580}
    for rank in (0, 3):
        pg1 = [r for r in report.ranks if r.rank == rank and r.pg == "1"]
        assert [(r.last_enqueued, r.last_completed) for r in pg1] == [(1582, 1579)]
    # The hang is in the collective the watchdogs caught, not the last one enqueued ahead of it.
    assert report.collective is not None and report.collective.seq == 1580
    assert "sequence number 1580" in report.summary


def test_pg_id_guid_wording_and_three_ranks_all_timed_out_cannot_tell() -> None:
    # XPixelGroup/BasicSR#737: `[PG ID 0 PG GUID 0(default_pg) Rank 1]` (PyTorch 2.5+).
    report = run("basicsr-737-default-pg")
    assert report.verdict == "cannot tell"
    assert report.suspects == []
    assert report.ranks_seen == [0, 1, 2]
    assert {r.rank: r.timed_out for r in report.ranks} == {0: 808, 1: 808, 2: 808}
    for rank in (0, 1):
        assert (state(report, rank).last_enqueued, state(report, rank).last_completed) == (
            811, 807)
    assert report.collective is not None and report.collective.op == "ALLREDUCE"
    assert report.collective.numel == 9801523
    assert report.collective.seq == 808 and "sequence number 808" in report.summary


def test_net_ib_colon_wording_names_the_hca_of_the_failing_nic() -> None:
    # NVIDIA/nccl#1698: NCCL 2.2x prints `NET/IB: Got completion` (no space) and `hca mlx5_10`.
    report = run("nccl-1698-net-ib-colon-hca")
    assert report.verdict == "network path"
    assert report.ranks_seen == []
    first = report.warnings[0]
    assert (first.status, first.role, first.evidence.line) == (12, "signal", 1)
    assert first.hca == "mlx5_10"
    assert first.local_gid == "::ffff:192.168.6.3" and first.peer == "192.168.3.5"
    link = report.suspects[0]
    assert (link.kind, link.rank, link.node, link.nic) == ("link", None, "mycl-g2", "mlx5_10")
    # The failed path runs 192.168.6.3 -> 192.168.6.5 (the GIDs); 192.168.3.5 is the far host's
    # socket (OOB) address, on another subnet.
    far = next(s for s in report.suspects if s.kind == "peer")
    assert far.peer == "::ffff:192.168.6.5" and "192.168.3.5" in far.reason


def test_a_host_side_completion_error_with_no_rank_is_not_a_network_path(tmp_path: Path) -> None:
    # The status 4 line of NVIDIA/nccl-tests#252 alone: a local protection error is made by the
    # host (memory registration, GPUDirect RDMA), so the network path is not the suspect.
    lines = (REAL / "nccl-tests-252-error4-localrank" / "job.log").read_text().splitlines()
    (tmp_path / "job.log").write_text("\n".join(line for line in lines
                                                if "Got completion" in line) + "\n")
    report = triage_paths([tmp_path])
    assert report.verdict == "cannot tell"
    assert "not on the network path" in report.summary
    assert [(s.kind, s.node, s.peer) for s in report.suspects] == [
        ("link", "kolyoz2", "10.0.35.1")]
