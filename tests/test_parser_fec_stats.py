"""fec-stats: SONiC `show interfaces counters fec-stats` / `fec-histogram`."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import fec_stats, registry
from fabtui.parsers.errors import ParseError
from fabtui.render.table import render_tables

FIXTURES = Path(__file__).parent / "fixtures" / "fec-stats"


def _text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_new_columns_with_flr_accuracy() -> None:
    result = fec_stats.parse(_text("sonic-show-interfaces-counters-fec-stats.txt"))
    eth0 = result.interfaces["Ethernet0"]
    assert (eth0.state, eth0.fec_corr, eth0.fec_uncorr, eth0.fec_symbol_err) == ("down", 130402,
                                                                                 3, 4)
    assert eth0.fec_pre_ber is None and eth0.fec_post_ber is None
    assert (eth0.flr_observed, eth0.flr_predicted) == (4.21e-10, 7.81e-10)
    assert eth0.flr_predicted_accuracy_pct == 89.0 and eth0.fec_max_t == -1.0
    assert result.interfaces["Ethernet4"].state is None
    assert result.interfaces["Ethernet8"].fec_max_t == 3.0
    assert result.interfaces["Ethernet9"].flr_observed is None


def test_old_columns_and_ber() -> None:
    result = fec_stats.parse(_text("synthetic-sonic-fec-stats-7col-ber.txt"))
    eth8 = result.interfaces["Ethernet8"]
    assert (eth8.fec_uncorr, eth8.fec_pre_ber, eth8.fec_post_ber) == (37, 3.12e-05, 2.4e-12)
    assert result.interfaces["Ethernet0"].fec_corr == 2_431_998_120
    assert result.interfaces["Ethernet24"].state == "down"
    assert result.interfaces["Ethernet24"].fec_corr is None


def test_histograms() -> None:
    single = fec_stats.parse(_text("synthetic-sonic-fec-histogram-ethernet8.txt"))
    assert single.view == "fec-histogram"
    bins = single.interfaces["Ethernet8"].histogram
    assert len(bins) == 16 and bins["BIN0"] == 981_233_001_120 and bins["BIN7"] == 1
    table = ("    IFACE       BIN0     BIN1\n---------  ---------  -------\n"
             "Ethernet0  1,000,000  900,000\nEthernet4        N/A      N/A\n")
    multi = fec_stats.parse(table)
    assert multi.view == "fec-histogram-table"
    assert multi.interfaces["Ethernet0"].histogram == {"BIN0": 1_000_000, "BIN1": 900_000}
    assert multi.interfaces["Ethernet4"].histogram == {"BIN0": None, "BIN1": None}
    bare = "\n".join(_text("synthetic-sonic-fec-histogram-ethernet8.txt").splitlines()[1:])
    assert list(fec_stats.parse(bare).interfaces) == ["unknown"]


def test_json_and_prefix() -> None:
    text = '{"Ethernet0": {"STATE": "U", "FEC_CORR": "1,024", "FEC_PRE_BER": "1.20e-09"}}'
    result = fec_stats.parse(text)
    assert result.view == "fec-stats-json"
    assert result.interfaces["Ethernet0"].fec_corr == 1024
    assert result.interfaces["Ethernet0"].fec_pre_ber == 1.2e-09
    prefixed = "".join(f"spine3: {line}\n" for line in
                       _text("sonic-show-interfaces-counters-fec-stats.txt").splitlines())
    assert registry.detect(prefixed)[0][0] == "fec-stats"
    assert fec_stats.parse(prefixed).interfaces["Ethernet4"].fec_corr == 110412


def test_refusals() -> None:
    truncated = "\n".join(_text("sonic-show-interfaces-counters-fec-stats.txt").splitlines()[:2])
    with pytest.raises(ParseError, match="without rows"):
        fec_stats.parse(truncated)
    with pytest.raises(ParseError, match="no fec-stats"):
        fec_stats.parse("IFACE STATE RX_OK\n")
    rendered = render_tables(fec_stats.tables(fec_stats.parse(
        _text("synthetic-sonic-fec-stats-7col-ber.txt"))))
    assert "Ethernet8" in rendered and "3.12e-05" in rendered
