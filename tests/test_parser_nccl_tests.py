"""nccl-tests parser: values that matter for triage, and the output variations it must survive."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import nccl_tests, registry
from fabtui.parsers.errors import ParseError
from fabtui.render.table import render_tables

FIXTURES = Path(__file__).parent / "fixtures" / "nccl-tests"

HEADER = (
    "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    "     time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
    "            (us)  (GB/s)  (GB/s)       \n"
)
ROW_8 = ("           8             2     float     sum      -1    17.93    0.00    0.00      0"
         "    17.72    0.00    0.00      0\n")
ROW_16 = ("          16             4     float     sum      -1    17.65    0.00    0.00      0"
          "    17.63    0.00    0.00      0\n")
FOOTER = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 19.7866 \n"


def _fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_new_format_with_markers_command_and_devices() -> None:
    result = nccl_tests.parse(_fixture("cscs-allreduce-2node-8xGH200-slingshot-v2.17.1.txt"))
    assert result.collective == "all_reduce" and result.collective_source == "marker"
    assert result.command is not None and "all_reduce_perf -b 8 -e 128M" in result.command
    assert (result.n_threads, result.n_gpus, result.min_bytes, result.max_bytes) == \
        (1, 1, 8, 134217728)
    assert (result.step, result.step_factor, result.warmup_iters, result.iters) == \
        ("2(factor)", 2, 1, 20)
    assert (result.agg_iters, result.validation, result.graph) == (1, 1, 0)
    assert len(result.ranks) == 8
    rank4 = result.ranks[4]
    assert (rank4.rank, rank4.host, rank4.device, rank4.bus_id, rank4.name, rank4.pid,
            rank4.group) == (4, "nid005487", 0, "0009:01:00", "NVIDIA GH200 120GB", 155254, 0)
    assert len(result.rows) == 25
    last = result.rows[-1]
    assert (last.size_bytes, last.count, last.dtype, last.redop, last.root) == \
        (134217728, 33554432, "float", "sum", -1)
    assert (last.out_of_place.time_us, last.out_of_place.algbw, last.out_of_place.busbw,
            last.out_of_place.wrong) == (1916.4, 70.04, 122.57, 0)
    assert last.in_place.busbw == 123.11
    assert (result.out_of_bounds, result.out_of_bounds_ok) == (0, True)
    assert (result.avg_busbw, result.avg_busbw_ok) == (19.7866, None)
    assert result.peak_busbw == 123.11
    assert result.status == "ok" and result.errors == []


def test_version_header_decodes_the_library_code() -> None:
    result = nccl_tests.parse(_fixture("cscs-allreduce-2node-2xGH200-v2.18.2-header.txt"))
    assert result.nccl_tests_version == "2.18.2"
    assert (result.nccl_headers_code, result.nccl_library_code) == (23007, 23007)
    assert result.nccl_version == "2.30.7"
    assert result.unalign == 0


def test_old_error_column_is_never_turned_into_wrong() -> None:
    result = nccl_tests.parse(_fixture("deepops-allreduce-roce-k8s-oldformat-error-column.txt"))
    assert result.columns[7] == "error"
    first = result.rows[0]
    assert first.root is None
    assert first.out_of_place.error == 2e-07 and first.out_of_place.wrong is None
    assert first.in_place.error == 2e-07 and first.in_place.wrong is None
    assert result.rows[-1].out_of_place.time_us == 175667.0
    assert result.collective == "all_reduce" and result.collective_source == "inferred"


def test_na_validation_and_blank_redop_of_alltoall() -> None:
    result = nccl_tests.parse(_fixture("superbench-alltoall-8xA100-c0.txt"))
    assert result.validation == 0
    row = result.rows[5]
    assert (row.size_bytes, row.count, row.redop, row.root) == (32, 1, None, None)
    assert row.out_of_place.error is None and row.out_of_place.wrong is None
    assert row.out_of_place.time_us == 89.00
    assert result.collective == "alltoall"


def test_all_gather_without_redop_column_and_interleaved_nccl_info() -> None:
    result = nccl_tests.parse(_fixture("superbench-allgather-8xA100-c0.txt"))
    assert result.columns[:4] == ["size", "count", "type", "time"]
    assert len(result.rows) == 34
    assert result.rows[-1].out_of_place.busbw == 223.39
    assert result.collective == "all_gather"


def test_srun_prefix_without_footer_is_incomplete() -> None:
    result = nccl_tests.parse(_fixture("awsome-allreduce-2node-p4de-srun-prefix.txt"))
    assert len(result.rows) == 28
    assert result.rows[-1].size_bytes == 1073741824 and result.rows[-1].in_place.busbw == 76.86
    assert result.status == "incomplete"
    assert any("footer" in w for w in result.warnings)


def test_mpirun_prefix_and_elided_rows() -> None:
    result = nccl_tests.parse(_fixture("awsome-allreduce-2node-p5-eks-mpirun-prefix-elided.txt"))
    assert result.rows_elided
    assert [r.size_bytes for r in result.rows][:2] == [0, 67108864]
    assert result.rows[-1].out_of_place.busbw == 437.79
    assert result.avg_busbw == 52.9753


def test_crlf_mpirun_prefix_and_info_lines_inside_the_table() -> None:
    raw = (FIXTURES / "synthetic-allgather-new-columns-mpirun-prefix-crlf.txt").read_bytes()
    assert b"\r\n" in raw
    result = nccl_tests.parse(raw.decode())
    assert result.collective == "all_gather" and result.collective_source == "command"
    assert len(result.rows) == 9 and len(result.ranks) == 16
    assert all(row.redop is None and row.root == -1 for row in result.rows)
    assert result.nccl_version == "2.21.5+cuda12.4"
    assert result.ranks[15].host == "gpu-b03"


def test_per_iteration_columns() -> None:
    result = nccl_tests.parse(_fixture("synthetic-reducescatter-per-iteration-columns-srun.txt"))
    assert result.per_iteration_columns
    half = result.rows[1].out_of_place
    assert (half.time_us, half.wrong, half.i_min_us, half.i_max_us, half.i_p99_us,
            half.i_cv_pct) == (52.77, 0, 51.94, 61.2, 60.85, 3.87)
    assert result.rows[1].in_place.i_cv_pct == 1.12
    assert result.collective == "reduce_scatter"


def test_wrong_data_and_min_bandwidth_failure() -> None:
    result = nccl_tests.parse(_fixture("synthetic-broadcast-wrong-data-min-bw-failed.txt"))
    assert result.rows[4].out_of_place.wrong == 2
    assert result.rows[5].out_of_place.wrong == 1024
    assert (result.out_of_bounds, result.out_of_bounds_ok) == (3, False)
    assert (result.avg_busbw, result.avg_busbw_ok) == (1.98625, False)
    assert result.status == "wrong_data"
    assert result.collective == "broadcast" and result.rows[0].root == 0


def test_failure_without_table_is_parsed_not_refused() -> None:
    text = (Path(__file__).parent / "fixtures" / "nccl-tests" /
            "cscs-test-nccl-failure-invalid-usage-plugin-not-found.txt").read_text()
    assert registry.detect(text)[0][0] == "nccl-tests"
    result = nccl_tests.parse(text)
    assert result.rows == []
    assert result.errors == ["Test NCCL failure common.cu:958 'invalid usage (run with "
                             "NCCL_DEBUG=WARN for details)"]
    assert result.failures[0].host == "nid006352" and result.failures[0].category == "nccl"
    assert result.nccl_warnings == ["Error: network AWS Libfabric not found."]
    assert result.status == "did_not_run"


def test_average_zero_after_init_failure_means_did_not_run() -> None:
    result = nccl_tests.parse(_fixture("synthetic-init-failure-no-table-avg-zero.txt"))
    assert result.avg_busbw == 0.0 and result.rows == []
    assert result.status == "did_not_run"
    assert [f.category for f in result.failures] == ["nccl", "test"]
    assert result.failures[1].message == "Test failure common.cu:891"
    assert result.failures[1].host == "gpu-102"


def test_reformatted_table_is_refused_with_its_header_line() -> None:
    with pytest.raises(ParseError) as caught:
        nccl_tests.parse(_fixture("mlengineering-allreduce-8xA100-massaged-columns.txt"))
    assert caught.value.line == 3
    assert "not the raw nccl-tests layout" in caught.value.message


def test_truncated_after_the_header_is_refused_with_a_line() -> None:
    text = "# nThread 1 nGpus 8 minBytes 8 maxBytes 128 step: 2(factor) warmup iters: 5\n#\n" + \
        HEADER
    with pytest.raises(ParseError) as caught:
        nccl_tests.parse(text)
    assert caught.value.line == 4


@pytest.mark.parametrize("text", [
    "NIC statistics:\n     rx_packets: 12\n",
    "host:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>\n",
    "", "hello\nworld\n",
])
def test_other_input_is_refused(text: str) -> None:
    with pytest.raises(ParseError):
        nccl_tests.parse(text)


def test_detection_prefers_nccl_tests_over_nccl_log_for_runs_with_debug_output() -> None:
    text = ("host:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n" * 50
            + "# nThread 1 nGpus 8 minBytes 8 maxBytes 16 step: 2(factor)\n" + HEADER + ROW_8)
    assert registry.detect(text)[0][0] == "nccl-tests"


def test_launcher_and_pdsh_prefixes_quoting_and_thousands_separators() -> None:
    text = ("nodeA: " + HEADER.replace("\n", "\nnodeA: ", 1)
            + "> " + ROW_8
            + "   1,048,576      262,144     float     sum      -1    17.65    0.00    0.00      0"
              "    17.63    0.00    0.00      0\n"
            + "  3: " + FOOTER.replace("\n", "\n  3: ", 1))
    result = nccl_tests.parse(text)
    assert [r.size_bytes for r in result.rows] == [8, 1048576]
    assert result.rows[1].count == 262144
    assert result.avg_busbw == 19.7866


def test_wrong_printed_in_exponent_form_is_an_integer() -> None:
    row = ("     4194304       1048576     float     sum      -1    53.10   78.99  148.10"
           " 1.04858e+06    52.90   79.29  148.66      0\n")
    result = nccl_tests.parse(HEADER + row + FOOTER.replace("0 OK", "1 FAILED"))
    assert result.rows[0].out_of_place.wrong == 1048580
    assert result.status == "wrong_data"


def test_headerless_rows_are_read_by_their_cell_count() -> None:
    result = nccl_tests.parse(ROW_8 + ROW_16 + FOOTER)
    assert len(result.rows) == 2 and result.rows[1].root == -1
    assert any("no table header" in w for w in result.warnings)


def test_cputime_and_timestamp_columns() -> None:
    header = HEADER.splitlines()[0].replace("time", "cputime") + "            timestamp\n"
    row = ROW_8.rstrip("\n") + "  2025-02-03 10:11:12\n"
    result = nccl_tests.parse(header + row + FOOTER)
    assert result.cputime
    assert result.rows[0].timestamp == "2025-02-03 10:11:12"
    assert result.rows[0].in_place.wrong == 0


def test_per_rank_wrong_and_launcher_failures_are_errors() -> None:
    text = (HEADER + ROW_8 + "rank=3 #wrong=12\n"
            "srun: error: nid0042: task 3: Exited with exit code 1\n")
    result = nccl_tests.parse(text)
    assert [f.category for f in result.failures] == ["wrong", "launcher"]
    assert result.status == "failed"


def test_table_renders_plain_text() -> None:
    result = nccl_tests.parse(_fixture("superbench-allreduce-8xA100-c0.txt"))
    rendered = render_tables(nccl_tests.tables(result))
    assert "all_reduce" in rendered and "235.26" in rendered and "N/A" in rendered


# ---- issue 9: a failed run still surfaces what NCCL printed (real issue-thread captures) ------

def test_failed_run_without_table_reports_the_peer_failure_and_the_failure_site() -> None:
    text = _fixture("nccl-tests-issue204-4090-socket-closed-test-nccl-failure-no-table.txt")
    assert registry.detect(text)[0][0] == "nccl-tests"
    result = nccl_tests.parse(text)
    assert (result.rows, result.status) == ([], "did_not_run")
    nccl, trace = result.failures
    assert (nccl.category, nccl.host, nccl.source, nccl.nccl_result) == \
        ("nccl", "DisAI-4090-2", "common.cu:961", "ncclInternalError")
    assert nccl.reason == "internal error - please report this issue to the NCCL developers"
    assert (trace.category, trace.source, trace.pid) == ("test", "common.cu:844", 914454)
    [closed] = result.events
    assert (closed.type, closed.host, closed.pid, closed.device, closed.rank) == \
        ("connection_closed", "DisAI-4090-3", 63755, 0, None)
    assert (closed.peer, closed.peer_port, closed.source, closed.line) == \
        ("10.102.0.232", 40318, "misc/socket.cc:50", 10)


def test_ib_completion_error_alone_is_an_event_with_its_status_meaning() -> None:
    # The thread's excerpt has no nccl-tests line of its own: parsed as `--as nccl-tests`.
    result = nccl_tests.parse(_fixture(
        "nccl-tests-issue252-ib-completion-error4-service-thread-no-table.txt"))
    assert (result.rows, result.failures, result.status) == ([], [], "did_not_run")
    [event] = result.events
    assert (event.type, event.status, event.status_name, event.status_meaning) == \
        ("ib_completion_error", 4, "IBV_WC_LOC_PROT_ERR", "local protection error")
    assert (event.peer, event.peer_port, event.vendor_err, event.direction) == \
        ("10.0.35.1", 49189, 81, "Send")
    assert (event.host, event.device, event.rank) == ("kolyoz2", 0, None)


def test_retry_exceeded_and_flushed_statuses_in_a_run_that_printed_rows() -> None:
    warn = ("gpu-7:4242:4300 [3] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from "
            "peer 10.1.1.8<51234> with status=12 opcode=0 len=0 vendor err 129 (Recv) "
            "localGid ::ffff:10.1.1.7 remoteGids::ffff:10.1.1.8\n")
    flushed = warn.replace("status=12", "status=5").replace("vendor err 129", "vendor err 249")
    init = ("gpu-7:4242:4242 [3] NCCL INFO comm 0x55e0 rank 11 nranks 16 cudaDev 3 busId 59000 "
            "commId 0x1 - Init COMPLETE\n")
    result = nccl_tests.parse("# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor)\n"
                              + init + HEADER + ROW_8 + warn + flushed)
    assert [(e.status, e.status_meaning, e.rank, e.rank_source, e.device)
            for e in result.events] == \
        [(12, "transport retry counter exceeded", 11, "init", 3),
         (5, "Work Request Flushed Error", 11, "init", 3)]
    assert result.status == "incomplete" and len(result.rows) == 1


def test_cuda_failures_with_reason_source_and_pid() -> None:
    result = nccl_tests.parse(_fixture(
        "nccl-tests-issue165-test-cuda-failure-invalid-device-ordinal-mpirun.txt"))
    assert (result.collective, result.status) == ("all_reduce", "did_not_run")
    cuda, trace, launcher = result.failures
    assert (cuda.category, cuda.reason, cuda.source, cuda.nccl_result) == \
        ("cuda", "invalid device ordinal", "common.cu:892", None)
    assert (trace.pid, launcher.category) == (9972, "launcher")
    result = nccl_tests.parse(_fixture("nccl-tests-issue263-test-cuda-failure-two-nodes.txt"))
    assert sorted({(f.host, f.pid) for f in result.failures if f.pid}) == \
        [("g0010", 888382), ("g0010", 888385), ("g0010", 888386), ("g0016", 3645592)]


def test_nccl_warn_only_capture_is_not_refused_but_info_only_is() -> None:
    warn = ("node1:10:20 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to "
            "10.0.0.2<45763> failed : Software caused connection abort\n")
    [event] = nccl_tests.parse(warn).events
    assert (event.type, event.peer, event.peer_port) == ("connect_failed", "10.0.0.2", 45763)
    with pytest.raises(ParseError):
        nccl_tests.parse(warn.replace("NCCL WARN", "NCCL INFO"))


def test_cause_quoted_in_the_failure_reason_is_an_event_without_nccl_debug() -> None:
    # nccl-tests prints `'%s / %s'` of ncclGetErrorString and ncclGetLastError (NCCL >= 2.19);
    # the line is built in that form, the cause text is the real WARN text of NVIDIA/nccl#1814.
    text = ("# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor)\n"
            "node7: Test NCCL failure common.cu:1279 'remote process exited or there was a "
            "network error / NET/IB : Got completion from peer 10.0.0.2<55921> with status=12 "
            "opcode=1 len=0 vendor err 129 (Send) localGid ::ffff:29.87.4.221 "
            "remoteGids::ffff:29.87.88.182'\n .. node7 pid 1234: Test failure common.cu:1167\n")
    result = nccl_tests.parse(text)
    assert result.failures[0].nccl_result == "ncclRemoteError"
    [event] = result.events
    assert (event.type, event.host, event.line, event.peer, event.peer_port) == \
        ("ib_completion_error", "node7", 2, "10.0.0.2", 55921)
    assert (event.status, event.status_meaning, event.direction) == \
        (12, "transport retry counter exceeded", "Send")
    # The same failure printed as a WARN line too is reported once.
    warn = ("node7:1234:1300 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from "
            "peer 10.0.0.2<55921> with status=12 opcode=1 len=0 vendor err 129 (Send)\n")
    assert len(nccl_tests.parse(warn + text).events) == 1


def test_footer_without_hash_is_read_and_fails_the_run() -> None:
    # Issue 36: a paste (or a docs page) that dropped the `#` of the footer left the run
    # `incomplete`, hiding `Out of bounds values : 2 FAILED`.
    result = nccl_tests.parse(_fixture(
        "nccl-tests-issue37-allgather-hash-stripped-footer-failed-command-only.txt"))
    assert (result.out_of_bounds, result.out_of_bounds_ok, result.avg_busbw) == (2, False, 128.942)
    assert result.status == "wrong_data" and result.warnings == []
    assert (result.collective, result.collective_source) == ("all_gather", "command")


def test_every_comment_line_reads_the_same_with_its_hash_stripped() -> None:
    # What a markdown page does to nccl-tests output pasted outside a code block.
    raw = _fixture("cscs-allreduce-2node-2xGH200-v2.18.2-header.txt")
    stripped = "\n".join(line.lstrip("# ") if line.lstrip().startswith("#") else line
                         for line in raw.splitlines())
    original, bare = nccl_tests.parse(raw), nccl_tests.parse(stripped)
    assert bare.ranks == original.ranks and len(bare.ranks) == 2
    assert (bare.n_gpus, bare.min_bytes, bare.max_bytes, bare.iters) == (
        original.n_gpus, original.min_bytes, original.max_bytes, original.iters)
    assert (bare.collective, bare.nccl_tests_version) == (
        original.collective, original.nccl_tests_version)
    assert (bare.avg_busbw, bare.out_of_bounds, bare.status) == (
        original.avg_busbw, original.out_of_bounds, original.status)
    assert bare.rows == original.rows


def test_root_prompt_command_names_the_collective_when_nothing_else_does() -> None:
    raw = _fixture("nccl-tests-issue37-allgather-hash-stripped-footer-failed-command-only.txt")
    raw = raw.replace("all_gather_perf -g 8", "# ./build/alltoall_perf -g 8", 1)
    result = nccl_tests.parse(raw)
    assert (result.collective, result.collective_source) == ("alltoall", "command")
    assert result.command == "./build/alltoall_perf -g 8 -b 4294967296 -e 4294967296 -n 100"


def test_a_paste_without_any_hash_is_detected_and_a_header_only_excerpt_refused() -> None:
    # NVIDIA/nccl-tests#249: ` nThread 1 nGpus 1 minBytes 8 ...` (every `#` stripped), cut
    # before the first row. Before: not detected as nccl-tests at all.
    from fabtui.parsers import nccl_tests
    from fabtui.parsers.errors import ParseError

    text = (FIXTURES / "nccl-tests-issue249-no-hash-blocking-header-only.txt").read_text()
    assert nccl_tests.detect(text) >= 0.9
    with pytest.raises(ParseError, match="truncated"):
        nccl_tests.parse(text)
