"""Every scenario tells one story at every layer a probe reads: host, NIC, both switch ends, logs.

For each shipped scenario, at the moment a fresh demo joins it, the cables its faults touch
(and a healthy one) are read at both ends with the devices' own commands and the real parsers:
light received at one end never exceeds what the far end launches, and a clean fibre loses
less than the DR4 channel budget; pause sent at one end is pause received at the other; the
two ends agree on up/down and on the number of link-down events, which dmesg lists too; FEC
views of one receiver agree (ethtool and mlxlink on the NIC, fec-stats, the histogram and
the interface counters on the switch). The device output is produced in-process (the same
text the transports carry; test_sim_scenarios and friends cover the transports).
"""

from __future__ import annotations

import pytest

from fabtui.model.element import split_key
from fabtui.paths import demo_topology, shipped_templates
from fabtui.sim.core import Sim
from fabtui.sim.scenario import FaultKind, load_scenario, scenario_files, shipped_scenarios
from fabtui.sim.state import build_sim, fresh_state
from tests.support.sim import node_out, parse, switch_out

SCENARIOS = sorted(name for name, path in scenario_files([shipped_scenarios()]).items()
                   if load_scenario(path).scenario.topology is None)
"""The demo's scenarios (the `ib-*` ones play on the InfiniBand variant, whose layers
test_sim_ib.py checks)."""
CHANNEL_BUDGET_DB = 3.0
"""400GBASE-DR4 channel insertion loss (IEEE 802.3bs clause 124)."""





def host_cables(sim: Sim) -> list[tuple[str, str, str, str]]:
    """(host, nic, leaf, port) of every NIC cable a fault touches, and one nobody touches."""
    touched = {f.link for f in sim.faults if f.link is not None}
    for fault in sim.faults:
        if fault.kind is FaultKind.PFC_DEADLOCK:
            touched |= {link for _, _, link in sim.deadlock_cycle(fault)}
    cables = []
    for (host, nic), attachment in sorted(sim.graph.attachments.items()):
        if attachment.link_index in touched or (host, nic) == ("node008", "mlx5_7"):
            where = sim.actual_port(host, nic, None)
            if where is not None:
                leaf, port = split_key(where)
                cables.append((host, nic, leaf, port))
    return cables


@pytest.mark.parametrize("name", SCENARIOS)
def test_both_ends_and_every_layer_agree(name: str) -> None:
    sim = build_sim(fresh_state(demo_topology(), shipped_scenarios() / f"{name}.yaml",
                                [shipped_templates()]))
    t = sim.scenario.start or 300.0
    cables = host_cables(sim)
    assert cables
    for host, nic_name, leaf, port in cables:
        nic = next(n for n in sim.graph.nodes[host].nics if n.name == nic_name)
        netdev = nic.netdev or nic.name
        where = f"{name}: {host}:{nic_name} <-> {leaf}:{port}"
        ethtool = parse("ethtool-stats", node_out(sim, host, ["ethtool", "-S", netdev], t))
        counters = ethtool.counters
        mlxlink = parse("mlxlink", node_out(sim, host, ["mlxlink", "-d", nic_name, "-m", "-c"],
                                            t))
        ibstat = parse("ibstat", node_out(sim, host, ["ibstat", nic_name], t))
        dom = parse("transceiver-dom", switch_out(
            sim, leaf, f"show interfaces transceiver eeprom --dom {port}", t)).interfaces[port]
        pfc = parse("pfc-counters", switch_out(sim, leaf, "show pfc counters", t))
        fec = parse("fec-stats", switch_out(sim, leaf, "show interfaces counters fec-stats", t))
        histogram = parse("fec-stats", switch_out(
            sim, leaf, f"show interfaces counters fec-histogram {port}", t))
        status = parse("switch-counters", switch_out(sim, leaf, "show interfaces counters", t))
        dmesg = node_out(sim, host, ["dmesg"], t)

        # up/down: both ends, and the number of downs in the NIC's counters, mlxlink and dmesg
        nic_up = (ibstat.cas[nic_name].ports["1"].state or "").lower() == "active"
        switch_up = (status.interfaces[port].state or "").lower() in ("u", "up")
        assert nic_up == switch_up == (mlxlink.state == "Active"), where
        downs = counters["link_down_events_phy"]
        assert mlxlink.counters is not None and mlxlink.counters.link_down_counter == downs, where
        assert dmesg.count(f"{netdev}: Link down") == downs, where

        # light: what one end receives is what the other launches, less the fibre's loss
        lanes = mlxlink.lanes
        for index, lane in enumerate(lanes):
            key = str(index + 1)
            for received, launched in ((dom.rx_power_dbm.get(key), lane.tx_power_dbm),
                                       (lane.rx_power_dbm, dom.tx_power_dbm.get(key))):
                if received is None or launched is None or received == float("-inf"):
                    continue
                assert received < launched, f"{where} lane {key}: light gained"
                if not any(f.kind is FaultKind.DIRTY_CONNECTOR and f.link ==
                           sim.link_of(f"{host}:{nic_name}") for f in sim.faults):
                    assert launched - received <= CHANNEL_BUDGET_DB, f"{where} lane {key}"

        # pause: sent at one end is received at the other
        assert pfc.rx[port]["PFC3"] == counters["tx_prio3_pause"], where
        assert pfc.tx[port]["PFC3"] == counters["rx_prio3_pause"], where

        # FEC: one receiver, several views
        # A lost codeword breaks the frame(s) it carries (at most two, at a frame boundary);
        # idle codewords carry none: frames with a bad FCS never outnumber lost codewords x 2.
        lost = mlxlink.counters.effective_physical_errors
        assert lost is not None and counters["rx_crc_errors_phy"] <= 2 * lost, where
        assert (counters["rx_crc_errors_phy"] > 0) == (lost > 0), where
        per_lane = [counters[f"rx_err_lane_{lane}_phy"] for lane in range(4)]
        assert per_lane == mlxlink.counters.raw_physical_errors_per_lane, where
        assert sum(per_lane) <= counters["rx_corrected_bits_phy"] < sum(per_lane) + 4, where
        switch_fec = fec.interfaces[port]
        bins = next(iter(histogram.interfaces.values())).histogram  # it does not print the port
        assert switch_fec.fec_corr == sum(v or 0 for b, v in bins.items() if b != "BIN0"), where
        rx_err = status.interfaces[port].rx_err
        assert rx_err is not None and switch_fec.fec_uncorr is not None, where
        assert rx_err <= 2 * switch_fec.fec_uncorr, where
        if nic_up and counters["rx_corrected_bits_phy"]:
            raw = mlxlink.counters.raw_physical_ber
            assert raw is not None and raw > 0, where
