"""pfc-counters: SONiC `show pfc counters` and `--history` (pfcstat)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import pfc_counters, registry
from fabtui.parsers.errors import ParseError
from fabtui.render.table import render_tables

FIXTURES = Path(__file__).parent / "fixtures" / "pfc-counters"


def _text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_rx_and_tx_tables() -> None:
    result = pfc_counters.parse(_text("sonic-show-pfc-counters.txt"))
    assert list(result.rx) == ["Ethernet0", "Ethernet4", "Ethernet8"]
    assert result.rx["Ethernet0"]["PFC0"] == 1200
    assert result.rx["Ethernet8"]["PFC7"] == 807
    assert result.tx["Ethernet4"]["PFC0"] == 1410
    assert result.tx["Ethernet8"]["PFC3"] == 813
    assert result.history == {}


def test_history_us_and_ms() -> None:
    result = pfc_counters.parse(_text("sonic-show-pfc-counters-history.txt"))
    assert result.rx == {} and len(result.history) == 3
    pfc0 = result.history["Ethernet0"]["PFC0"]
    assert (pfc0.rx_pause_transitions, pfc0.total_rx_pause_time_us,
            pfc0.recent_rx_pause_time_us) == (12, 12_000_000, 1_200_000)
    assert pfc0.recent_rx_pause_timestamp == "01/10/2008, 21:20:00"
    assert result.history["Ethernet8"]["PFC7"].total_rx_pause_time_us == 80_000_007
    ms = pfc_counters.parse(_text("synthetic-sonic-pfc-counters-history-ms.txt"))
    pfc3 = ms.history["Ethernet0"]["PFC3"]
    assert (pfc3.total_rx_pause_time_us, pfc3.recent_rx_pause_time_us) == (88_412_000, 12_000)
    assert ms.history["Ethernet0"]["PFC0"].recent_rx_pause_timestamp is None
    assert ms.last_cached == "2025-03-04 09:00:00.000001"


def test_prefixes_crlf_and_na() -> None:
    text = _text("sonic-show-pfc-counters.txt").replace("  1,400", "    N/A")
    prefixed = "".join(f"[1,0]<stdout>: {line}\r\n" for line in text.splitlines())
    assert registry.detect(prefixed)[0][0] == "pfc-counters"
    result = pfc_counters.parse(prefixed)
    assert result.rx["Ethernet4"]["PFC0"] is None
    assert result.tx["Ethernet8"]["PFC0"] == 1810


def test_refusals() -> None:
    truncated = "\n".join(_text("sonic-show-pfc-counters.txt").splitlines()[:2])
    with pytest.raises(ParseError, match="without rows"):
        pfc_counters.parse(truncated)
    with pytest.raises(ParseError, match="no `Port Rx/Tx"):
        pfc_counters.parse("Ethernet0 is up\n")
    queue = Path(__file__).parent / "fixtures" / "queue-counters" / "sonic-show-queue-counters.txt"
    assert pfc_counters.detect(queue.read_text()) == 0.0


def test_table_renders() -> None:
    rendered = render_tables(pfc_counters.tables(pfc_counters.parse(
        _text("sonic-show-pfc-counters.txt"))))
    assert "Port Rx" in rendered and "1810" in rendered


def test_real_tx_table_with_cached_time_and_elision() -> None:
    result = pfc_counters.parse(_text(
        "sonic-utilities-pr1057-pfc-counters-tx-last-cached-elided.txt"))
    assert result.rx == {} and len(result.tx) == 7
    assert result.last_cached == "2020-08-19 22:25:42.146378"
    assert result.tx["Ethernet24"]["PFC7"] == 0
