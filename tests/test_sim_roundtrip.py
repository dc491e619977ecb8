"""Every simulated command prints the simulation's values so that the real parser reads them back.

Each test renders a command at a pinned moment of a scenario, parses it with the parser a probe
would use, and compares the parsed numbers with what the simulation holds at that moment.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TypeVar

import pytest
from pydantic import BaseModel

from fabtui.model.parsed.dcgmi_diag import DcgmiDiag
from fabtui.model.parsed.ethtool_stats import EthtoolStats
from fabtui.model.parsed.fec_stats import FecStats
from fabtui.model.parsed.ibdev2netdev import Ibdev2netdevOutput
from fabtui.model.parsed.ibstat import IbstatOutput
from fabtui.model.parsed.ibv_devinfo import IbvDevinfoOutput
from fabtui.model.parsed.kernel_log import KernelLog
from fabtui.model.parsed.mlxlink import MlxlinkOutput
from fabtui.model.parsed.nccl_log import NcclLog
from fabtui.model.parsed.nccl_tests import NcclTestsOutput
from fabtui.model.parsed.nvidia_smi import NvidiaSmiTable
from fabtui.model.parsed.nvidia_smi_q import NvidiaSmiQuery
from fabtui.model.parsed.nvidia_smi_topo import NvidiaSmiTopo
from fabtui.model.parsed.perftest import Perftest
from fabtui.model.parsed.pfc_counters import PfcCounters
from fabtui.model.parsed.queue_counters import QueueCounters
from fabtui.model.parsed.rdma_hw_counters import RdmaHwCountersOutput
from fabtui.model.parsed.rdma_statistic import RdmaStatisticOutput
from fabtui.model.parsed.show_gids import ShowGidsOutput
from fabtui.model.parsed.switch_counters import SwitchCounters
from fabtui.model.parsed.transceiver_dom import TransceiverDomReport
from fabtui.parsers import registry
from fabtui.paths import demo_topology
from fabtui.sim.core import PRIORITY, Sim
from fabtui.sim.logs import job_log
from fabtui.sim.node_commands import _pair_rate, ethtool_counters, rdma_counters, run
from fabtui.sim.scenario import find_scenario, load_scenario
from fabtui.sim.state import sim_for
from fabtui.sim.switch_cli import ports, reply
from fabtui.topology.loader import load_topology

T = 1300.0
M = TypeVar("M", bound=BaseModel)


def _parse(kind: str, model: type[M], text: str) -> M:
    """`text` read by the parser of `kind` (the registry's, as a probe reads it): a `model`."""
    parsed = registry.get(kind).parse(text)
    assert isinstance(parsed, model), type(parsed)
    return parsed


def _sim(name: str) -> Sim:
    topology = load_topology(demo_topology()).topology
    return sim_for(topology, load_scenario(find_scenario(name)))


@pytest.fixture(scope="module")
def optic() -> Sim:
    return _sim("optic-degrading")


@pytest.fixture(scope="module")
def storm() -> Sim:
    return _sim("pfc-storm")


def _node(sim: Sim, host: str, *argv: str) -> str:
    out, err, status = run(sim, host, list(argv), T)
    assert status == 0, err
    return out


def _switch(sim: Sim, name: str, command: str) -> str:
    text, rejected = reply(sim, sim.graph.switches[name], command, T)
    assert not rejected, text
    return text


def test_ethtool_reads_back_every_counter(storm: Sim) -> None:
    nic = storm.graph.find_nic("node006", "mlx5_4")
    assert nic is not None
    parsed = _parse("ethtool-stats", EthtoolStats,
                    _node(storm, "node006", "ethtool", "-S", nic.netdev or nic.name))
    expected = ethtool_counters(storm, "node006", nic, T)
    assert parsed.counters == expected
    assert expected[f"tx_prio{PRIORITY}_pause"] > 0


def test_rdma_statistic_and_hw_counters_read_back(optic: Sim) -> None:
    nic = optic.graph.find_nic("node003", "mlx5_3")
    assert nic is not None
    expected = rdma_counters(optic, "node003", nic, T)
    stat = _parse("rdma-statistic", RdmaStatisticOutput,
                  _node(optic, "node003", "rdma", "statistic", "show", "link", "mlx5_3/1"))
    assert stat.links["mlx5_3/1"] == expected
    hw = _parse("rdma-hw-counters", RdmaHwCountersOutput,
                _node(optic, "node003", "show_counters", "mlx5_3"))
    ports_ = hw.devices["mlx5_3"].ports
    assert next(iter(ports_.values())) == expected


def test_nic_port_state_agrees_with_the_leaf_port() -> None:
    sim = _sim("nccl-hang")
    ibstat = _parse("ibstat", IbstatOutput, _node(sim, "node003", "ibstat", "mlx5_5"))
    assert ibstat.cas["mlx5_5"].ports["1"].state == "Down"
    devinfo = _parse("ibv_devinfo", IbvDevinfoOutput,
                     _node(sim, "node003", "ibv_devinfo", "-d", "mlx5_5"))
    assert devinfo.devices["mlx5_5"].ports["1"].state == "PORT_DOWN"
    leaf = _parse("switch-counters", SwitchCounters,
                  _switch(sim, "leaf-g00-r5", "show interfaces counters"))
    assert leaf.interfaces["Ethernet16"].state == "down"
    assert leaf.interfaces["Ethernet8"].state == "up"
    netdevs = _parse("ibdev2netdev", Ibdev2netdevOutput,
                     _node(sim, "node003", "ibdev2netdev", "-v"))
    assert netdevs.devices["mlx5_5"].state == "Down"
    assert netdevs.devices["mlx5_4"].state == "Up"


def test_show_gids_lists_the_topology_addresses(optic: Sim) -> None:
    parsed = _parse("show-gids", ShowGidsOutput, _node(optic, "node002", "show_gids", "mlx5_1"))
    v2 = [g for g in parsed.gids if g.version == "v2" and g.ipv4]
    nic = optic.graph.find_nic("node002", "mlx5_1")
    assert nic is not None and [g.ipv4 for g in v2] == [nic.ip]


def test_mlxlink_counters_read_back(optic: Sim) -> None:
    parsed = _parse("mlxlink", MlxlinkOutput,
                    _node(optic, "node003", "mlxlink", "-d", "mlx5_3", "-m", "-c", "-e"))
    link = optic.graph.attachments[("node003", "mlx5_3")].link_index
    assert parsed.counters is not None
    assert parsed.counters.link_down_counter == optic.down_events(link, T)
    # By T the receiver is past the high-SER limit: the port is down, as every view says.
    assert parsed.state == ("Active" if optic.link_up(link, T) else "Disable")


def test_gpu_views_read_back() -> None:
    sim = _sim("slow-node")
    xml = _parse("nvidia-smi-q", NvidiaSmiQuery, _node(sim, "node004", "nvidia-smi", "-q", "-x"))
    gpus = xml.gpus
    assert len(gpus) == 8
    for parsed in gpus:
        index = parsed.minor_number
        assert index is not None
        state = sim.gpu("node004", index, T)
        assert parsed.temperature_c == state.temperature_c
        assert parsed.clock_sm_mhz == state.sm_clock_mhz
    table = _parse("nvidia-smi", NvidiaSmiTable, _node(sim, "node004", "nvidia-smi"))
    assert [(g.index, g.temperature_c) for g in table.gpus] == [
        (i, sim.gpu("node004", i, T).temperature_c) for i in range(8)]
    diag = _parse("dcgmi-diag", DcgmiDiag, _node(sim, "node004", "dcgmi", "diag", "-r", "3"))
    assert diag.overall == "fail"
    healthy = _parse("dcgmi-diag", DcgmiDiag, _node(sim, "node001", "dcgmi", "diag", "-r", "3"))
    assert healthy.overall == "pass"
    topo = _parse("nvidia-smi-topo", NvidiaSmiTopo,
                  _node(sim, "node004", "nvidia-smi", "topo", "-m"))
    assert topo.gpu_nic_affinity["GPU3"].nic_devices == ["mlx5_3"]


@pytest.mark.parametrize("collective", ["all_reduce", "all_gather", "alltoall"])
def test_nccl_tests_busbw_is_the_simulated_busbw(collective: str) -> None:
    sim = _sim("slow-node")
    out = _node(sim, "node004", f"/opt/nccl-tests/build/{collective}_perf", "-b", "1M", "-e",
                "1G", "-f", "2", "-g", "8")
    parsed = _parse("nccl-tests", NcclTestsOutput, out)
    rows = parsed.rows
    assert [r.size_bytes for r in rows] == [2**k for k in range(20, 31)]
    for row in rows:
        assert row.out_of_place.busbw == pytest.approx(
            sim.busbw(["node004"], T, row.size_bytes, collective=collective), abs=0.006)


def test_mpirun_all_reduce_across_nodes_and_a_hang() -> None:
    sim = _sim("gdr-off")
    argv = ["mpirun", "-np", "16", "-H", "node001:8,node002:8", "/b/all_reduce_perf", "-b", "8M",
            "-e", "64M", "-g", "1"]
    parsed = _parse("nccl-tests", NcclTestsOutput, _node(sim, "node001", *argv))
    assert parsed.rows[-1].out_of_place.busbw == pytest.approx(
        sim.busbw(["node001", "node002"], T, 64 * 2**20), abs=0.006)
    hung = _sim("nccl-hang")
    out, _, status = run(hung, "node001", [*argv[:4], "node001:8,node003:8", *argv[5:]], T)
    assert status != 0
    assert _parse("nccl-tests", NcclTestsOutput, out).status == "did_not_run"


def test_perftest_pair_bandwidth(storm: Sim) -> None:
    out = _node(storm, "node001", "ib_write_bw", "-d", "mlx5_4", "-x", "3", "-s", "65536",
                "--report_gbits", "node006")
    parsed = _parse("perftest", Perftest, out)
    bw = parsed.results[0].rows[0].bw_avg
    assert bw is not None
    nic = storm.graph.find_nic("node001", "mlx5_4")
    assert nic is not None
    held = _pair_rate(storm, storm.graph.nodes["node001"], nic, "node006", T, ["--report_gbits"])
    assert bw == pytest.approx(held, abs=0.006)
    assert 0 < bw < 60  # the storming NIC's peer gets a tenth of line rate


def test_job_log_events_match_the_hang() -> None:
    sim = _sim("nccl-hang")
    parsed = _parse("nccl-log", NcclLog, job_log(sim, T))
    errors = [e for e in parsed.events if e.type == "ib_completion_error"]
    # NCCL 2.21 prints no HCA: the NICs are the GIDs; the peer is the far host's OOB address.
    assert {(e.host, e.local_gid, e.remote_gid, e.peer, e.status) for e in errors} == {
        ("node003", "::ffff:10.205.0.3", "::ffff:10.205.0.4", "10.40.0.4", 12),
        ("node002", "::ffff:10.205.0.2", "::ffff:10.205.0.3", "10.40.0.3", 12)}
    timeouts = [e for e in parsed.events if e.type == "watchdog_timeout"]
    assert len(timeouts) == 62 and {e.seq for e in timeouts} == {timeouts[0].seq}
    assert parsed.gpudirect_rdma is True


def test_dmesg_link_flaps_equal_the_down_windows() -> None:
    sim = _sim("link-flap")
    parsed = _parse("kernel-log", KernelLog, _node(sim, "node005", "dmesg", "-T"))
    link = sim.graph.attachments[("node005", "mlx5_1")].link_index
    nic = sim.graph.find_nic("node005", "mlx5_1")
    assert nic is not None and nic.netdev is not None
    assert parsed.link_flaps[nic.netdev] == sim.down_events(link, T)


def test_sonic_counters_pfc_fec_and_queues_read_back(storm: Sim) -> None:
    switch = storm.graph.switches["leaf-g00-r4"]
    counters = _parse("switch-counters", SwitchCounters,
                      _switch(storm, switch.name, "show interfaces counters"))
    pfc = _parse("pfc-counters", PfcCounters, _switch(storm, switch.name, "show pfc counters"))
    fec = _parse("fec-stats", FecStats,
                 _switch(storm, switch.name, "show interfaces counters fec-stats"))
    for port in ports(storm, switch.name):
        held = storm.port_counters(switch, port, T)
        assert held is not None
        parsed = counters.interfaces[port]
        assert (parsed.rx_ok, parsed.tx_ok, parsed.rx_err, parsed.rx_drp) == \
            (held.rx_ok, held.tx_ok, held.rx_err, held.rx_drp)
        assert pfc.rx[port]["PFC3"] == held.rx_pfc[3]
        assert pfc.tx[port]["PFC3"] == held.tx_pfc[3]
        assert fec.interfaces[port].fec_corr == held.fec_corr
    queues = _parse("queue-counters", QueueCounters,
                    _switch(storm, switch.name, "show queue counters Ethernet40"))
    dropped = queues.ports["Ethernet40"]["UC3"].drop_packets
    assert dropped is not None and dropped > 0


def test_sonic_and_eos_optics_read_back(optic: Sim) -> None:
    parsed = _parse("transceiver-dom", TransceiverDomReport, _switch(
        optic, "leaf-g00-r3", "show interfaces transceiver eeprom --dom Ethernet16"))
    module = parsed.interfaces["Ethernet16"]
    dom = optic.dom("leaf-g00-r3", "Ethernet16", T)
    assert dom is not None and module.serial == dom.serial
    for lane, power in enumerate(dom.rx_power_dbm, start=1):
        assert module.rx_power_dbm[str(lane)] == pytest.approx(power, abs=1e-4)
    eos = _parse("transceiver-dom", TransceiverDomReport, _switch(
        optic, "spine-01", "show interfaces Ethernet1/1 transceiver detail"))
    spine = optic.dom("spine-01", "Ethernet1/1", T)
    assert spine is not None
    readings = next(iter(eos.interfaces.values()))
    assert next(iter(readings.rx_power_dbm.values())) == pytest.approx(spine.rx_power_dbm[0],
                                                                       abs=0.006)


def test_eos_interfaces_read_back(storm: Sim) -> None:
    spine = storm.graph.switches["spine-01"]
    parsed = _parse("switch-counters", SwitchCounters,
                    _switch(storm, "spine-01", "show interfaces"))
    for port in ports(storm, "spine-01"):
        held = storm.port_counters(spine, port, T)
        assert held is not None
        got = parsed.interfaces[port]
        assert (got.rx_ok, got.tx_ok, got.rx_pause, got.tx_pause) == \
            (held.rx_ok, held.tx_ok, sum(held.rx_pfc), sum(held.tx_pfc))


def test_nvue_counters_read_back(optic: Sim) -> None:
    from fabtui.model.topology import Flavor

    switch = optic.graph.switches["leaf-g00-r3"].model_copy(update={"flavor": Flavor.NVUE})
    text, rejected = reply(optic, switch, "nv show interface Ethernet16 counters", T)
    assert not rejected
    parsed = _parse("switch-counters", SwitchCounters, text)
    held = optic.port_counters(switch, "Ethernet16", T)
    assert held is not None
    got = next(iter(parsed.interfaces.values()))
    assert (got.rx_err, got.rx_bytes) == (held.rx_err, held.rx_bytes)


def test_counters_only_grow_and_are_deterministic(optic: Sim) -> None:
    switch = optic.graph.switches["leaf-g00-r3"]
    again = _sim("optic-degrading")
    before = [optic.port_counters(switch, p, 600.0) for p in ports(optic, switch.name)]
    after = [optic.port_counters(switch, p, 1800.0) for p in ports(optic, switch.name)]
    assert before == [again.port_counters(again.graph.switches["leaf-g00-r3"], p, 600.0)
                      for p in ports(again, switch.name)]
    for old, new in zip(before, after, strict=True):
        assert old is not None and new is not None
        for field in ("rx_ok", "tx_ok", "rx_err", "fec_corr", "fec_uncorr", "link_down_events"):
            assert getattr(new, field) >= getattr(old, field)
        assert new.rx_ok > old.rx_ok  # the job moves bytes on every rail


def test_a_running_job_moves_bytes_on_every_rail_and_a_hung_one_none() -> None:
    sim = _sim("nccl-hang")
    for nic in sim.graph.nodes["node001"].nics:
        link = sim.graph.attachments[("node001", nic.name)].link_index
        assert sim.rate(link, 100.0) > 0  # before the hang
        assert sim.rate(link, 1000.0) == 0  # stalled: nothing moves
    assert math.isclose(sim.job_factor(1000.0), 0.0)


def test_unknown_commands_get_the_vendor_reply(optic: Sim) -> None:
    text, rejected = reply(optic, optic.graph.switches["leaf-g00-r0"], "show foo", T)
    assert rejected and 'Error: No such command "foo".' in text
    text, rejected = reply(optic, optic.graph.switches["spine-01"], "show foo", T)
    assert rejected and text.startswith("% Invalid input")
    _out, err, status = run(optic, "node001", ["frobnicate"], T)
    assert status == 127 and "command not found" in err


def test_state_file_round_trip(tmp_path: Path) -> None:
    from fabtui.sim.state import fresh_state, read_state, write_state

    state = fresh_state(demo_topology(), find_scenario("healthy"), [], at=120.0)
    write_state(tmp_path / "s.json", state)
    assert read_state(tmp_path / "s.json") == state
    assert 119 < state.now() < 125
