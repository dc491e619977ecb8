"""rdma statistic show: long lines, mail-wrapped lines, -p, -j, prefixes, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import rdma_statistic
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).parent / "fixtures" / "rdma-statistic"


def _parse(name: str) -> dict[str, dict[str, int]]:
    return rdma_statistic.parse((FIXTURES / name).read_text()).links


def test_one_long_line_per_link() -> None:
    links = _parse("cnnotes-rdma-statistic-show-4links-cx4lx.txt")
    assert list(links) == ["mlx5_0/1", "mlx5_1/1", "mlx5_2/1", "mlx5_3/1"]
    assert all(len(counters) == 29 for counters in links.values())
    first = links["mlx5_0/1"]
    assert first["out_of_buffer"] == 135
    assert (first["resp_cqe_error"], first["req_cqe_error"]) == (1009, 22)
    assert (first["resp_cqe_flush_error"], first["req_cqe_flush_error"]) == (998, 11)
    assert first["rx_icrc_encapsulated"] == 0


def test_wrapped_and_pretty_forms_merge() -> None:
    result = rdma_statistic.parse(
        (FIXTURES / "netdev-rdma-stat-show-and-pretty-iproute2-2019.txt").read_text())
    assert list(result.links) == ["mlx5_0/1"]
    counters = result.links["mlx5_0/1"]
    assert len(counters) == 21
    assert counters["rx_atomic_requests"] == 0 and counters["np_cnp_sent"] == 0
    assert result.warnings == []


def test_value_wrapped_onto_next_line() -> None:
    text = "link mlx5_0/1 out_of_sequence\n42 np_cnp_sent 7\n"
    assert rdma_statistic.parse(text).links["mlx5_0/1"] == {"out_of_sequence": 42,
                                                            "np_cnp_sent": 7}


def test_json_and_mpirun_prefix() -> None:
    links = _parse("synthetic-rdma-j-stat-show-2links.json")
    assert links["mlx5_0/1"]["np_cnp_sent"] == 90007
    assert links["mlx5_0/1"]["rp_cnp_handled"] == 48213
    assert "ifindex" not in links["mlx5_0/1"] and "port" not in links["mlx5_0/1"]
    tagged = _parse("synthetic-rdma-stat-show-mpirun-tag.txt")
    assert tagged["mlx5_0/1"]["out_of_sequence"] == 1204
    assert tagged["mlx5_0/1"]["local_ack_timeout_err"] == 9


def test_crlf_and_stray_token() -> None:
    result = rdma_statistic.parse("link mlx5_2/1 rx_write_requests 5 optional-counters\r\n"
                                  "\tnp_cnp_sent 3\r\n")
    assert result.links["mlx5_2/1"] == {"rx_write_requests": 5, "np_cnp_sent": 3}
    assert any("optional-counters" in w for w in result.warnings)


def test_refusals() -> None:
    with pytest.raises(ParseError) as caught:
        rdma_statistic.parse("$ rdma stat show\nlink mlx5_0/1\n")
    assert caught.value.line == 2
    with pytest.raises(ParseError):
        rdma_statistic.parse("link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev eth0\n")
    assert rdma_statistic.detect("mlx5_0 port 1 ==> ib0 (Up)\n") == 0.0
