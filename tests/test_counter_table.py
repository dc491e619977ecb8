"""`ethtool -S` with millions of counters: the compact table behaves as filling a dict would,
and `fabtui parse` writes exactly the JSON of the model (issue 42: parsers within their memory
rule on growing outputs; the memory itself is measured by benchmarks/parse_scale.py)."""

from __future__ import annotations

import io
import json

import pytest

from fabtui.model.parsed.ethtool_stats import EthtoolStats
from fabtui.parsers import ethtool_stats
from fabtui.parsers.counter_table import CounterTable
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import write_json
from fabtui.parsers.text import split_lines


def _filled(pairs: list[tuple[str, int]]) -> tuple[CounterTable, dict[str, int]]:
    table, plain = CounterTable(), {}
    for name, value in pairs:
        table.add(name, value)
        plain[name] = value
    return table.finish(), plain


@pytest.mark.parametrize("count", [10, 70_000], ids=["small", "past-the-dict-limit"])
def test_a_repeated_name_keeps_its_first_place_and_its_last_value(count: int) -> None:
    pairs = [(f"rx_q{i}_packets", i) for i in range(count)]
    pairs += [("rx_q3_packets", -7), (f"rx_q{count - 1}_packets", 2**64 - 1),
              ("rx_q3_packets", 2**70), ("tx_new", 5)]
    table, plain = _filled(pairs)
    assert list(table.items()) == list(plain.items())
    assert len(table) == len(plain) == count + 1
    assert table.to_dict()["rx_q3_packets"] == 2**70


def test_values_beyond_64_bits_and_negative_ones_are_kept_whole() -> None:
    table, plain = _filled([("a", -(2**63)), ("b", 2**63), ("c", -(2**64)), ("d", 0)])
    assert table.to_dict() == plain


def test_the_written_json_is_the_models_json_on_a_large_capture() -> None:
    lines = ["NIC statistics:"] + [f"     rx_prio{i % 8}_bytes_c{i}: {i * 977}"
                                   for i in range(80_000)]
    lines += ["     rx_prio1_bytes_c1: 42", "     tx_dropped: x1"]
    streamed = ethtool_stats.parse_lines(lines)
    written = io.StringIO()
    write_json(streamed, written)
    model = ethtool_stats.parse("\n".join(lines))
    assert isinstance(model, EthtoolStats)
    assert written.getvalue() == json.dumps(model.model_dump(mode="json"), indent=2,
                                            ensure_ascii=False) + "\n"
    data = json.loads(written.getvalue())
    assert data["counters"]["rx_prio1_bytes_c1"] == 42
    assert list(data["counters"])[1] == "rx_prio1_bytes_c1"
    assert data["warnings"] == ["line 80003: not an integer counter: tx_dropped: x1"]


def test_a_capture_without_counters_is_still_refused() -> None:
    with pytest.raises(ParseError):
        ethtool_stats.parse_lines(split_lines("NIC statistics:\n"))
