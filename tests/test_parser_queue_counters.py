"""queue-counters: SONiC `show queue counters` (queuestat)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import queue_counters, registry
from fabtui.parsers.errors import ParseError
from fabtui.render.table import render_tables

FIXTURES = Path(__file__).parent / "fixtures" / "queue-counters"


def _text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_per_port_tables() -> None:
    result = queue_counters.parse(_text("sonic-show-queue-counters.txt"))
    assert list(result.ports) == ["Ethernet0", "Ethernet4", "Ethernet8"]
    assert all(len(queues) == 30 for queues in result.ports.values())
    uc1 = result.ports["Ethernet0"]["UC1"]
    assert (uc1.packets, uc1.bytes, uc1.drop_packets, uc1.drop_bytes) == (60, 43, 39, 1)
    assert result.ports["Ethernet8"]["MC19"].drop_bytes == 3
    assert result.ports["Ethernet4"]["ALL29"].packets is None
    assert result.namespaces == [] and result.voq is False


def test_trim_columns_namespaces_and_cached() -> None:
    name = "synthetic-sonic-queue-counters-multiasic-trim-cleared.txt"
    result = queue_counters.parse(_text(name))
    uc3 = result.ports["Ethernet256"]["UC3"]
    assert (uc3.packets, uc3.drop_packets) == (8_412_339_120, 1207)
    assert uc3.other == {"trim_pkts": 0, "trimsent_pkts": 0, "trimdrop_pkts": 0}
    assert result.ports["Ethernet0"]["UC0"].other["trim_pkts"] is None
    assert result.namespaces == ["asic0", "asic1"]
    assert result.last_cached["Ethernet0"] == "2025-03-04 09:00:00.000001"


def test_voq_and_json() -> None:
    voq = ("     Port    Voq    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes"
           "    Credit-WD-Del/pkts\n"
           "---------  -----  --------------  ---------------  -----------  ------------"
           "  --------------------\n"
           "Ethernet0   VOQ0              68                8           91            39"
           "                     4\n")
    result = queue_counters.parse(voq)
    assert result.voq is True
    assert result.ports["Ethernet0"]["VOQ0"].other["credit_wd_del_pkts"] == 4
    js = ('{"Ethernet0": {"time": "2025-03-04", "UC0": {"totalpacket": "1,024", '
          '"totalbytes": "N/A", "droppacket": "3", "dropbytes": "0"}}}')
    parsed = queue_counters.parse(js)
    assert parsed.ports["Ethernet0"]["UC0"].packets == 1024
    assert parsed.ports["Ethernet0"]["UC0"].bytes is None


def test_prefix_crlf_and_refusals() -> None:
    prefixed = "".join(f"0: {line}\r\n" for line in _text("sonic-show-queue-counters.txt")
                       .splitlines())
    assert registry.detect(prefixed)[0][0] == "queue-counters"
    assert queue_counters.parse(prefixed).ports["Ethernet4"]["UC2"].packets == 99
    with pytest.raises(ParseError) as caught:
        queue_counters.parse(_text("synthetic-sonic-queue-counters-header-only.txt"))
    assert caught.value.line == 2
    with pytest.raises(ParseError, match="no `Port TxQ"):
        queue_counters.parse("Port Rx PFC0\n")
    assert "MC19" in render_tables(queue_counters.tables(queue_counters.parse(_text(
        "sonic-show-queue-counters.txt"))))


def test_real_captures_queue_drops_and_multi_asic_cache_line() -> None:
    mc = queue_counters.parse(_text(
        "sonic-buildimage-issue6290-queue-counters-ethernet4-mc-drops.txt"))
    assert [(q, s.drop_packets, s.drop_bytes) for q, s in mc.ports["Ethernet4"].items()
            if s.drop_packets] == [("MC10", 48, 3072), ("MC11", 260, 26992)]
    big = queue_counters.parse(_text(
        "sonic-utilities-issue2393-queue-counter-ethernet196-uc1-drops.txt")).ports["Ethernet196"]
    assert (big["UC1"].packets, big["UC1"].drop_packets) == (32_025_737_389, 6_841_131_615)
    asic = queue_counters.parse(_text(
        "sonic-buildimage-issue20913-queue-counter-multi-asic-nonzero-last-cached.txt"))
    assert asic.namespaces == ["asic0"]
    assert asic.last_cached == {"Ethernet0": "2024-12-05T21:43:32.337031"}
    assert asic.ports["Ethernet0"]["UC7"].bytes == 17_244
    assert asic.ports["Ethernet0"]["UC3"].drop_packets == 830_694_313
