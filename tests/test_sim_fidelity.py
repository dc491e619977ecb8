"""The simulator's physics stays possible (issue 35, Deliver 2; the field review's S1, S2, S3,
S5 and S6), read through the devices' own commands and the real parsers on the demo fabric.

- S1: frames with a bad FCS never outnumber the frames sent, corrected bits keep growing while
  the BER climbs, and a receiver past the high-SER limit takes the link down (and the job with
  it, one retry window later).
- S2: SONiC's pfcwd drop action stops the pause spreading from the stormed queue, and the
  stormed queue stops delivering to the stalled NIC.
- S3: any host-link outage longer than the job's IB retry window ends the job: an optic's
  10 s flap, a port shut, not only a `link-flap` fault.
- S5: a throttled H100 reads below its shutdown limit, and `nvidia-smi -q` prints the limits.
- S6: CNP counters differ by direction: np_cnp_sent where the congestion is seen, rp_cnp_handled
  where the sender slows down.
- S4: the NIC's optic is a part that is what it prints: a single-mode 400G DR4 OSFP.
"""

from __future__ import annotations

from typing import Any

import pytest

from fabtui.paths import demo_topology, shipped_templates
from fabtui.sim import physics
from fabtui.sim.core import Sim
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import build_sim, fresh_state
from tests.support.sim import node_out, parse, switch_out

JOB_LOG = "/var/log/fabtui-sim/job.log"





def demo(name: str, **params: Any) -> Sim:
    """The demo fabric playing scenario `name`, its first fault's params updated by `params`."""
    sim = build_sim(fresh_state(demo_topology(), find_scenario(name), [shipped_templates()]))
    if not params:
        return sim
    timeline = list(sim.scenario.timeline)
    timeline[0] = timeline[0].model_copy(update={"params": {**timeline[0].params, **params}})
    return Sim(sim.topology, sim.scenario.model_copy(update={"timeline": timeline}),
               seed=sim.seed)


def ethtool(sim: Sim, host: str, netdev: str, t: float) -> dict[str, int]:
    parsed = parse("ethtool-stats", node_out(sim, host, ["ethtool", "-S", netdev], t))
    return {name: int(value) for name, value in parsed.counters.items()}


def completion_errors(log: str) -> list[str]:
    return [line for line in log.splitlines() if "status=12" in line or "error 12" in line
            or "transport retry counter exceeded" in line.lower()]


# S1 ------------------------------------------------------------------------------------------
def test_a_failing_receiver_loses_frames_not_more_than_it_gets_then_takes_the_link_down() -> None:
    sim = demo("optic-degrading")
    host, nic, netdev = "node003", "mlx5_3", "enp92s0f0np0"
    leaf, port = "leaf-g00-r3", "Ethernet16"
    netdev = next(n.netdev for n in sim.graph.nodes[host].nics if n.name == nic) or netdev
    link = sim.link_of(f"{host}:{nic}")
    assert link is not None
    down = next(start for start, _ in sim.down_windows(link) if start > 1200)
    times = [down - 65 + 10 * k for k in range(7)]  # the last minute before the receiver quits
    readings = [(ethtool(sim, host, netdev, t),
                 parse("switch-counters", switch_out(sim, leaf, "show interfaces counters", t))
                 .interfaces[port]) for t in times]
    corrected_rates = []
    for at, (before, sent_before), (after, sent_after) in zip(times[1:], readings, readings[1:],
                                                              strict=False):
        crc = after["rx_crc_errors_phy"] - before["rx_crc_errors_phy"]
        sent = sent_after.tx_ok - sent_before.tx_ok
        assert 0 <= crc <= sent, (crc, sent)  # the leaf sent every frame the NIC got
        good = after["rx_packets_phy"] - before["rx_packets_phy"]
        assert good + crc <= sent + 1
        corrected_rates.append(after["rx_corrected_bits_phy"] - before["rx_corrected_bits_phy"])
        bits = after["rx_bits_phy"] - before["rx_bits_phy"]
        mlx = parse("mlxlink", node_out(sim, host, ["mlxlink", "-d", nic, "-c"], at))
        raw = mlx.counters.raw_physical_ber
        ethtool_ber = (after["rx_corrected_bits_phy"] - before["rx_corrected_bits_phy"]) / bits
        # what ethtool's counters say and what mlxlink reports agree (not 4e-12 against 1e-2)
        assert raw / 3 <= ethtool_ber <= raw * 1.5, (ethtool_ber, raw)
    assert corrected_rates == sorted(corrected_rates)  # corrected bits grow with the BER
    assert readings[-1][0]["rx_crc_errors_phy"] > readings[0][0]["rx_crc_errors_phy"]
    # Cumulatively too: the frames lost are a share of the frames the leaf sent.
    first, last = readings[0][0], readings[-1][0]
    assert last["rx_crc_errors_phy"] - first["rx_crc_errors_phy"] < \
        readings[-1][1].tx_ok - readings[0][1].tx_ok

    # Past the high-SER limit the receiver cannot hold the link: both ends see it down.
    assert physics.high_ser(sim._signal_ber(link, host, down + 1))
    assert not physics.high_ser(sim._signal_ber(link, host, down - 1))
    later = down + 30
    assert parse("mlxlink", node_out(sim, host, ["mlxlink", "-d", nic], later)).state != "Active"
    status = parse("switch-counters", switch_out(sim, leaf, "show interfaces counters", later))
    assert (status.interfaces[port].state or "").lower() in ("d", "down")
    assert f"{netdev}: Link down" in node_out(sim, host, ["dmesg"], later)
    # The job's QPs give up one retry window later: completion error 12, the job ends.
    log = node_out(sim, "node001", ["cat", JOB_LOG], down + sim.retry_window_s() + 5)
    assert completion_errors(log), log[-2000:]
    assert sim.job_factor(down + sim.retry_window_s() + 1) == 0.0
    assert not completion_errors(node_out(sim, "node001", ["cat", JOB_LOG], down - 1))


def test_frame_loss_is_a_share_of_the_frames() -> None:
    assert physics.frame_loss_ratio(0.0, 4160) == 0.0
    assert physics.frame_loss_ratio(1.0, 4160) == pytest.approx(1.0)
    small = physics.frame_loss_ratio(1e-4, 4160)
    assert small == pytest.approx(1e-4 * (4160 * 8 / 5140 + 1), rel=1e-3)
    # The limit sits where the decoder still corrects more the worse the light (no stall).
    at = [physics.fec_rates(ber, 400).corrected_bits for ber in (1e-3, 1.5e-3, 1.8e-3)]
    assert at == sorted(at) and physics.high_ser(2e-3) and not physics.high_ser(1.5e-3)


# S3 ------------------------------------------------------------------------------------------
def test_a_10_s_optic_flap_longer_than_the_retry_window_ends_the_job() -> None:
    # A laser that ages less (its receiver never past the high-SER limit) still flaps for
    # 10 s every two minutes after 30 min: longer than NCCL 2.21's 8.6 s retry window.
    sim = demo("optic-degrading", end_dbm=-8.0)
    link = sim.link_of("node003:mlx5_3")
    assert link is not None
    first = sim.down_windows(link)[0]
    assert first == (1800.0, 1810.0)
    failure = sim.job_failure()
    assert failure is not None and failure[1] == link
    assert failure[0] == pytest.approx(1800 + 8.59, abs=0.01)
    log = node_out(sim, "node001", ["cat", JOB_LOG], 1815.0)
    assert completion_errors(log)
    assert sim.job_factor(1815.0) == 0.0


def test_a_shut_port_longer_than_the_retry_window_ends_the_job() -> None:
    base = demo("healthy")
    sim = Sim(base.topology, base.scenario, seed=base.seed,
              shut=[("leaf-g00-r1:Ethernet32", 400.0, 430.0)])
    failure = sim.job_failure()
    assert failure is not None and failure[0] == pytest.approx(400 + 8.59, abs=0.01)
    short = Sim(base.topology, base.scenario, seed=base.seed,
                shut=[("leaf-g00-r1:Ethernet32", 400.0, 405.0)])
    assert short.job_failure() is None  # 5 s: the QPs retry through it


# S2 ------------------------------------------------------------------------------------------
def _pfc3(text: str, direction: str) -> dict[str, int]:
    parsed = parse("pfc-counters", text)
    table = parsed.rx if direction == "rx" else parsed.tx
    return {port: int(values["PFC3"] or 0) for port, values in table.items()}


def test_pfcwd_drop_stops_the_pause_spreading_and_the_stormed_queue_delivering() -> None:
    sim = demo("pfc-storm")  # node006 mlx5_4 pauses without end from 5 min; its leaf runs pfcwd
    leaf, port, host, netdev = "leaf-g00-r4", "Ethernet40", "node006", "enp153s0f0np0"
    netdev = next(n.netdev for n in sim.graph.nodes[host].nics if n.name == "mlx5_4") or netdev
    at = {t: switch_out(sim, leaf, "show pfc counters", t) for t in (600.0, 900.0, 1200.0)}
    sent = {t: _pfc3(text, "tx") for t, text in at.items()}
    received = {t: _pfc3(text, "rx") for t, text in at.items()}
    # The NIC keeps pausing (its stall prevention is off): the leaf port keeps counting it ...
    assert received[900.0][port] > received[600.0][port] > 0
    # ... but once the watchdog storms the queue the leaf pauses nobody: the spread stopped.
    assert sent[600.0] == sent[900.0] == sent[1200.0]
    assert any(sent[600.0].values())  # it did spread for the detection time
    stats = parse("pfcwd", switch_out(sim, leaf, "show pfcwd stats", 900.0))
    assert stats.queues[f"{port}:3"].status == "stormed"
    # The stormed queue delivers nothing more to the NIC, and drops what comes.
    queues = {t: parse("queue-counters", switch_out(sim, leaf, f"show queue counters {port}", t))
              for t in (600.0, 900.0)}
    uc3 = {t: parsed.ports[port]["UC3"] for t, parsed in queues.items()}
    assert uc3[900.0].packets == uc3[600.0].packets
    assert (uc3[900.0].drop_packets or 0) > (uc3[600.0].drop_packets or 0)
    nic = {t: ethtool(sim, host, netdev, t) for t in (600.0, 900.0)}
    delivered = "rx_vport_rdma_unicast_packets"
    assert nic[900.0][delivered] == nic[600.0][delivered]
    # The peers' QPs toward the cut-off NIC exhaust their retries: error 12, the job ends.
    failure = sim.job_failure()
    assert failure is not None
    assert failure[0] == pytest.approx(300 + 0.2 + sim.retry_window_s(), abs=0.01)
    assert completion_errors(node_out(sim, "node001", ["cat", JOB_LOG], 600.0))
    # With stall prevention on (8 s) the queue is dropped for 8 s only: the job rides it out.
    assert demo("pfc-storm-stall-prevention").job_failure() is None


# S5 ------------------------------------------------------------------------------------------
def test_throttled_h100s_run_below_their_shutdown_limit_and_print_their_limits() -> None:
    import xml.etree.ElementTree as ET

    sim = demo("slow-node")  # node004's H100s hot and throttled
    text = node_out(sim, "node004", ["nvidia-smi", "-q", "-x"], 400.0)
    parsed = parse("nvidia-smi-q", text)
    assert {g.product_name for g in parsed.gpus} == {"NVIDIA H100 80GB HBM3"}
    for gpu in ET.fromstring(text).iter("gpu"):
        temps = gpu.find("temperature")
        assert temps is not None

        def celsius(tag: str, where: Any = temps) -> int:
            return int(where.findtext(tag, "").removesuffix(" C"))

        # H100 80GB HBM3: shutdown 92, slowdown 89, max operating 87, memory 95 (°C)
        limits = [celsius(tag) for tag in ("gpu_temp_max_threshold", "gpu_temp_slow_threshold",
                                           "gpu_temp_max_gpu_threshold",
                                           "gpu_temp_max_mem_threshold")]
        assert limits == [92, 89, 87, 95]
        current = celsius("gpu_temp")
        assert limits[2] <= current < limits[0]  # throttled: past max operating, not shut down
        reasons = gpu.find("clocks_event_reasons")
        assert reasons is not None
        assert reasons.findtext("clocks_event_reason_hw_thermal_slowdown") == "Active"
    assert all(g.temperature_c is not None and g.temperature_c < 92 for g in parsed.gpus)


# S6 ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["healthy", "multi-job-interference"])
def test_cnp_counters_differ_by_direction(name: str) -> None:
    sim = demo(name)
    t = sim.scenario.start + 120.0
    for host, nic in (("node003", "mlx5_2"), ("node005", "mlx5_2"), ("node001", "mlx5_0")):
        text = node_out(sim, host, ["rdma", "statistic", "show", "link", f"{nic}/1"], t)
        parsed = parse("rdma-statistic", text)
        counters = next(iter(parsed.links.values()))
        marked, sent = counters["np_ecn_marked_roce_packets"], counters["np_cnp_sent"]
        handled = counters["rp_cnp_handled"]
        assert sent != handled, (host, nic, sent, handled)  # two directions, two counts
        assert 0 < sent < marked  # CNPs answer marks at most once per QP per interval
        assert handled > 0


# S4 ------------------------------------------------------------------------------------------
def test_the_nic_optic_is_a_single_mode_dr4_part_not_the_multimode_sr4() -> None:
    """`mlxlink -m` on a ConnectX-7 prints 400GBASE-DR4 at 1310 nm; the part number it prints
    must be that optic: NVIDIA MMS4X00-NS400 (single-port OSFP, single-mode DR4, 100 m), not
    MMA4Z00-NS400 (multimode SR4, 50 m), which an operator ordering by it would get (NVIDIA
    product specifications; field review S4). The fleet template allows it."""
    import tomllib

    from fabtui.paths import shipped_dir

    sim = demo("healthy")
    module = parse("mlxlink", node_out(sim, "node003", ["mlxlink", "-d", "mlx5_3", "-m"],
                                       120.0)).module
    assert module is not None
    assert module.compliance is not None and "DR4" in module.compliance
    assert module.vendor_part_number == "MMS4X00-NS400"
    fleet = tomllib.loads((shipped_dir("runbooks") / "templates" / "fleet.toml").read_text())
    allowed = fleet["optics"]["allowed_part_numbers"]
    assert "MMS4X00-NS400" in allowed and "MMA4Z00-NS400" not in allowed
