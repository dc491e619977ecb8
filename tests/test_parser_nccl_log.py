"""nccl-log parser: failure events for hang triage, init facts, variations, a loose speed check."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.model.parsed.nccl_log import NcclLogEvent
from fabtui.parsers import nccl_log, registry
from fabtui.parsers.errors import ParseError
from fabtui.render.table import render_tables

FIXTURES = Path(__file__).parent / "fixtures" / "nccl-log"


def _fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def _events(text: str, kind: str) -> list[NcclLogEvent]:
    return [e for e in nccl_log.parse(text).events if e.type == kind]


def test_ib_completion_error_wrapped_over_two_lines() -> None:
    result = nccl_log.parse(_fixture("mlengineering-net-ib-completion-error12.txt"))
    [event] = [e for e in result.events if e.type == "ib_completion_error"]
    assert (event.status, event.status_name, event.peer, event.peer_port) == \
        (12, "IBV_WC_RETRY_EXC_ERR", "10.2.0.5", 33092)
    assert (event.vendor_err, event.opcode, event.length, event.direction) == (129, 0, 0, "Recv")
    assert (event.host, event.pid, event.device, event.line) == ("node-2", 5776, 0, 3)
    assert event.source == "transport/net_ib.cc:1296"
    # `[0]` is the CUDA device; no init line or rank tag states the rank.
    assert (event.rank, event.rank_source, event.device) == (None, None, 0)
    assert event.status_meaning == "transport retry counter exceeded"
    assert [(d.index, d.device, d.port, d.link_layer) for d in result.transports] == \
        [(0, "ibP111p0s0", 1, "IB"), (1, "rdmaP1111p0s2", 1, "RoCE")]
    assert result.relaxed_ordering is True
    assert [(i.interface, i.address) for i in result.oob_interfaces] == [("eth0", "10.2.0.4")]


def test_newer_completion_formats_with_gids_hca_and_timestamps() -> None:
    events = _events(_fixture(
        "synthetic-2node-srun-gdrdma-partly-off-ib-completion-new-formats.txt"),
        "ib_completion_error")
    first, second = events
    assert (first.status, first.vendor_err, first.direction, first.hca) == \
        (12, 129, "Recv", "mlx5_1")
    assert (first.local_gid, first.remote_gid) == ("::ffff:10.40.1.12", "::ffff:10.40.0.12")
    assert (first.host, first.rank, first.rank_source) == ("gpu-n02", 3, "init")
    assert (second.status, second.status_name, second.opcode, second.vendor_err) == \
        (5, "IBV_WC_WR_FLUSH_ERR", 0, 249)
    assert second.source == "transport/net_ib/p2p.cc:648" and second.peer == "10.40.1.12"


def test_gdrdma_partly_off_and_init_facts() -> None:
    result = nccl_log.parse(_fixture(
        "synthetic-2node-srun-gdrdma-partly-off-ib-completion-new-formats.txt"))
    assert result.gpudirect_rdma is False
    assert (result.net_connections, result.net_connections_gdrdma) == (8, 4)
    off = [u for u in result.net_channel_use if not u.gdrdma]
    assert [(u.nic_index, u.connections, u.ranks) for u in off] == [(1, 4, [1, 3])]
    assert result.gpudirect_rdma_disabled == [
        "NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1' (no module)"]
    assert (result.nranks, result.n_nodes, result.local_ranks) == (4, 2, 2)
    assert result.hosts == ["gpu-n01", "gpu-n02"]
    assert [(r.rank, r.host) for r in result.ranks] == \
        [(0, "gpu-n01"), (1, "gpu-n01"), (2, "gpu-n02"), (3, "gpu-n02")]
    assert result.env == {"NCCL_IB_GID_INDEX": "3"}
    assert [e.type for e in result.events].count("ib_async_event") == 1


def test_full_init_log_roce_gdrdma() -> None:
    result = nccl_log.parse(_fixture("slurmv4-nccl-2.27.5-full-init-2node-16gpu-roce-gdrdma.txt"))
    assert result.nccl_version == "2.27.5+cuda12.9"
    assert (result.nranks, result.n_nodes, result.local_ranks) == (16, 2, 8)
    assert [d.device for d in result.transports] == \
        ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_11"]
    assert {d.link_layer for d in result.transports} == {"RoCE"}
    assert result.gpudirect_rdma is True
    assert (result.net_connections, result.net_connections_gdrdma) == (64, 64)
    assert result.channel_transports == ["NET/IB", "P2P/IPC"]
    assert (result.coll_channels, result.nvls_channels, result.p2p_channels_per_peer) == \
        (16, 0, 2)
    assert result.env["NCCL_IB_HCA"] == "mlx5_0,mlx5_1,mlx5_2,mlx5_5,mlx5_6,mlx5_7,mlx5_8,mlx5_11"
    assert result.networks == ["IB"]
    inits = [e for e in result.events if e.type == "init_complete"]
    assert len(inits) == 8
    assert (inits[0].rank, inits[0].nranks, inits[0].local_ranks, inits[0].local_rank,
            inits[0].n_nodes, inits[0].bus_id, inits[0].line) == (12, 16, 8, 4, 2, "9a000", 711)
    assert result.info_lines == 752 and result.warn_lines == 0


def test_old_nccl_2_4_init_ring_without_gdrdma() -> None:
    result = nccl_log.parse(_fixture("felixfu-nccl-2.4.8-init-net-ib-ring-2node.txt"))
    assert result.nccl_version == "2.4.8+cuda10.0"
    assert result.gpudirect_rdma is False and result.net_connections == 2
    assert [e.type for e in result.events] == ["plugin_not_found", "init_complete"]
    assert result.events[1].nranks == 2


def test_old_watchdog_form_and_desync_report() -> None:
    result = nccl_log.parse(_fixture("mlengineering-pytorch-watchdog-timeout-desync-report.txt"))
    timeout, desync = result.events
    assert (timeout.type, timeout.rank, timeout.seq, timeout.op, timeout.timeout_ms,
            timeout.ran_for_ms) == ("watchdog_timeout", 0, 2, "ALLREDUCE", 8000, 8097)
    assert (desync.type, desync.rank, desync.seq, desync.last_completed, desync.op) == \
        ("desync", 1, 3, 2, "ALLREDUCE")


def test_watchdog_restatements_merge_and_terminate_is_its_own_event() -> None:
    result = nccl_log.parse(_fixture("pytorch-watchdog-allreduce-rank1-cpp-stack-terminate.txt"))
    assert [e.type for e in result.events] == ["watchdog_timeout", "dist_backend_error"]
    timeout, terminate = result.events
    assert (timeout.rank, timeout.seq, timeout.timeout_ms, timeout.last_enqueued,
            timeout.last_completed, timeout.pg) == (1, 6463, 1800000, 6463, 6462,
                                                    "0 (default_pg)")
    assert (terminate.line, terminate.rank, terminate.seq, terminate.op) == \
        (16, 1, 6463, "ALLREDUCE")


def test_newer_watchdog_form_dump_signal_and_torchrun_report() -> None:
    result = nccl_log.parse(_fixture(
        "synthetic-pytorch-2.5-watchdog-new-form-torchrun-childfailed.txt"))
    types = [e.type for e in result.events]
    assert types == ["watchdog_timeout", "pg_status", "heartbeat_timeout", "process_terminated",
                     "nccl_error", "connection_closed", "child_failed", "child_failed",
                     "child_failed"]
    timeout = result.events[0]
    assert (timeout.rank, timeout.seq, timeout.op, timeout.last_enqueued,
            timeout.last_completed) == (3, 78, "_ALLGATHER_BASE", 79, 77)
    lagging = result.events[1]
    assert (lagging.rank, lagging.last_enqueued) == (5, 77)
    closed = result.events[5]
    assert (closed.rank, closed.peer, closed.peer_port) == (6, "gpu-n03.cluster", 35211)
    root_cause = result.events[7]
    assert (root_cause.rank, root_cause.host, root_cause.status, root_cause.local_rank,
            root_cause.pid) == (7, "gpu-n02.cluster", -6, 3, 915)
    assert "SIGABRT" in root_cause.message
    other = result.events[8]
    assert (other.rank, other.status, other.line) == (6, 1, 25)
    assert result.nccl_version == "2.21.5"


def test_newer_watchdog_form_alone_is_a_timeout() -> None:
    line = ("[PG ID 0 PG GUID 0(default_pg) Rank 1] failure detected by watchdog at work sequence "
            "id: 78 PG status: last enqueued work: 79, last completed work: 77\n")
    [event] = nccl_log.parse(line).events
    assert (event.type, event.rank, event.seq, event.last_enqueued, event.last_completed) == \
        ("watchdog_timeout", 1, 78, 79, 77)


def test_watchdog_without_seqnum_from_old_pytorch() -> None:
    line = ("RuntimeError: NCCL communicator was aborted on rank 3.  Original reason for failure "
            "was: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(OpType="
            "ALLREDUCE, Timeout(ms)=1800000) ran for 1806515 milliseconds before timing out.\n")
    [event] = nccl_log.parse(line).events
    assert (event.type, event.rank, event.seq, event.op, event.timeout_ms) == \
        ("watchdog_timeout", 3, None, "ALLREDUCE", 1800000)


def test_unhandled_system_error_socket_refused_bootstrap_and_plugin() -> None:
    [error] = nccl_log.parse(_fixture(
        "felixfu-pytorch-unhandled-system-error-nccl-2.4.8.txt")).events
    assert (error.type, error.line) == ("unhandled_system_error", 8)
    refused = nccl_log.parse(_fixture("mlengineering-socket-connect-refused-line.txt")).events[0]
    assert (refused.type, refused.peer, refused.peer_port, refused.host) == \
        ("socket_connect_refused", "10.148.3.247", 56821, "r11i6n2")
    boot = nccl_log.parse(_fixture("felixfu-nccl-bootstrap-no-socket-interface-mpspawn.txt"))
    assert [e.type for e in boot.events] == ["bootstrap_error"]
    plugin = nccl_log.parse(_fixture("cscs-net-plugin-could-not-find-ofi.txt"))
    assert [(e.type, e.line) for e in plugin.events] == \
        [("plugin_not_found", 1), ("plugin_not_found", 3)]


def test_transport_selection_lines_without_host_prefix() -> None:
    result = nccl_log.parse(_fixture("mlengineering-net-transport-selection-lines.txt"))
    fast = [d for d in result.transports if d.transport == "FastSocket"]
    assert len(fast) == 8 and (fast[0].device, fast[0].address) == ("ibs108", "10.0.19.12")
    bond = result.transports[-1]
    assert (bond.index, bond.device, bond.link_layer) == (8, "mlx5_bond_0", "RoCE")


def test_mixed_training_output_with_srun_prefixes() -> None:
    result = nccl_log.parse(_fixture("awsome-fsdp-llama3-4node-p5-srun-torchrun-nccl-ofi.txt"))
    assert result.nccl_version == "2.26.2+cuda12.2"
    assert result.net_plugins == ["aws-ofi-nccl 1.13.2-aws"]
    assert result.hosts == ["p5-dy-gpu-3", "p5-dy-gpu-4"]
    assert result.events == []


def test_crlf_mpirun_prefix_and_warn_with_function_name() -> None:
    text = ("[1,3]<stdout>:[2025-01-02 03:04:05] hostB:77:88 [3] misc/socket.cc:484 "
            "(socketStartConnect) NCCL WARN socketStartConnect: Connect to 10.1.2.3<39183> "
            "failed : Software caused connection abort\r\n"
            "[1,3]<stdout>:hostB:77:77 [3] NCCL INFO comm 0x1 rank 11 nRanks 16 nNodes 2 "
            "localRanks 8 localRank 3 MNNVL 0\r\n")
    [event] = nccl_log.parse(text).events
    assert (event.type, event.peer, event.peer_port, event.host, event.source) == \
        ("connect_failed", "10.1.2.3", 39183, "hostB", "misc/socket.cc:484")
    assert (event.rank, event.rank_source, event.line) == (11, "init", 1)


def test_gdr_lines_decide_when_there_are_no_channel_lines() -> None:
    text = ("h:1:1 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 18000 / HCA 0 (distance 5 > 4)\n"
            "h:1:1 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 0\n")
    result = nccl_log.parse(text)
    assert result.gpudirect_rdma is False
    assert result.gpudirect_rdma_disabled == [
        "GPU Direct RDMA Disabled for GPU 18000 / HCA 0 (distance 5 > 4)"]


def test_other_warns_are_kept_with_their_message() -> None:
    text = "h:1:2 [0] transport.cc:123 NCCL WARN Error : ring 0 does not loop back to start\n"
    [event] = nccl_log.parse(text).events
    assert (event.type, event.message) == \
        ("nccl_warn", "Error : ring 0 does not loop back to start")


@pytest.mark.parametrize("text", [
    "", "hello world\n", "NIC statistics:\n     rx_packets: 12\n",
    "  Not all ranks joining collective 5 at entry 4\n  missing ranks: {1}\n",
])
def test_other_input_is_refused(text: str) -> None:
    with pytest.raises(ParseError):
        nccl_log.parse(text)


def test_detection_of_each_family() -> None:
    assert registry.detect(_fixture("mlengineering-socket-connect-refused-line.txt"))[0][0] == \
        "nccl-log"
    watchdog = _fixture("pytorch-watchdog-allreduce-rank1-cpp-stack-terminate.txt")
    assert registry.detect(watchdog)[0][0] == "nccl-log"


def test_event_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nccl_log, "MAX_EVENTS", 3)
    text = "h:1:2 [0] x.cc:1 NCCL WARN something odd\n" * 5
    result = nccl_log.parse(text)
    assert len(result.events) == 3 and result.events_dropped == 2 and result.warn_lines == 5


def test_table_renders_plain_text() -> None:
    result = nccl_log.parse(_fixture("mlengineering-net-ib-completion-error12.txt"))
    rendered = render_tables(nccl_log.tables(result))
    assert "ib_completion_error" in rendered and "10.2.0.5" in rendered


def test_large_log_keeps_the_init_facts() -> None:
    """A 5 MB log still yields the facts of its init lines (speed lives in benchmarks/, never in
    a unit test: a loaded CI machine must not fail it)."""
    unit = _fixture("slurmv4-nccl-2.27.5-full-init-2node-16gpu-roce-gdrdma.txt")
    text = unit * (5_000_000 // len(unit) + 1)
    result = nccl_log.parse(text)
    assert result.gpudirect_rdma is True


# ---- issue 9: real-world variation (captures from public issue threads) ----------------------

def test_device_in_brackets_is_never_reported_as_the_rank() -> None:
    events = _events(_fixture("nccl-issue1405-ib-completion-status12-device4-no-rank.txt"),
                     "ib_completion_error")
    assert len(events) == 3
    for event in events:
        assert (event.rank, event.rank_source, event.device) == (None, None, 4)
        assert (event.status, event.status_name, event.status_meaning) == \
            (12, "IBV_WC_RETRY_EXC_ERR", "transport retry counter exceeded")
        assert (event.host, event.peer) == ("kp-ddp-worker-0", "10.216.210.236")
    assert [e.peer_port for e in events] == [54862, 54862, 49892]


def test_rank_from_the_init_line_of_the_same_process_or_a_torchrun_tag() -> None:
    # The init line is the real one of NVIDIA/nccl#1814 (device 4 is rank 36 of 64); the
    # WARN lines are built on its prefix to check the (host, pid) -> rank mapping.
    init = ("hostname-test:984:1257 [4] NCCL INFO comm 0x557fe785f7a0 rank 36 nranks 64 cudaDev 4"
            " nvmlDev 4 busId 9b000 commId 0x5ae77eb5ea4ec1ee - Init COMPLETE\n")
    warn = ("hostname-test:984:1299 [4] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got "
            "completion from peer 10.0.0.9<55921> with status=5 opcode=1 len=0 vendor err 249 "
            "(Send)\n")
    other = warn.replace(":984:", ":985:")
    tagged = "[rank7]:" + warn.replace(":984:", ":986:")
    events = _events(init + warn + other + tagged, "ib_completion_error")
    assert [(e.rank, e.rank_source, e.device) for e in events] == \
        [(36, "init", 4), (None, None, 4), (7, "pytorch", 4)]
    assert events[0].status_meaning == "Work Request Flushed Error"
    stated = warn.replace(":984:", ":987:").replace("NCCL WARN ", "NCCL WARN [Rank 9] ")
    [event] = _events(stated, "ib_completion_error")
    assert (event.rank, event.rank_source, event.device) == (9, "pytorch", 4)


def test_socket_failures_peer_and_peer_rank() -> None:
    result = nccl_log.parse(_fixture(
        "nccl-issue795-socket-broken-pipe-proxy-connect-from-rank9.txt"))
    broken, proxy, closed = result.events
    assert (broken.type, broken.peer, broken.peer_port) == \
        ("connection_closed", "10.200.84.247", 58355)
    assert (proxy.type, proxy.peer_rank, proxy.rank) == ("nccl_warn", 9, None)
    assert closed.type == "connection_closed" and closed.peer_port == 47861
    assert closed.peer is not None and closed.peer.endswith(".pcluster")


def test_gloo_connection_closed_and_read_error_with_peer_and_source() -> None:
    for name, peer, port, line in (
            ("pytorch-issue75512-gloo-connection-closed-by-peer.txt", "18.25.6.30", 28048, 2),
            ("pytorch-issue61670-gloo-closed-by-peer-jenkins-timestamps.txt", "172.17.0.2",
             16786, 4),
            ("rvc-issue1882-gloo-read-error-connection-reset.txt", "192.168.70.92", 25266, 1)):
        text = _fixture(name)
        assert registry.detect(text)[0][0] == "nccl-log"
        [event] = nccl_log.parse(text).events
        assert (event.type, event.peer, event.peer_port, event.line) == \
            ("connection_closed", peer, port, line)
        assert event.exception == "RuntimeError"
        assert event.source is not None and "gloo/transport/tcp/pair.cc:" in event.source


def test_c10d_connect_failures_errno_and_tcpstore_timeout() -> None:
    events = nccl_log.parse(_fixture(
        "grl-issue27-c10d-client-socket-connect-timed-out-errno110.txt")).events
    first = events[0]
    assert (first.type, first.peer, first.peer_port, first.status, first.status_meaning) == \
        ("connect_timeout", "::ffff:0.0.0.5", 40323, 110, "Connection timed out")
    assert [e.type for e in events].count("connect_failed") == 2
    [refused] = nccl_log.parse(_fixture(
        "pippy-issue158-c10d-cannot-assign-requested-address.txt")).events
    assert (refused.type, refused.peer, refused.peer_port, refused.status) == \
        ("connect_failed", "localhost", 29500, 99)
    timeout, store = nccl_log.parse(_fixture(
        "cppo-issue6-c10d-tcpstore-connect-timed-out.txt")).events
    assert (timeout.type, timeout.peer, timeout.peer_port) == \
        ("connect_timeout", "172.18.21.4", 37907)
    assert (store.type, store.peer, store.peer_port, store.source) == \
        ("store_error", "172.18.21.4", 37907, "TCPStore.cpp:318")


def test_nccl_error_result_code_and_last_error_over_following_lines() -> None:
    result = nccl_log.parse(_fixture(
        "nccl-issue2076-distbackenderror-remote-error-connection-reset.txt"))
    error, reset = result.events
    assert (error.type, error.exception, error.nccl_result) == \
        ("nccl_error", "torch.distributed.DistBackendError", "ncclRemoteError")
    assert (error.peer, error.peer_port) == ("172....", 33759)
    assert "Last error: socketProgressOpt" in error.message
    assert (reset.type, reset.line) == ("connection_closed", 4)
    # The `NCCL error in:` line cut off by the poster: the result line alone is the event.
    error, closed = nccl_log.parse(_fixture(
        "nccl-issue1514-distbackenderror-internal-error-last-error-multiline.txt")).events
    assert (error.nccl_result, error.peer, error.peer_port, closed.type) == \
        ("ncclInternalError", "user", 43236, "connection_closed")


def test_terminate_and_what_on_one_line_keep_the_ib_cause() -> None:
    [event] = nccl_log.parse(_fixture(
        "alpaca-issue207-terminate-ncclremoteerror-last-error-ib-error12-one-line.txt")).events
    assert (event.type, event.exception, event.nccl_result) == \
        ("process_terminated", "std::runtime_error", "ncclRemoteError")
    assert (event.peer, event.peer_port, event.status, event.status_meaning) == \
        ("11.214.147.122", 39138, 12, "transport retry counter exceeded")


def test_nccl_cuda_failure_on_a_device_without_rank() -> None:
    result = nccl_log.parse(_fixture("nccl-issue1235-socket-closed-cuda-oom-proxy-service.txt"))
    [cuda] = [e for e in result.events if e.type == "cuda_error"]
    assert (cuda.device, cuda.rank, cuda.source) == (3, None, "include/alloc.h:178")
    assert result.events[0].type == "connection_closed"


def test_torchrun_report_ranks_hosts_and_the_raise_line_is_not_a_failure() -> None:
    text = _fixture("minigpt4-issue237-torchrun-childfailederror-two-ranks.txt")
    assert registry.detect(text)[0][0] == "nccl-log"
    root, other = nccl_log.parse(text).events
    assert (root.rank, root.rank_source, root.local_rank, root.status, root.pid) == \
        (0, "torchrun", 0, 1, 78970)
    assert (other.rank, other.pid, other.host) == (1, 78971, "n136-117-136.byted.org")
    assert other.exception == root.exception == \
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError"
    [only] = nccl_log.parse(_fixture(
        "unsloth-issue4-torchrun-childfailederror-no-other-failures-prompt.txt")).events
    assert (only.line, only.rank, only.host, only.status) == (9, 0, "192-222-55-138", 1)


def test_watchdog_lines_numbered_by_a_collector_and_unpadded_glog_month() -> None:
    result = nccl_log.parse(_fixture(
        "llamafactory-issue7396-watchdog-numbered-lines-rank-tags.txt"))
    assert [(e.type, e.rank, e.seq) for e in result.events] == [
        ("watchdog_timeout", 0, 1580), ("watchdog_timeout", 4, 1580),
        ("watchdog_timeout", 3, 1580)]
    assert result.events[0].message.startswith("[Rank 0] Watchdog caught")
    assert (result.events[0].last_enqueued, result.events[0].last_completed) == (1582, 1579)
    [event] = nccl_log.parse(_fixture(
        "diffsynth-issue458-watchdog-coalesced-pg-guid-unpadded-month.txt")).events
    assert (event.rank, event.op, event.seq, event.timeout_ms, event.ran_for_ms) == \
        (4, "COALESCED", 610, 600000, 600086)
    assert (event.last_enqueued, event.last_completed) == (616, 609)
    assert event.message.startswith("[Rank 4] Watchdog caught")


def test_c10d_connection_refused_and_dist_network_error() -> None:
    # The real c10d line of pytorch/PiPPy#158 with the errno a refused connect prints.
    line = _fixture("pippy-issue158-c10d-cannot-assign-requested-address.txt").replace(
        "errno: 99 - Cannot assign requested address", "errno: 111 - Connection refused")
    [event] = nccl_log.parse(line).events
    assert (event.type, event.peer, event.peer_port, event.status, event.status_meaning) == \
        ("socket_connect_refused", "localhost", 29500, 111, "Connection refused")
    reset = "torch.distributed.DistNetworkError: Connection reset by peer\n"
    [event] = nccl_log.parse(reset).events
    assert (event.type, event.exception) == \
        ("connection_closed", "torch.distributed.DistNetworkError")


def test_repeated_messages_skipped_after_the_first_still_count_hosts_and_lines() -> None:
    """Messages the scan remembers as read (settings, plugins, tracebacks) keep their effects:
    every host that prints them is known, the first setting wins, INFO lines all count."""
    lines = []
    for host, value in (("node-a", "eth0"), ("node-b", "eth1"), ("node-c", "eth2")):
        lines += [f"{host}:11:12 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to {value}",
                  f"{host}:11:12 [0] NCCL INFO TUNER/Plugin: Failed to find ncclTunerPlugin_v3",
                  f"{host}:11:12 [0] NCCL INFO NET/OFI Using aws-ofi-nccl 1.9.1",
                  f"{host}:11:12 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa",
                  f"{host}:11:12 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
                  "  File \"train.py\", line 7, in <module>"]
    result = nccl_log.parse("\n".join(lines) + "\n")
    assert result.hosts == ["node-a", "node-b", "node-c"]
    assert result.env == {"NCCL_SOCKET_IFNAME": "eth0"}
    assert (result.net_plugins, result.ofi_provider) == (["aws-ofi-nccl 1.9.1"], "efa")
    assert result.channel_transports == ["P2P/IPC"]
    assert result.info_lines == 15


def test_an_ib_queue_pair_timeout_with_a_blanked_pid_is_a_failed_connection_of_that_host() -> None:
    # NVIDIA/nccl#2013 (a comment): the poster blanked the pid and tid (`XXXXXX`) and addresses.
    from fabtui.parsers import nccl_log

    line = ("[2026-03-13 22:26:02] host-01.example.com:XXXXXX [5] ibvwrap.c:262 NCCL WARN Call "
            "to ibv_modify_qp failed with 110 Connection timed out, on dev mlx_x:1, curr state "
            "INIT, next state RTR, local GID index 3, local GID ::ffff:xxx.xx.xx.xx, remote GID "
            "::ffff:xxx.xx.xxx.xx")
    result = nccl_log.scan([line])
    assert result is not None
    [event] = result.events
    assert (event.type, event.host, event.pid, event.device, event.status, event.hca,
            event.local_gid, event.remote_gid) == (
        "connect_failed", "host-01.example.com", None, 5, 110, "mlx_x", "::ffff:xxx.xx.xx.xx",
        "::ffff:xxx.xx.xxx.xx")
