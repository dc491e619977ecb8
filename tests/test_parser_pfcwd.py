"""pfcwd: SONiC `show pfcwd stats` / `show pfcwd config` (sonic-utilities' own test outputs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import pfcwd
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).parent / "fixtures" / "pfcwd"


def _text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_stats_name_the_stormed_queues_and_their_counts() -> None:
    result = pfcwd.parse(_text("sonic-utilities-pfcwd-show-stats.txt"))
    stormed = {name for name, q in result.queues.items() if q.status == "stormed"}
    assert stormed == {"Ethernet0:3", "Ethernet8:4"}
    queue = result.queues["Ethernet8:4"]
    assert (queue.storms_detected, queue.storms_restored, queue.tx_drop, queue.rx_last_drop) == \
        (3, 2, 300, 200)


def test_config_reads_action_times_and_poll_interval() -> None:
    result = pfcwd.parse(_text("sonic-utilities-pfcwd-show-config-history.txt"))
    assert result.poll_interval_ms == 600 and result.queues == {}
    assert {p.action for p in result.ports.values()} == {"drop"}
    assert result.ports["Ethernet4"].detection_time_ms == 600


def test_multi_asic_na_status_is_null() -> None:
    result = pfcwd.parse(_text("sonic-utilities-pfcwd-show-stats-multi-asic-na.txt"))
    assert result.queues["Ethernet-BP0:1"].status is None
    assert result.queues["Ethernet0:2"].storms_detected == 1


def test_other_output_is_refused() -> None:
    with pytest.raises(ParseError, match="no `QUEUE STATUS"):
        pfcwd.parse("Port Rx  PFC0\n------  ----\nEthernet0  1\n")
