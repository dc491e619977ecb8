"""The simulator's physical layer, read back through the real transports and parsers.

FEC follows the pre-FEC BER as RS(544,514) does (no uncorrectable codeword at a BER of 3e-5,
thousands per second near 1e-3), the histogram and the counters of every view are the same
integrals, lanes differ from each other, and an optic fault is told apart from a fibre or
connector fault by reading both ends of the cable (docs/sim.md, docs/thresholds.md).
"""

from __future__ import annotations

import pytest

from fabtui.model.probe import ProbeResult, Verdict
from fabtui.paths import demo_topology, shipped_templates
from fabtui.runbooks.functions import optic_blame
from fabtui.sim import node_commands, physics
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import build_sim, fresh_state
from fabtui.sim.switch_cli import reply
from tests.support.sim import Fabric, clean, fabric, flagged, only, scenario

__all__ = ["fabric"]  # the fixture, from tests.support.sim


def values(result: ProbeResult, name: str) -> dict[str, object]:
    """Component -> value of metric `name`."""
    return {m.component: m.value for m in result.metrics if m.name == name}


def plain(result: ProbeResult) -> dict[str, object]:
    """A result as runbook expressions see it (JSON)."""
    return result.model_dump(mode="json")


def test_rs_fec_corrects_every_codeword_at_moderate_ber_and_fails_only_near_1e_3() -> None:
    healthy, marginal, failing = (physics.fec_rates(ber, 400) for ber in (5e-9, 3e-5, 1.5e-3))
    assert healthy.uncorrectable == 0.0 or healthy.uncorrectable < 1e-60
    # At 3e-5 one codeword in seven has a symbol error, and one with 16 is a 1e-26 event:
    # less than one a second over the age of the universe, so a timer cannot make them.
    assert marginal.uncorrectable * 4e17 < 1
    assert marginal.corrected_codewords > 1e7
    assert failing.uncorrectable > 100
    for rates, ber in ((healthy, 5e-9), (marginal, 3e-5), (failing, 1.5e-3)):
        total = physics.codewords_per_s(400)
        assert sum(rates.bins) + rates.uncorrectable == pytest.approx(total, rel=1e-9)
        # corrected bits / decoded bits gives back the pre-FEC BER (what ethtool and SONiC show)
        assert rates.corrected_bits / 400e9 == pytest.approx(ber, rel=0.02 if ber < 1e-3 else 0.1)
        assert list(rates.bins[1:]) == sorted(rates.bins[1:], reverse=True) or ber > 1e-4


@scenario("healthy")
def test_fec_views_agree_and_lanes_differ(fabric: Fabric) -> None:
    fec = fabric.probe("switch.fec", "leaf-g00-r0")
    clean(fec)
    ber = values(fec, "fec_pre_ber")["leaf-g00-r0:Ethernet0"]
    assert isinstance(ber, float) and 2e-9 <= ber <= 8e-9
    sim = build_sim(fresh_state(demo_topology(), find_scenario("healthy"), [shipped_templates()]))
    leaf = sim.graph.switches["leaf-g00-r0"]
    stats, _ = reply(sim, leaf, "show interfaces counters fec-stats", 600.0)
    histogram, _ = reply(sim, leaf, "show interfaces counters fec-histogram Ethernet0", 600.0)
    row = next(line.split() for line in stats.splitlines() if line.startswith("Ethernet0 "))
    bins = [int(line.split()[1]) for line in histogram.splitlines() if line.startswith("BIN")]
    assert len(bins) == 16 and int(row[2].replace(",", "")) == sum(bins[1:])  # FEC_CORR
    assert bins[0] > bins[1] > bins[2]
    # Per-lane numbers are not copies of each other: DOM and raw errors per lane.
    dom = fabric.probe("switch.dom", "leaf-g00-r0:Ethernet0")
    assert len(set(values(dom, "rx_power_dbm").values())) == 4
    assert len(set(values(dom, "tx_bias_ma").values())) == 4
    nic = fabric.probe("nic.mlxlink", "node001:mlx5_0")
    clean(nic)
    assert len(set(values(nic, "rx_power_dbm").values())) == 4
    assert nic.parsed is not None
    per_lane = nic.parsed["counters"]["raw_physical_errors_per_lane"]
    # Seconds into a healthy run the counts are tens of bits, so two lanes may round alike;
    # after ten minutes every lane has its own count.
    assert len(per_lane) == 4 and len(set(per_lane)) > 1
    later, _, _ = node_commands.run(sim, "node001", ["mlxlink", "-d", "mlx5_0", "-c"], 600.0)
    lanes = next(line.split(":")[1] for line in later.splitlines() if "Per Lane" in line)
    assert len(set(lanes.strip().split(","))) == 4, lanes
    # The NIC's receiver: ethtool's corrected/received bits and mlxlink's raw BER agree.
    ethtool = fabric.probe("nic.ethtool", "node001:mlx5_0")
    from_ethtool = values(ethtool, "pre_fec_ber")["node001:mlx5_0"]
    from_mlxlink = values(nic, "raw_ber")["node001:mlx5_0"]
    assert isinstance(from_ethtool, float) and isinstance(from_mlxlink, float)
    assert from_mlxlink / 1.5 <= from_ethtool <= from_mlxlink * 1.5


@scenario("optic-degrading")
def test_a_degrading_laser_is_blamed_on_the_far_transmitter(fabric: Fabric) -> None:
    leaf = fabric.probe("switch.dom", "leaf-g00-r3:Ethernet16")
    nic = fabric.probe("nic.mlxlink", "node003:mlx5_3")
    bias = values(leaf, "tx_bias_ma")
    assert max(b for b in bias.values() if isinstance(b, float)) > 10.0  # climbing bias
    blame = optic_blame(plain(nic), plain(leaf))  # the NIC receives too little: whose fault?
    assert blame is not None and blame["blame"] == "far-end transmitter", blame
    assert optic_blame(plain(leaf), plain(nic)) is None  # the leaf itself receives good light


@scenario("far-end-dirty-connector")
def test_a_dirty_far_connector_is_blamed_on_the_fibre_not_the_leaf_optic(
        fabric: Fabric) -> None:
    leaf = fabric.probe("switch.dom", "leaf-g00-r6:Ethernet8")
    # Below the DR4 minimum, above the module's own low alarm: the DOM warns (the minimum is
    # informative, issue 35 N11) and the FEC below confirms the lost margin.
    only(leaf, "leaf-g00-r6:Ethernet8", Verdict.WARN)
    low = {c for c, v in flagged(leaf).items() if "/lane" in c}
    assert low == {"leaf-g00-r6:Ethernet8/lane2", "leaf-g00-r6:Ethernet8/lane3"}
    assert all(m.verdict is Verdict.OK for m in leaf.metrics
               if m.name in ("tx_power_dbm", "tx_bias_ma"))
    nic = fabric.probe("nic.mlxlink", "node002:mlx5_6")
    clean(nic)  # the far module launches normally and receives normally
    blame = optic_blame(plain(leaf), plain(nic))
    assert blame is not None and blame["blame"] == "fibre or connector", blame
    assert blame["lanes"] == ["2", "3"]
    # FEC at the leaf corrects much more but loses nothing: BER ~2e-5 is far from 1e-3.
    fec = fabric.probe("switch.fec", "leaf-g00-r6")
    only(fec, "leaf-g00-r6:Ethernet8", Verdict.FAIL)
    assert values(fec, "delta.fec_uncorr")["leaf-g00-r6:Ethernet8"] == 0
    clean(fabric.probe("switch.dom", "leaf-g00-r6:Ethernet0"))


def _utilization(result: ProbeResult) -> dict[str, float]:
    assert result.parsed is not None
    return {name: port["rx_util"] for name, port in result.parsed["interfaces"].items()
            if port.get("rx_util") is not None}


@scenario("healthy")
def test_with_pxn_the_jobs_traffic_stays_on_its_rail(fabric: Fabric) -> None:
    util = _utilization(fabric.probe("switch.counters", "leaf-g00-r3"))
    hosts = [v for port, v in util.items() if int(port.removeprefix("Ethernet")) < 64]
    uplinks = [v for port, v in util.items() if int(port.removeprefix("Ethernet")) >= 64]
    assert len(hosts) == 8 and len(uplinks) == 8
    assert min(hosts) > 50 and max(uplinks) < 3  # background only: the spines carry no rail
    everyone = ",".join(f"node{i:03d}:8" for i in range(1, 9))
    alltoall = fabric.probe("nccl.mpirun", "node001", collective="alltoall", hosts=everyone,
                            ranks="64")
    clean(alltoall)
    busbw = values(alltoall, "alltoall_busbw_max") or values(alltoall, "busbw_max")
    expected = values(alltoall, "busbw_expected")
    assert busbw and expected
    figure, limit = next(iter(busbw.values())), next(iter(expected.values()))
    assert isinstance(figure, float) and isinstance(limit, float)
    assert limit == pytest.approx(54.0) and figure == pytest.approx(limit, rel=0.01)


@scenario("rank-mapping")
def test_crossed_cables_put_their_rails_traffic_on_the_uplinks(fabric: Fabric) -> None:
    util = _utilization(fabric.probe("switch.counters", "leaf-g00-r2"))
    uplinks = [v for port, v in util.items() if int(port.removeprefix("Ethernet")) >= 64]
    # node007's rail-6 NIC lands on rail 2's leaf and its rail-2 NIC elsewhere: both NICs'
    # traffic goes up to the spines, spread over the eight uplinks (2 x 55 % / 8 + background).
    assert all(13 < v < 18 for v in uplinks), uplinks
