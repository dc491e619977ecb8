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
    first = fec_stats.parse(_text("sonic-utilities-pr2027-fec-stats-first-release-last-cached.txt"))
    eth0 = first.interfaces["Ethernet0"]
    assert (eth0.state, eth0.fec_corr, eth0.fec_uncorr, eth0.fec_symbol_err) == \
        ("up", 136_403, 34, 40)
    assert first.interfaces["Ethernet8"].state == "down" and eth0.fec_pre_ber is None
    ber = fec_stats.parse(_text("sonic-utilities-pr4124-fec-stats-ber-flr-columns.txt"))
    eth0 = ber.interfaces["Ethernet0"]
    assert (eth0.fec_uncorr, eth0.fec_pre_ber, eth0.fec_post_ber) == (4, 5.65e-11, 0.0)
    assert (eth0.flr_observed, eth0.flr_predicted) == (None, None)
    assert [p.fec_uncorr for p in ber.interfaces.values()] == [4, 4, 0, 4, 4]


def test_gearbox_form_keys_rows_by_port_and_side() -> None:
    stats = fec_stats.parse(_text("sonic-utilities-pr4523-gearbox-fec-stats-line-system.txt"))
    assert list(stats.interfaces) == ["Ethernet0 Line", "Ethernet0 System", "Ethernet4 Line"]
    assert stats.interfaces["Ethernet0 Line"].fec_max_t == -1.0
    hist = fec_stats.parse(_text("sonic-utilities-pr4523-gearbox-fec-histogram-line-system.txt"))
    assert hist.warnings == []
    assert hist.interfaces["Ethernet0 System"].histogram["BIN0"] == 1_378_036_805_686
    assert all(count == 0 for count in hist.interfaces["Ethernet0 Line"].histogram.values())


def test_histograms() -> None:
    single = fec_stats.parse(_text("sonic-swss-pr3919-fec-histogram-ethernet48.txt"))
    assert single.view == "fec-histogram"
    bins = single.interfaces["Ethernet48"].histogram
    assert len(bins) == 16 and bins["BIN0"] == 78_924_019_231 and bins["BIN2"] == 279
    short = fec_stats.parse(_text(
        "sonic-buildimage-issue21554-fec-histogram-ethernet0-short-form.txt"))
    assert short.interfaces["Ethernet0"].histogram["BIN3"] == 217  # `show int counters ...`
    table = ("    IFACE       BIN0     BIN1\n---------  ---------  -------\n"
             "Ethernet0  1,000,000  900,000\nEthernet4        N/A      N/A\n")
    multi = fec_stats.parse(table)
    assert multi.view == "fec-histogram-table"
    assert multi.interfaces["Ethernet0"].histogram == {"BIN0": 1_000_000, "BIN1": 900_000}
    assert multi.interfaces["Ethernet4"].histogram == {"BIN0": None, "BIN1": None}
    bare = "\n".join(_text("sonic-swss-pr3919-fec-histogram-ethernet48.txt").splitlines()[1:])
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
    rendered = render_tables(fec_stats.tables(fec_stats.parse(_text(
        "sonic-utilities-pr4124-fec-stats-ber-flr-columns.txt"))))
    assert "Ethernet1" in rendered and "1.88e-11" in rendered
