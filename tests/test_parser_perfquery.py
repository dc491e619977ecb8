"""perfquery: extended / rcv-error-details / basic sets, hex values, prefixes, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import perfquery
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).parent / "fixtures" / "perfquery"


def test_extended_counters_two_switch_ports() -> None:
    result = perfquery.parse(
        (FIXTURES / "infiniband-exporter-perfquery-x-switch-2ports.txt").read_text())
    assert [(p.lid, p.port, p.counter_set) for p in result.ports] == [
        (1719, 1, "extended"), (1719, 2, "extended")]
    first, second = result.ports
    assert (first.cap_mask, first.cap_mask2) == ("0x5300", "0x0000002")
    assert first.counters["PortXmitData"] == 36298026860928
    assert first.counters["PortXmitWait"] == 22730501
    assert first.counters["SymbolErrorCounter"] == 0
    assert second.counters["PortRcvData"] == 39078804993378
    assert second.counters["PortXmitWait"] == 36510964
    assert len(first.counters) == len(second.counters) == 25


def test_rcv_error_details() -> None:
    result = perfquery.parse(
        (FIXTURES / "infiniband-exporter-perfquery-E-rcv-error-details.txt").read_text())
    port = result.ports[0]
    assert (port.lid, port.port, port.counter_set) == (1719, 1, "rcv_error_details")
    assert port.counters["PortLocalPhysicalErrors"] == 0
    assert port.counters["CounterSelect"] == 0


def test_basic_set_mpirun_prefix_saturated_counters() -> None:
    result = perfquery.parse(
        (FIXTURES / "synthetic-perfquery-basic-mpirun-with-ibwarn.txt").read_text())
    port = result.ports[0]
    assert (port.lid, port.port, port.counter_set, port.cap_mask) == (22, 1, "basic", "0x5A00")
    assert port.counters["SymbolErrorCounter"] == 65535
    assert port.counters["LinkDownedCounter"] == 12
    assert port.counters["CounterSelect"] == 0x1B01


def test_refusals() -> None:
    with pytest.raises(ParseError, match="iberror"):
        perfquery.parse("ibwarn: [1] mad_rpc: _do_madrpc failed; dport (Lid 9)\n"
                        "perfquery: iberror: failed: perfquery\n")
    with pytest.raises(ParseError) as caught:
        perfquery.parse("$ perfquery -x 5 1\n# Port extended counters: Lid 5 port 1\n")
    assert caught.value.line == 2
    assert perfquery.detect("CA 'mlx5_0'\n\tCA type: MT4123\n") == 0.0
