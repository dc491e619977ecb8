"""The switch series fabtui reads and the demo serves are named as vinted/sonic-exporter names
them (issue 46: against a real SONiC switch the panels and the sieve found nothing while the
demo looked fine, because both spelled the names their own way).

`VINTED` is that exporter's interface collector, written out from
internal/collector/interface_collector.go at commit 3759410 (HEAD of github.com/vinted/
sonic-exporter; tags v0.1.0 to v0.3.1 have the same names and labels, except v0.1.x-v0.2.0's
misspelt `receivd_ethernet_packets_total`, which fabtui does not read). `STAND_INS` are the
series that exporter does not serve (PFC, FEC, laser bias): fabtui's own documented names
(docs/prometheus.md), which a site maps to its exporter's in `[prometheus.metrics]`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from fabtui.paths import demo_topology, shipped_templates
from fabtui.prom.catalog import MAPPED
from fabtui.sim.exporter import FabricCollector
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import fresh_state, write_state

ROOT = Path(__file__).resolve().parent.parent

VINTED: dict[str, frozenset[str]] = {name: frozenset(labels) for name, labels in {
    "sonic_interface_info": ("device", "alias", "index", "description"),
    "sonic_interface_mtu_bytes": ("device",),
    "sonic_interface_speed_bytes": ("device",),
    "sonic_interface_admin_status": ("device",),
    "sonic_interface_operational_status": ("device",),
    "sonic_interface_transceiver_temperature_celsius": ("device",),
    "sonic_interface_transceiver_voltage": ("device",),
    "sonic_interface_optic_transmit_power_dbm": ("device", "unit"),
    "sonic_interface_optic_receive_power_dbm": ("device", "unit"),
    "sonic_interface_transmit_ethernet_packets_total": ("device", "size"),
    "sonic_interface_receive_ethernet_packets_total": ("device", "size"),
    "sonic_interface_transmit_packets_total": ("device", "method"),
    "sonic_interface_receive_packets_total": ("device", "method"),
    "sonic_interface_transmit_errs_total": ("device", "type"),
    "sonic_interface_receive_errs_total": ("device", "type"),
    "sonic_interface_transmit_bytes_total": ("device",),
    "sonic_interface_receive_bytes_total": ("device",),
    "sonic_interface_scrape_duration_seconds": (),
    "sonic_interface_collector_success": (),
}.items()}
"""vinted/sonic-exporter 3759410, interface_collector.go `NewInterfaceCollector`."""

ERR_TYPES = {"sonic_interface_receive_errs_total": {"error", "discard", "drop", "pause"},
             "sonic_interface_transmit_errs_total": {"error", "discard", "pause"}}
"""`collectInterfaceErrCounters`' `type` values per direction (no `drop` on transmit)."""

SERVED_REAL = {"sonic_interface_receive_errs_total", "sonic_interface_transmit_errs_total",
               "sonic_interface_receive_bytes_total", "sonic_interface_transmit_bytes_total",
               "sonic_interface_optic_receive_power_dbm",
               "sonic_interface_optic_transmit_power_dbm",
               "sonic_interface_transceiver_temperature_celsius",
               "sonic_interface_operational_status", "sonic_interface_speed_bytes"}
"""The real exporter's series the demo serves (and fabtui reads)."""

STAND_INS = {"sonic_interface_receive_pfc_packets", "sonic_interface_transmit_pfc_packets",
             "sonic_interface_fec_correctable_frames", "sonic_interface_fec_uncorrectable_frames",
             "sonic_interface_fec_symbol_errors", "sonic_interface_fec_pre_ber",
             "sonic_interface_transceiver_tx_bias_ma"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, str]]]:
    """The demo switch exporter's scrape: each series name with its samples' labels."""
    state = tmp_path_factory.mktemp("names46") / "state.json"
    write_state(state, fresh_state(demo_topology(), find_scenario("pfc-storm"),
                                   [shipped_templates()]))
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FabricCollector(state, "switch"))
    out: dict[str, list[dict[str, str]]] = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for sample in family.samples:
            out.setdefault(sample.name, []).append(dict(sample.labels))
    return out


def test_the_demo_serves_the_real_exporters_names_and_labels(
        served: dict[str, list[dict[str, str]]]) -> None:
    assert set(served) - STAND_INS == SERVED_REAL
    for name in SERVED_REAL:
        for labels in served[name]:
            assert set(labels) - {"instance"} == VINTED[name], name
    for name, types in ERR_TYPES.items():
        assert {labels["type"] for labels in served[name]} <= types
    lanes = {labels["unit"] for labels in served["sonic_interface_optic_receive_power_dbm"]}
    assert lanes and all(lane.isdigit() and lane != "0" for lane in lanes)  # rx1power: "1"


def test_the_catalog_reads_the_real_names_and_lane_label() -> None:
    sonic = [m for m in MAPPED if m.key.startswith("sonic.")]
    for mapped in sonic:
        assert mapped.metric in VINTED or mapped.metric in STAND_INS, mapped.key
        if mapped.metric in VINTED:
            assert set(mapped.by) <= VINTED[mapped.metric], mapped.key
    assert {m.metric for m in sonic} - STAND_INS <= SERVED_REAL


_NAME = re.compile(r"sonic_interface_[a-z_]*[a-z](?![a-z_{])")


@pytest.mark.parametrize("folder", ["fabtui", "docs"])
def test_no_other_switch_name_is_written_anywhere(folder: str) -> None:
    """Every full `sonic_interface_*` name in the code and docs is the real exporter's or a
    stand-in (the dashboards, the slow-job window and its reader, the rules included)."""
    found = {(path.relative_to(ROOT).as_posix(), name)
             for path in (ROOT / folder).rglob("*.py" if folder == "fabtui" else "*.md")
             for name in _NAME.findall(path.read_text())}
    assert {(path, name) for path, name in found if name not in VINTED.keys() | STAND_INS} == set()
