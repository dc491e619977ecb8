"""docs/prometheus.md lists every mapping the reader uses, with its exporter metric name."""

from __future__ import annotations

from pathlib import Path

from fabtui.prom.catalog import MAPPED, ethtool_name

DOC = (Path(__file__).resolve().parent.parent / "docs" / "prometheus.md").read_text()


def test_every_mapping_is_documented_with_its_metric() -> None:
    rows = {line.split("|")[1].strip(" `"): line for line in DOC.splitlines()
            if line.startswith("| `")}
    for mapped in MAPPED:
        assert mapped.key in rows, mapped.key
        assert f"`{mapped.metric}`" in rows[mapped.key], mapped.key
        assert f"`{mapped.probe}`" in rows[mapped.key], mapped.key


def test_ethtool_names_follow_node_exporter() -> None:
    """buildEthtoolFQName: rx/tx as whole words become received/transmitted."""
    assert ethtool_name("rx_prio3_pause") == "node_ethtool_received_prio3_pause"
    assert ethtool_name("tx_pause_storm_error_events") == \
        "node_ethtool_transmitted_pause_storm_error_events"
    assert ethtool_name("link_down_events_phy") == "node_ethtool_link_down_events_phy"
    assert ethtool_name("rx-csum.bad") == "node_ethtool_received_csum_bad"
