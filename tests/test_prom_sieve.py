"""The sieve's bounds come from the catalog's thresholds, loosened: whatever a probe would flag
passes the sieve and is read in full."""

from __future__ import annotations

import re

from fabtui.paths import shipped_dir
from fabtui.probes.catalog import load_catalog
from fabtui.prom.catalog import BY_KEY, MAPPED
from fabtui.prom.sieve import MARGIN, sieves
from fabtui.topology.expected import pause_share

CATALOG = load_catalog([shipped_dir("probes")])
QUERIES = {m.key: f"Q[{m.key}]" for m in MAPPED}


def bound(key: str, slowest: float = 400) -> float:
    text = sieves(MAPPED, QUERIES, CATALOG, slowest)[key]
    found = re.search(r">= ([0-9.e+-]+)", text)
    assert found is not None, text
    return float(found.group(1))


def test_a_pause_share_limit_becomes_a_frame_rate_at_the_slowest_port() -> None:
    warn = min(t.warn or 1 for t in CATALOG["switch.pfc"].thresholds)
    assert bound("sonic.pfc_rx") == round(MARGIN * warn / pause_share(1.0, 400), 1)
    # A 100G port is fully paused by a quarter of the frames: the sieve must catch it too.
    assert bound("sonic.pfc_rx", 100) < bound("sonic.pfc_rx", 400) / 3.9


def test_a_delta_limit_becomes_a_rate_over_the_probe_interval() -> None:
    probe = CATALOG["nic.ethtool"]
    crc = next(t for t in probe.thresholds if t.metric == "delta.rx_crc_errors_phy")
    assert crc.warn == 1
    # one error in a 5 s probe interval rounds up from 0.5: 0.1/s, loosened
    assert bound("ethtool.rx_crc_errors_phy") == MARGIN * (crc.warn - 0.5) / probe.interval


def test_gauges_keep_their_limits_loosened_and_below_limits_their_direction() -> None:
    assert bound("dcgm.temperature") == round(MARGIN * 84, 4)
    text = sieves(MAPPED, QUERIES, CATALOG, 400)["sonic.rx_power"]
    assert text == f"(Q[sonic.rx_power] < {-7.3 + 7.3 * (1 - MARGIN):g})"  # -inf (no light) too


def test_evaluator_rules_without_a_catalog_limit_have_their_own_sieve() -> None:
    found = sieves(MAPPED, QUERIES, CATALOG, 400)
    assert found["sonic.oper_status"] == "Q[sonic.oper_status] < 1"
    assert found["infiniband.state_id"] == "Q[infiniband.state_id] != 4"
    assert found["dcgm.xid"] == "Q[dcgm.xid] > 0"


def test_traffic_rates_are_never_sieved() -> None:
    found = sieves(MAPPED, QUERIES, CATALOG, 400)
    for key in ("ethtool.rx_prio3_marked", "sonic.fec_corr", "dcgm.power"):
        assert key in BY_KEY and key not in found
