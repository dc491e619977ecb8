"""perftest parser: the values triage reads, and the capture variations it must survive."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import perftest, registry
from fabtui.parsers.errors import ParseError
from fabtui.render.table import render_tables

FIXTURES = Path(__file__).parent / "fixtures" / "perftest"


def _fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


HEADER = """\
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF\t\tDevice         : mlx5_0
 Number of qps   : 1\t\tTransport type : IB
 Connection type : RC\t\tUsing SRQ      : OFF
 TX depth        : 128
 CQ Moderation   : 100
 Mtu             : 4096[B]
 Link type       : IB
 Max inline data : 0[B]
 rdma_cm QPs\t : OFF
 Data ex. method : Ethernet
---------------------------------------------------------------------------------------
 local address: LID 0x01 QPN 0x004c PSN 0x3a0d1f RKey 0x1fff00 VAddr 0x007e6f4ed11000
 remote address: LID 0x02 QPN 0x004a PSN 0xa89468 RKey 0x1fff00 VAddr 0x007778e64eb000
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 65536      5000             4508.97            4508.79\t\t   0.072141
 131072     5000             4510.10            4509.95\t\t   0.036080
---------------------------------------------------------------------------------------
"""


def test_client_send_bw_all_sizes() -> None:
    result = perftest.parse(_fixture("cnnotes-ib_send_bw-a-ib-client.txt"))
    assert (result.kind, result.test, result.tool, result.side) == \
        ("perftest", "Send", "ib_send_bw", "client")
    assert (result.unit, result.link_type, result.mtu, result.device) == \
        ("MB/sec", "IB", 4096, "mlx5_2")
    assert (result.num_qps, result.connection_type, result.tx_depth, result.cq_moderation) == \
        (1, "RC", 128, 100)
    assert result.ibv_wr_api is True and result.pcie_relax_order is True
    assert result.using_srq is False and result.rdma_cm_qps is False
    assert len(result.rows) == 23
    first, last = result.rows[0], result.rows[-1]
    assert (first.bytes, first.iterations, first.bw_peak, first.bw_avg, first.msg_rate) == \
        (2, 1000, 4.85, 4.80, 2.518597)
    assert (last.bytes, last.bw_peak, last.bw_avg, last.msg_rate) == \
        (8388608, 23401.80, 23396.08, 0.002925)
    # The wider column shift after 8192 bytes does not move values between columns.
    assert result.rows[12].bytes == 8192 and result.rows[12].bw_avg == 16674.65
    assert result.local_addresses[0].lid == "0x6e"
    assert result.remote_addresses[0].psn == "0x18941"
    assert result.main_index == 0 and result.results[0].rows == result.rows
    assert result.warnings == []


def test_server_prints_peak_zero_as_printed_with_a_warning() -> None:
    result = perftest.parse(_fixture("cnnotes-ib_send_bw-a-ib-server-peak-zero.txt"))
    assert result.side == "server" and result.rx_depth == 512 and result.tx_depth is None
    assert all(row.bw_peak == 0.0 for row in result.rows)
    assert result.rows[-1].bw_avg == 23426.81
    assert any("cannot measure the peak" in w for w in result.warnings)


def test_roce_gid_lines_attach_to_their_address() -> None:
    result = perftest.parse(_fixture("cnnotes-ib_send_bw-a-roce-10g-server.txt"))
    assert (result.link_type, result.mtu, result.gid_index) == ("Ethernet", 1024, 3)
    assert result.local_addresses[0].gid == "00:00:00:00:00:00:00:00:00:00:255:255:10:10:10:27"
    assert result.remote_addresses[0].gid == "00:00:00:00:00:00:00:00:00:00:255:255:10:10:10:26"


def test_cx3_warnings_and_cpu_frequency_lines_inside_the_table() -> None:
    result = perftest.parse(_fixture("felixfu-ib_write_bw-cx3-ib-client.txt"))
    assert result.test == "RDMA_Write" and result.device == "mlx4_0" and result.mtu == 2048
    assert result.rdma_cm_qps is False  # `rdma_cm QPs<TAB> : OFF`
    assert [(r.bytes, r.iterations, r.bw_peak, r.bw_avg, r.msg_rate) for r in result.rows] == \
        [(65536, 5000, 4508.97, 4508.79, 0.072141)]
    assert result.local_addresses[0].rkey == "0x010100"
    assert any("ConnectX-3" in n for n in result.notices)
    assert any("Conflicting CPU frequency" in n for n in result.notices)


def test_latency_row_with_tabs_and_percentiles() -> None:
    result = perftest.parse(_fixture("felixfu-ib_write_lat-cx3-ib-client.txt"))
    assert (result.test, result.test_type, result.unit, result.side) == \
        ("RDMA_Write", "lat", "usec", "client")
    row = result.rows[0]
    assert (row.bytes, row.iterations, row.t_min_usec, row.t_max_usec, row.t_typical_usec,
            row.t_avg_usec, row.t_stdev_usec, row.p99_usec, row.p99_9_usec) == \
        (2, 1000, 0.96, 1.02, 0.98, 0.98, 0.01, 1.00, 1.02)
    assert row.bw_peak is None and row.msg_rate is None


def test_server_banner_without_table_is_a_valid_empty_result() -> None:
    result = perftest.parse(_fixture("wikijs-ib_read_lat-mlx4-fdr-server.txt"))
    assert (result.side, result.test, result.test_type, result.rows) == \
        ("server", "RDMA_Read", "lat", [])
    assert result.outstand_reads == 16 and result.local_addresses[0].out == "0x10"


def test_loopback_client_then_server_blocks() -> None:
    result = perftest.parse(_fixture("superbench-ib_write_bw-loopback-8M-server-client.txt"))
    assert [r.side for r in result.results] == ["client", "server"]
    assert result.main_index == 0 and result.side == "client" and result.tx_depth == 128
    assert result.rows[0].bw_avg == 24056.72 and result.rows[0].iterations == 20000
    assert result.results[1].local_addresses[0].qpn == "0x095e"


def test_interleaved_loopback_gives_client_all_rows() -> None:
    result = perftest.parse(_fixture("superbench-ib_write_bw-loopback-allsizes.txt"))
    server, client = result.results
    assert (server.side, client.side, result.main_index, result.side) == \
        ("server", "client", 1, "client")
    assert [r.bytes for r in client.rows] == [2 ** i for i in range(1, 24)]
    assert [r.bytes for r in server.rows] == [8388608]
    assert client.tx_depth == 128 and server.tx_depth is None
    assert client.mtu == server.mtu == 4096
    assert any("interleaved" in w for w in result.warnings)


def test_multiple_runs_keep_every_block_and_units() -> None:
    result = perftest.parse(_fixture(
        "synthetic-three-runs-send_bw-send_lat-read_bw-mib-gbits.txt"))
    assert [(r.tool, r.test_type, r.unit) for r in result.results] == [
        ("ib_send_bw", "bw", "MiB/sec"), ("ib_send_lat", "lat", "usec"),
        ("ib_read_bw", "bw", "Gb/sec")]
    assert result.main_index == 0 and result.rows[0].bw_avg == 46557.03
    assert result.results[0].header["Lock-free"] == "OFF"
    assert result.results[2].rows[0].bw_avg == 328.61


def test_gpudirect_bidirectional_multi_qp() -> None:
    result = perftest.parse(_fixture("synthetic-ib_write_bw-bidir-gbits-cuda-2qp-roce-rdma_cm.txt"))
    assert result.bidirectional and result.gpudirect
    assert (result.gpu_api, result.gpu_name, result.num_qps) == ("CUDA", "NVIDIA H200", 2)
    assert len(result.local_addresses) == len(result.remote_addresses) == 2
    assert all(a.gid for a in result.local_addresses + result.remote_addresses)
    assert (result.data_ex_method, result.header["TOS"], result.rdma_cm_qps) == \
        ("rdma_cm", "41", True)
    assert [r.bytes for r in result.rows] == [2, 4, 8388608]
    assert any("elided" in w for w in result.warnings)


def test_old_layout_and_truncated_last_row() -> None:
    result = perftest.parse(_fixture("synthetic-ib_write_lat-old-5col-truncated-row.txt"))
    assert result.mtu == 2048 and result.max_inline_data == 400 and result.dual_port is None
    assert [(r.bytes, r.t_typical_usec, r.t_avg_usec) for r in result.rows] == \
        [(2, 0.96, None), (4, 0.96, None)]
    assert any(w.startswith("line 18: incomplete") for w in result.warnings)


def test_perftest_1x_inline_sentence() -> None:
    text = HEADER.replace(" Max inline data : 0[B]", "Inline data is used up to 400 bytes message")
    assert perftest.parse(text).max_inline_data == 400


def test_failed_run_keeps_errors_and_no_rows() -> None:
    result = perftest.parse(_fixture("synthetic-ib_write_bw-completion-error-no-rows.txt"))
    assert result.rows == [] and result.unit == "MB/sec"
    assert "Failed status 12: wr_id 0 syndrom 0x81" in result.errors


def test_duration_mode_latency_columns() -> None:
    result = perftest.parse(_fixture("synthetic-ib_send_lat-duration-ud-srun-prefix.txt"))
    row = result.rows[0]
    assert (result.connection_type, row.iterations, row.t_avg_usec, row.tps_avg) == \
        ("UD", 2912453, 0.86, 1165052.31)
    assert row.t_min_usec is None


def test_crlf_and_mpirun_prefix() -> None:
    raw = (FIXTURES / "synthetic-ib_read_bw-mpirun-tag-output-crlf.txt").read_bytes()
    assert b"\r\n" in raw
    result = perftest.parse(raw.decode())
    assert (result.tool, result.unit, result.outstand_reads) == ("ib_read_bw", "Gb/sec", 16)
    assert [r.bw_avg for r in result.rows] == [196.49, 197.10]


@pytest.mark.parametrize("prefix", ["node17: ", "> ", "3: "])
def test_line_prefixes_are_removed(prefix: str) -> None:
    text = "".join(prefix + line + "\n" for line in HEADER.splitlines())
    result = perftest.parse(text)
    assert (result.device, result.mtu, result.tx_depth) == ("mlx5_0", 4096, 128)
    assert [r.bw_avg for r in result.rows] == [4508.79, 4509.95]


def test_lines_with_trailing_blanks_and_a_blank_space_line() -> None:
    text = "\n".join(line + "   " for line in HEADER.splitlines())
    text = text.replace(" #bytes", " \n #bytes")  # a line holding a single space
    result = perftest.parse(text)
    assert len(result.rows) == 2 and result.rows[1].msg_rate == 0.03608


def test_report_cycles_unit_and_per_port_columns() -> None:
    cycles = HEADER.replace("RDMA_Write BW Test", "RDMA_Write Latency Test").replace(
        " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]",
        " #bytes #iterations    t_min[cycles]    t_max[cycles]  t_typical[cycles]").replace(
        " 65536      5000             4508.97            4508.79\t\t   0.072141",
        " 2       1000          2010.00           9000.00         2100.00").replace(
        " 131072     5000             4510.10            4509.95\t\t   0.036080\n", "")
    result = perftest.parse(cycles)
    assert result.unit == "cycles" and result.rows[0].t_typical_usec == 2100.0
    per_port = HEADER.replace(
        "MsgRate[Mpps]\n", "MsgRate[Mpps]   BW Port1[MB/sec]   MsgRate Port1[Mpps]   "
        "BW Port2[MB/sec]   MsgRate Port2[Mpps]\n").replace(
        "0.072141", "0.072141 2254.1 0.036 2254.7 0.036").replace(
        "0.036080", "0.036080 2255.0 0.018 2254.9 0.018")
    row = perftest.parse(per_port).rows[0]
    assert (row.bw_port1, row.msg_rate_port1, row.bw_port2, row.msg_rate_port2) == \
        (2254.1, 0.036, 2254.7, 0.036)


def test_atomic_banner_and_side_from_rx_depth() -> None:
    text = HEADER.replace("RDMA_Write BW Test", "Atomic FETCH_AND_ADD BW Test")
    result = perftest.parse(text)
    assert (result.test, result.atomic_type) == ("Atomic", "FETCH_AND_ADD")
    server = HEADER.replace(" TX depth        : 128", " RX depth        : 512").replace(
        "RDMA_Write BW Test", "Send BW Test")
    assert perftest.parse(server).side == "server"


def test_refusals() -> None:
    with pytest.raises(ParseError) as caught:
        perftest.parse("hello world\n")
    assert "no perftest" in caught.value.message
    with pytest.raises(ParseError):
        perftest.parse(_fixture("synthetic-connect-refused-no-banner.txt"))
    with pytest.raises(ParseError):
        perftest.parse("[ 4435.115811] mlx5_core 0000:53:00.0 enp83s0f0np0: Link down\n")


def test_failed_client_with_command_line_is_kept() -> None:
    result = perftest.parse("$ ib_write_bw -d mlx5_0 10.0.0.2\n"
                            "Couldn't connect to 10.0.0.2:18515\n")
    assert result.tool == "ib_write_bw" and result.rows == []
    assert result.errors == ["Couldn't connect to 10.0.0.2:18515"]


def test_detection_is_distinctive() -> None:
    assert registry.detect(HEADER)[0][0] == "perftest"
    assert perftest.detect("ib_write_bw is a tool\n") < registry.DETECT_THRESHOLD
    assert perftest.detect("#  size  count  type  redop  root  time  algbw  busbw\n") == 0.0


def test_table_renders_the_main_rows() -> None:
    rendered = render_tables(perftest.tables(perftest.parse(HEADER)))
    assert "4508.79" in rendered and "bw_avg" in rendered
