"""Issue 35, Deliver 4 (gap 8): switch-side congestion evidence, ECN marks beside pause.

The real `show queue wredcounters` captures parse (tests/fixtures/queue-counters/SOURCES.md);
on the demo fabric the switch's marks on a lossless queue grow with another job's congestion,
and a leaf whose WRED profile marks nothing pauses its hosts instead, which `ecn_evidence`
names and multi-job-interference no longer clears as "not shared". docs/thresholds.md gives
the rule and its source.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabtui.parsers.registry import parse
from fabtui.probes.ecn import ecn_evidence
from tests.support.sim import Fabric

FIXTURES = Path(__file__).parent / "fixtures" / "queue-counters"


def test_a_real_wredcounters_capture_gives_ecn_marks_per_queue_and_na_wred() -> None:
    text = (FIXTURES / "sonic-mgmt-snappi-show-queue-wredcounters-ethernet0-ecn-marked.txt"
            ).read_text(encoding="utf-8")
    parsed: Any = parse(text)  # detected, not told
    assert parsed.kind == "queue-counters"
    uc3 = parsed.ports["Ethernet0"]["UC3"]
    assert uc3.other["ecnmarked_pkts"] == 3454820
    assert uc3.other["ecnmarked_bytes"] == 5182230000
    assert uc3.other["wreddrp_pkts"] is None  # N/A: the platform counts no WRED drops


def test_the_wredcounters_json_names_its_counters_as_the_table_does() -> None:
    text = ('{"Ethernet0": {"UC3": {"ecnmarkedbytes": "76", "ecnmarkedpacket": "19", '
            '"wreddropbytes": "N/A", "wreddroppacket": "N/A"}}}')
    parsed: Any = parse(text, "queue-counters")
    assert parsed.ports["Ethernet0"]["UC3"].other == {
        "ecnmarked_bytes": 76, "ecnmarked_pkts": 19, "wreddrp_bytes": None,
        "wreddrp_pkts": None}


def _dicts(*results: Any) -> list[dict[str, Any]]:
    return [r.model_dump(mode="json") for r in results]


def _marks(result: Any, port: str) -> int:
    return sum(int(m.value) for m in result.metrics if m.name == "delta.ecnmarked_pkts"
               and m.component == f"leaf-g00-r2:{port}/UC3")


@pytest.mark.parametrize("scenario, kind, verdict", [
    ("multi-job-interference", "ecn-marking", "ok"),
    ("ecn-off", "ecn-off", "fail"),
    ("healthy", "ecn-marking", "ok"),
])
def test_the_leaf_marks_ecn_under_congestion_unless_its_profile_marks_nothing(
        tmp_path: Path, scenario: str, kind: str, verdict: str) -> None:
    fabric = Fabric(scenario, tmp_path)
    try:
        marks = fabric.probe("switch.ecn", "leaf-g00-r2")
        pause = fabric.probe("switch.pfc", "leaf-g00-r2")
    finally:
        fabric.close()
    found = ecn_evidence(_dicts(marks, pause))
    assert (found["kind"], found["verdict"]) == (kind, verdict), found["why"]
    if scenario == "multi-job-interference":  # thousands of marks a second on each host port
        assert _marks(marks, "Ethernet0") > 10000
    if scenario == "ecn-off":
        assert _marks(marks, "Ethernet0") == 0
        assert found["max_pause"] >= 0.1 and "no ECN mark" in found["why"]


def test_pause_with_the_marks_not_read_cannot_be_told() -> None:
    pause = {"metrics": [{"name": "pause_share.tx.PFC3", "value": 0.3,
                          "component": "leaf-a:Ethernet0"}]}
    assert ecn_evidence([pause])["kind"] == "cannot-tell"
    marks = {"metrics": [{"name": "delta.ecnmarked_pkts", "value": 5000,
                          "component": "leaf-a:Ethernet0/UC3"}]}
    assert ecn_evidence([pause, marks])["kind"] == "dcqcn-working"
    # marks on a lossy queue do not count for the lossless class
    lossy = {"metrics": [{"name": "delta.ecnmarked_pkts", "value": 5000,
                          "component": "leaf-a:Ethernet0/UC0"},
                         {"name": "delta.ecnmarked_pkts", "value": 0,
                          "component": "leaf-a:Ethernet0/UC3"}]}
    assert ecn_evidence([pause, lossy])["kind"] == "ecn-off"


# Headroom against the cable -------------------------------------------------------------------

def test_the_headroom_a_cable_needs_follows_sonics_dynamic_formula() -> None:
    from fabtui.topology.headroom import xoff_needed

    # 400G, 5 m: bytes on cable 2*5*400000e9/1.98e8/8192 = 2466; propagation 9100 + 2466 + 819
    # + 905*64 = 70305; x 2.25 (cell 144 B, all small packets) + 1024 = 159210 -> 159744.
    assert xoff_needed(400, 5) == 159744
    assert xoff_needed(400, 30) == 187392
    assert xoff_needed(400, 300) > xoff_needed(400, 100) > xoff_needed(400, 30)
    assert xoff_needed(100, 30) < xoff_needed(400, 30)  # fewer bytes in flight at 100G


def test_the_real_mmuconfig_capture_gives_each_profiles_headroom() -> None:
    text = (Path(__file__).parent / "fixtures" / "buffer-profiles" /
            "sonic-utilities-mmuconfig-l.txt").read_text(encoding="utf-8")
    parsed: Any = parse(text)
    assert parsed.kind == "buffer-profiles"
    assert parsed.profiles["headroom_profile"].fields == {
        "dynamic_th": 0, "pool": "ingress_lossless_pool", "xon": 18432, "xoff": 32768,
        "size": 51200}
    assert parsed.pools["ingress_lossless_pool_hbm"].fields["size"] == 139458240


def _margins(result: Any) -> dict[str, tuple[Any, str]]:
    return {m.component: (m.value, m.verdict.value) for m in result.metrics
            if m.name == "headroom_margin"}


def test_a_leaf_whose_cable_length_table_was_left_at_5m_drops_lossless_packets(
        tmp_path: Path) -> None:
    healthy = Fabric("healthy", tmp_path / "healthy")
    short = Fabric("headroom-short", tmp_path / "short")
    try:
        good = healthy.probe("switch.buffer", "leaf-g00-r0")
        bad = short.probe("switch.buffer", "leaf-g00-r0")
        other = short.probe("switch.buffer", "leaf-g00-r1")
        drops = short.probe("switch.counters", "leaf-g00-r0")
    finally:
        healthy.close()
        short.close()
    # healthy: the 30 m rail-0 AOCs have a 30 m profile
    assert set(_margins(good).values()) == {(0, "ok")}
    # stale 5 m table: every 30 m port is 27,648 bytes short, and the leaf drops lossless
    # packets on those ports while it pauses them
    assert _margins(bad)["leaf-g00-r0:Ethernet0"] == (-27648, "fail")
    assert len(_margins(bad)) == 8
    assert bad.verdict.value == "fail"
    rx_drp = {m.component: float(str(m.value)) for m in drops.metrics
              if m.name == "delta.rx_drp"}
    assert rx_drp["leaf-g00-r0:Ethernet0"] > 100
    # cables of unknown length are not judged
    assert _margins(other) == {}


# FEC histogram at both ends of a link ---------------------------------------------------------

def test_the_nic_histogram_reads_the_same_from_text_and_json() -> None:
    import json

    from fabtui.parsers.mlxlink import fec_histogram

    text = (Path(__file__).parent / "fixtures" / "mlxlink" /
            "synthetic-mlxlink-c-rx-fec-histogram-cx7-400g.txt").read_text(encoding="utf-8")
    parsed: Any = parse(text, "mlxlink")
    assert fec_histogram(parsed)[4] == 1 and fec_histogram(parsed)[0] == 8839154829013
    as_json = json.dumps({"result": {"output": {"Operational Info": {"State": "Active"},
                                                "Histogram of FEC Errors": {
        "Header": {"values": ["Range", "Occurrences"]},
        "Bin 0": {"values": ["[0]", "7"]}, "Bin 9": {"values": ["[9]", "2"]}}}}})
    from_json: Any = parse(as_json, "mlxlink")
    assert fec_histogram(from_json) == {0: 7, 9: 2}


def test_a_link_is_judged_on_its_worse_end_the_nic_histogram_fails_an_ageing_far_laser(
        tmp_path: Path) -> None:
    fabric = Fabric("optic-degrading", tmp_path)
    try:
        leaf_end = fabric.probe("switch.fec_histogram", "leaf-g00-r3:Ethernet16")
        nic_end = fabric.probe("nic.fec_histogram", "node003:mlx5_3")
    finally:
        fabric.close()
    tails = {r.probe: next(m for m in r.metrics if m.name == "fec_max_t")
             for r in (leaf_end, nic_end)}
    # the leaf's ageing laser: the leaf receives the NIC's good light, the NIC receives little
    assert tails["switch.fec_histogram"].verdict.value == "ok"
    assert tails["nic.fec_histogram"].verdict.value == "fail"
    assert int(str(tails["nic.fec_histogram"].value)) >= 13
