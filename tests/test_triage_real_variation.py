"""Hang triage on the classes of real-world variation of issue 36, one test per class, on log
excerpts posted in public issue threads (tests/triage_fixtures/real, provenance in SOURCES.md).

Each test asserts what an expert reading only those lines can say; the whole set is scored by
tests/test_triage_scoreboard.py.
"""

from __future__ import annotations

from pathlib import Path

from fabtui.model.triage import TriageReport
from fabtui.triage import triage_paths

REAL = Path(__file__).parent / "triage_fixtures" / "real"


def run(case: str) -> TriageReport:
    return triage_paths([REAL / case])


# ---- Flight Recorder analyzer reports in their several versions -------------------------------

def test_fr_analyzer_colon_wording_names_the_ranks_that_never_joined() -> None:
    # pytorch/pytorch#140969: `Not all ranks joining collective: sequence number: 31117`, the
    # wording between `... 5 at entry 4` (2.5) and `..., sequence number: N` (2.6+).
    report = run("pytorch-pr140969-fr-not-all-ranks-colon")
    assert report.verdict == "culprit found"
    assert sorted(s.rank for s in report.suspects if s.rank is not None) == [3, 4, 5, 6, 7]
    assert (report.world_size, report.world_size_source) == (8, "Flight Recorder analyzer")
    assert report.hung_seq == 31117


# ---- Asynchronous IB events name the host and NIC; the peer sees only the consequence ---------

def test_an_async_event_names_the_host_and_nic_and_the_peer_is_not_blamed() -> None:
    # NVIDIA/nccl#1710: node201's mlx5_0 raised `local access violation work queue error`;
    # node023 then got status 9 from node201's socket address. The thread pasted the lines as
    # a quote with every address turned into a markdown link.
    report = run("nccl-1710-async-lav-markdown-links")
    assert report.verdict == "culprit found"
    first = report.suspects[0]
    assert (first.kind, first.node, first.nic, first.confidence) == (
        "nic", "node201", "mlx5_0", "high")
    assert "IBV_EVENT_QP_ACCESS_ERR" in first.reason
    assert not any(s.node == "node023" for s in report.suspects)
    # The completion error is read through the markdown: peer and GIDs as NCCL printed them.
    [completion] = [w for w in report.warnings if w.type == "ib_completion_error"]
    assert (completion.peer, completion.remote_gid) == ("10.1.3.201", "::ffff:10.206.1.11")
    assert completion.evidence in first.evidence


def test_an_async_event_on_the_host_that_also_saw_a_completion_error_is_that_hosts_nic() -> None:
    # NVIDIA/nccl#1905 (async fatal event + status 4 on h100-28) and #1524 (async event, then
    # a status 5 flush on ubuntu20-server-2): one fault, that host's NIC.
    for case, node, nic in (("nccl-1905-async-fatal-lav-status4", "h100-28", "mlx5_ib0"),
                            ("nccl-1524-async-lav-then-flush", "ubuntu20-server-2", "mlx5_0")):
        report = run(case)
        assert report.verdict == "culprit found", case
        assert [(s.kind, s.node, s.nic) for s in report.suspects] == [("nic", node, nic)], case


def test_old_nccl_async_event_under_mpirun_with_collector_stamps_blames_the_host() -> None:
    # NVIDIA/nccl#230 (NCCL 2.4, `net_ib.cu`): `2019-...Z: [1,12]<stdout>:host:...` and no
    # device in the message: three ranks of one host saw its NIC fail, no one rank is it.
    report = run("nccl-230-async-catastrophic-mpirun-stamped")
    assert report.ranks_seen == [12, 13, 14]
    [nic] = report.suspects
    assert (nic.kind, nic.node, nic.rank, nic.ranks) == (
        "nic", "container-e275-1553839402050-12124-01-000057", None, [12, 13, 14])
    assert "IBV_EVENT_DEVICE_FATAL" in nic.reason


def test_an_old_completion_error_naming_no_host_cannot_tell_and_says_what_to_collect() -> None:
    # NVIDIA/nccl#902: `Got completion with error 12, opcode 0, len 0, vendor err 129` (NCCL
    # before 2.12 printed no peer; the thread quotes the message without its host prefix).
    report = run("nccl-902-old-completion-no-peer")
    [warn] = report.warnings
    assert (warn.type, warn.status, warn.status_name) == (
        "ib_completion_error", 12, "IBV_WC_RETRY_EXC_ERR")
    assert report.verdict == "cannot tell" and report.suspects == []
    assert any("NCCL_DEBUG=INFO" in item for item in report.collect)


# ---- Collective mismatch: PyTorch's fingerprint check and NCCL's COLL opCount lines ------------

def test_pytorch_detected_mismatch_is_an_application_desync_with_two_sides_untold() -> None:
    # modelscope/ms-swift#9443: rank 1 ALLREDUCE [195812480] vs rank 0 [51123456] at 3104;
    # aurekaresearch/OpenDDE#23: _ALLGATHER_BASE [.., 1435, 16] on rank 1 vs 1436 on rank 2.
    for case, seq, ranks in (("swift-9443-detected-mismatch-shape", 3104, [0, 1]),
                             ("opendde-23-detected-mismatch-allgather", 0, [1, 2])):
        report = run(case)
        assert report.verdict == "application desync", case
        assert sorted(s.rank for s in report.suspects if s.rank is not None) == ranks, case
        # Two sides: which one took the other code path is not in the lines.
        assert {s.confidence for s in report.suspects} == {"low"}, case
        assert "cannot tell which one" in report.summary
        assert report.hung_seq == seq
        assert report.collect, case


def test_nccl_coll_opcount_lines_where_one_process_runs_another_collective() -> None:
    # ROCm/rccl#429: at opCount 28c GPU 0 (pid 45006) runs AllReduce, GPU 2 (pid 45012)
    # AllGather, in the same 4-rank communicator. The lines name no rank: host and GPU.
    report = run("rccl-429-coll-opcount-allgather-vs-allreduce")
    assert report.verdict == "application desync"
    assert sorted((s.node, s.gpu, s.rank) for s in report.suspects) == [
        ("h03r3n06", 0, None), ("h03r3n06", 2, None)]
    assert "opCount 28c" in report.summary


def test_coll_opcount_odd_one_out_of_three_is_named_with_high_confidence(tmp_path: Path) -> None:
    # The rccl#429 lines plus GPU 0's lines again as a third process (pid 45008, GPU 1), as the
    # thread says ranks 0, 1 and 3 ran AllReduce: the AllGather process is the odd one out.
    lines = (REAL / "rccl-429-coll-opcount-allgather-vs-allreduce" / "job.log").read_text()
    third = [line.replace("45006:45006 [0]", "45008:45008 [1]")
             for line in lines.splitlines() if "AllReduce" in line]
    (tmp_path / "job.log").write_text(lines + "\n".join(third) + "\n")
    report = triage_paths([tmp_path])
    assert report.verdict == "application desync"
    [odd] = report.suspects
    assert (odd.node, odd.gpu, odd.confidence) == ("h03r3n06", 2, "high")
    assert "AllGather count 59205120" in odd.reason and "2 others" in odd.reason


# ---- Ranks that never logged a timeout ------------------------------------------------------

def test_a_rank_with_no_timeout_is_named_only_once_the_jobs_size_is_known() -> None:
    # huggingface/open-r1#620: ranks 1-6 time out in BROADCAST #4 (lines wrapped at 140
    # columns, rank 4 only `taking the entire process down`); rank 0 never does.
    case = REAL / "openr1-620-rank0-never-timed-out-wrapped"
    report = triage_paths([case])
    assert report.verdict == "cannot tell" and report.suspects == []
    assert report.world_size is None and report.world_size_at_least == 7
    assert report.hung_seq == 4
    assert any("rank(s) 0:" in item for item in report.collect)
    # The wrapped `OpTy` / `pe=BROADCAST` is read as one line.
    assert {r.rank: r.op for r in report.ranks if r.timed_out == 4} == {
        1: "BROADCAST", 2: "BROADCAST", 3: "BROADCAST", 5: "BROADCAST", 6: "BROADCAST"}
    # With the job's size given (the launcher's 7 processes), rank 0 is the suspect.
    known = triage_paths([case], world=(7, "--world-size"))
    assert known.verdict == "culprit found"
    assert [(s.kind, s.rank, s.confidence) for s in known.suspects] == [
        ("missing log", 0, "medium")]
    assert (known.world_size, known.world_size_source) == (7, "--world-size")


# ---- Process-group-local ranks, hung vs last enqueued sequence, RAS ---------------------------

def test_only_group_local_ranks_name_no_rank_and_say_so() -> None:
    # pytorch/pytorch#118369: PyTorch 2.1 lines without a launcher prefix; `[Rank 0]` times out
    # at 96117, 96120 and 96125 (several process groups), `[Rank 7]` at 64088.
    report = run("pytorch-118369-pg-local-ranks-only")
    assert report.rank_numbering == "group-local"
    assert report.verdict == "cannot tell" and report.suspects == []
    assert report.ranks_seen == []
    assert "only process-group ranks" in report.summary
    assert any("global rank" in item for item in report.collect)


def test_the_hung_sequence_number_is_the_timed_out_one_not_the_last_enqueued() -> None:
    # XPixelGroup/BasicSR#737: timed out in 808, enqueued up to 811.
    report = run("basicsr-737-default-pg")
    assert report.hung_seq == 808
    assert report.collective is not None and report.collective.last_enqueued == 811


def test_ras_world_size_and_the_ranks_it_printed_ahead() -> None:
    # NVIDIA/nccl#1911: RAS printed ranks 12 and 13 (ahead, at 641); the 30 behind are unnamed.
    report = run("nccl-1911-ras-names-ranks-ahead")
    assert (report.world_size, report.world_size_source) == (32, "RAS job summary")
    assert sorted(s.rank for s in report.suspects if s.rank is not None) == [
        r for r in range(32) if r not in (12, 13)]
    assert {s.confidence for s in report.suspects} == {"medium"}


def test_ras_healthy_with_one_rank_timed_out_cannot_tell_and_reads_the_world_from_ras() -> None:
    # NVIDIA/nccl#1730: RAS `RUNNING OK` for 256 ranks while rank 118's watchdog fired.
    report = run("nccl-1730-ras-healthy-one-rank")
    assert (report.world_size, report.world_size_source) == (256, "RAS job summary")
    assert report.verdict == "cannot tell" and report.suspects == []
    assert "launched the same operations" in report.summary
    assert report.hung_seq == 2398459
    assert any("py-spy" in item for item in report.collect)


# ---- Two-rank desyncs ------------------------------------------------------------------------

def test_a_two_rank_split_names_both_with_low_confidence_and_what_would_tell_them_apart() -> None:
    # NVIDIA/nccl#1409: rank 7 in BROADCAST, rank 3 in ALLREDUCE at SeqNum 80078.
    report = run("nccl-1409-broadcast-vs-allreduce")
    assert report.verdict == "application desync"
    [split] = report.suspects
    assert split.ranks == [3, 7] and split.confidence == "low"
    assert any("code path" in item for item in report.collect)


def test_a_sub_group_rank_alone_is_no_global_rank() -> None:
    # sgl-project/sglang#1693: `[PG 3 Rank 5] ... SeqNum=9141`, no launcher prefix.
    report = run("sglang-1693-pg3-rank-only")
    assert (report.verdict, report.rank_numbering, report.hung_seq) == (
        "cannot tell", "group-local", 9141)
    assert report.suspects == [] and report.ranks_seen == []
    assert any("[PG 3 Rank 5]" in note for note in report.notes)


# ---- Round 3, second pass: held-out-style threads (issue 36) ----------------------------------

def test_two_ranks_at_one_number_with_different_sizes_are_a_desync_neither_blamed() -> None:
    # rmaphoh/RETFound#39 (torchrun --nproc_per_node=2): both wait in SeqNum 5769, rank 0 with
    # 1 element, rank 1 with 2958336: nothing in the lines says which side is the odd one.
    report = run("retfound-39-two-rank-numel-differs")
    assert report.verdict == "application desync"
    [split] = report.suspects
    assert (split.rank, split.ranks, split.confidence) == (None, [0, 1], "low")


def test_a_rank_stuck_in_a_collective_its_peer_completed_is_behind_not_a_victim() -> None:
    # hiyouga/LlamaFactory#2902: rank 0 times out in 1516 and enqueued nothing after it; rank 1
    # completed 1516 and waits in 1517. Rank 1's watchdog line names no group: read as PG 1,
    # the one group the other lines name, so the confidence is low.
    report = run("llamafactory-2902-rank0-stopped-enqueuing")
    assert report.verdict == "culprit found"
    [culprit] = report.suspects
    assert (culprit.kind, culprit.rank, culprit.confidence) == ("lagging", 0, "low")
    assert "enqueued nothing after it" in culprit.reason
    assert any("names no process group" in note for note in report.notes)


def test_a_pg_less_watchdog_line_joins_the_group_the_other_lines_name() -> None:
    # hiyouga/LlamaFactory#7396: rank 4 printed only `[Rank 4] Watchdog caught ...`; ranks 0
    # and 3 print `[PG 1 Rank N]` at the same SeqNum: all three are PG 1's.
    report = run("llamafactory-7396-pg1-all-timed-out")
    assert {(r.rank, r.pg) for r in report.ranks} == {(0, "1"), (3, "1"), (4, "1")}
    assert report.verdict == "cannot tell"


def test_a_closure_after_the_process_aborted_its_own_communicator_is_teardown() -> None:
    # modelscope/FunASR#2006: `Connection closed by localRank 3` on m-0, and that process
    # (pid 14054, device 3: rank 11) printed `Abort COMPLETE` after its own watchdog fired.
    report = run("funasr-2006-closed-localrank-after-abort")
    assert report.verdict == "cannot tell" and report.suspects == []
    assert {w.role for w in report.warnings if w.type == "connection_closed"} == {"teardown"}
    assert any("own communicator abort" in note for note in report.notes)


def test_lines_wrapped_mid_message_under_a_runner_prefix_are_read_and_nobody_is_blamed() -> None:
    # mila-iqia/milabench#269: `host [stderr] [rankN]:` prefix, wrapped at 160 columns
    # (`... detected` / `by watchdog at work: 2070`). Before: four waiting ranks were blamed.
    report = run("milabench-269-host-stderr-prefix-wrapped")
    assert report.verdict == "cannot tell" and report.suspects == []
    states = {r.rank: r for r in report.ranks}
    assert {rank: s.timed_out for rank, s in states.items()} == {
        3: 2070, 11: 2070, 12: 2070, 14: 2070, 15: 2070}
    assert states[12].last_enqueued == 2070 and states[3].last_enqueued == 2082


def test_collector_prefixes_before_the_torchrun_rank_prefix_give_the_global_rank() -> None:
    # verl-project/verl#2995 (Ray `(WorkerDict pid=835, ip=..)` and a markdown backtick) and
    # NVIDIA/nccl#1610 (`[rank13]:` whose message says `[Rank 1]` of PG 11).
    ray = run("verl-2995-ray-worker-prefix")
    assert (ray.ranks_seen, ray.hung_seq, ray.suspects) == ([38], 10, [])
    sub = run("nccl-1610-pg-local-under-global-prefix")
    assert sub.verdict == "cannot tell" and sub.suspects == []
    assert {r.rank for r in sub.ranks} == {13, 14, 15}


def test_torchruns_first_failure_alone_blames_no_one() -> None:
    # ArrowLuo/CLIP4Clip#78: the summary's root cause, rank 1, is the process its own watchdog
    # took down (SIGABRT): a victim.
    report = run("clip4clip-78-torchrun-first-failure")
    assert report.verdict == "cannot tell" and report.suspects == []


def test_a_last_completed_count_above_the_last_enqueued_is_no_count() -> None:
    # vllm-project/vllm#6042: `Timeout at NCCL work: 1, last enqueued NCCL work: 1, last
    # completed NCCL work: 93459313471793` (an unset counter): before, rank 1 was `completed`.
    report = run("vllm-6042-ray-garbage-completed")
    [state] = report.ranks
    assert (state.rank, state.pg, state.last_completed, state.state) == (1, "1", None, "stopped")
    assert any("not a real count" in note for note in report.notes)
    assert report.verdict == "cannot tell" and report.suspects == []


# ---- The job's size from torchrun's rendezvous ------------------------------------------------

_RENDEZVOUS = """\
INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers. Result:
  restart_count=3
  master_addr=127.0.0.1
  master_port=29500
  group_rank=0
  group_world_size=1
  local_ranks=[0, 1]
  role_ranks=[0, 1]
  global_ranks=[0, 1]
  role_world_sizes=[2, 2]
  global_world_sizes=[2, 2]
"""
"""tianweiy/CenterPoint#224 (a comment): the block as torchrun's agent printed it (2 workers)."""

_RENDEZVOUS_RAY = """\
ray/0 (CommandActor pid=494406) INFO:torch.distributed.elastic.agent.server.api:[] Rendezvous complete for workers. Result:
ray/0 (CommandActor pid=494406)   restart_count=0
ray/0 (CommandActor pid=494406)   master_addr=tristanr-arch2
ray/0 (CommandActor pid=494406)   master_port=48089
ray/0 (CommandActor pid=494406)   group_rank=0
ray/0 (CommandActor pid=494406)   group_world_size=2
ray/0 (CommandActor pid=494406)   local_ranks=[0]
ray/0 (CommandActor pid=494406)   role_ranks=[0]
ray/0 (CommandActor pid=494406)   global_ranks=[0]
ray/0 (CommandActor pid=494406)   role_world_sizes=[2]
ray/0 (CommandActor pid=494406)   global_world_sizes=[2]
"""  # noqa: E501
"""meta-pytorch/torchx#492 (the PR description): the block under a Ray actor's prefix (two
agents of one worker each: `group_world_size` counts agents, `global_world_sizes` ranks)."""


def test_the_rendezvous_global_world_size_is_the_jobs_size(tmp_path: Path) -> None:
    for name, text in (("centerpoint", _RENDEZVOUS), ("torchx", _RENDEZVOUS_RAY)):
        log = tmp_path / f"{name}.log"
        log.write_text(text)
        report = triage_paths([log])
        assert (report.world_size, report.world_size_source) == (2, "torchrun rendezvous")


def test_with_the_rendezvous_the_rank_that_never_timed_out_is_named(tmp_path: Path) -> None:
    # ai2cm/ace#348's lines (ranks 1-3 wait in 1132079 on a 4-GPU node) after a rendezvous
    # line written here in torchrun's form (the thread posted none): with the size known,
    # rank 0 (no line) is the suspect; without it, no one is (the fixture's answer).
    log = tmp_path / "job.log"
    log.write_text("  global_world_sizes=[4, 4, 4, 4]\n" + (
        REAL / "ace-348-three-of-four-rank0-silent" / "job.log").read_text())
    report = triage_paths([log])
    assert report.verdict == "culprit found"
    assert [(s.kind, s.rank) for s in report.suspects] == [("missing log", 0)]
    assert run("ace-348-three-of-four-rank0-silent").suspects == []


def test_ray_worker_prefixes_with_brackets_or_a_colour_remnant_give_the_global_rank() -> None:
    # NVIDIA-NeMo/RL#2140: `(MegatronPolicyWorker[rank=97] pid=.., ip=..) [rank97]:` whose
    # message says `[Rank 6]` (a sub-group's rank); vllm-project/vllm#5484: `[36m(RayWorker..`.
    nemo = run("nemo-rl-2140-ray-worker-rank-pg-local")
    assert nemo.ranks_seen == [31, 97] and nemo.suspects == []
    assert (nemo.collective.seq, nemo.collective.op) == (1, "COALESCED")  # type: ignore[union-attr]
    [sub] = [r for r in nemo.ranks if r.rank == 97]
    assert sub.pg.startswith("?") and sub.timed_out == 1
    vllm = run("vllm-5484-ansi-remnant-gather")
    assert (vllm.ranks_seen, vllm.hung_seq, vllm.suspects) == ([1], 158046, [])


def test_an_ib_queue_pair_setup_timeout_names_the_host_and_nic_it_failed_from() -> None:
    # NVIDIA/nccl#2013: `host-01.example.com:XXXXXX [5] ... Call to ibv_modify_qp failed with
    # 110 Connection timed out, on dev mlx_x:1, ... remote GID ...` (pid blanked by the poster).
    # Before: an unread WARN, no answer.
    report = run("nccl-2013-modify-qp-timeout-anonymized")
    assert report.verdict == "network path"
    first = report.suspects[0]
    assert (first.kind, first.node, first.nic, first.peer) == (
        "link", "host-01.example.com", "mlx_x", "::ffff:xxx.xx.xxx.xx")
    assert "NCCL_CROSS_NIC" in report.summary


def test_ras_totals_table_gives_the_world_and_incomplete_data_blames_no_one() -> None:
    # NVIDIA/nccl#1762 (closed as a RAS bug): NCCL 2.27's second job-summary table
    # (`(total)` row: 2 nodes, 10 processes) and `Missing communicator data from 1 rank`.
    # Before: the world read as 2 (a communicator's size) and the INCOMPLETE lines unread.
    report = run("nccl-1762-ras-incomplete-bogus-rank")
    assert (report.world_size, report.world_size_source) == (10, "RAS job summary")
    assert report.verdict == "cannot tell" and report.suspects == []
    assert any("from rank 1 (process 60004 on 10.4.109.13)" in n for n in report.notes)
    assert report.summary.startswith("RAS reports errors")
