"""The counters of a simulated NIC, as values: `ethtool_counters` (`ethtool -S`, printed by
`ethtool_stats.py`) and `rdma_counters` (`rdma statistic`, hw_counters: `rdma_statistic.py`,
`rdma_hw_counters.py`), with the PFC stall-prevention events and drops behind them. The
Prometheus exporter serves them too."""

from __future__ import annotations

from fabtui.model.topology import Nic
from fabtui.sim.core import FRAME, PRIORITY, Sim
from fabtui.sim.scenario import FaultKind


def ethtool_counters(sim: Sim, host: str, nic: Nic, t: float) -> dict[str, int]:
    """The mlx5 counters `ethtool -S` prints for `nic` at `t` (names as the driver uses)."""
    counters = sim.nic_counters(host, nic, t)
    attachment = sim.graph.attachments.get((host, nic.name))
    link = attachment.link_index if attachment else -1
    key = (host, nic.name)
    base = sim.base
    values: dict[str, int] = {
        "rx_packets": base("rxp", *key, scale=1e6), "tx_packets": base("txp", *key, scale=1e6),
        "rx_bytes": base("rxb0", *key, scale=1e8), "tx_bytes": base("txb0", *key, scale=1e8),
    }
    if counters is None:
        return values | {"link_down_events_phy": 0}
    pause_rx = counters.rx_pfc[PRIORITY]
    pause_tx = counters.tx_pfc[PRIORITY]
    durations = (sim.integrate(lambda x: sim.pause_duration_rate(host, link, x)[0], t, link),
                 sim.integrate(lambda x: sim.pause_duration_rate(host, link, x)[1], t, link))
    corrected, lost, _symbols = sim.receiver(link, host, nic.name, t)
    received_bits = sim.bits_received(link, t)
    warnings, errors = storm_events(sim, host, nic.name, t)
    # Frames that touched an uncorrectable codeword arrive with a bad FCS and are dropped:
    # counted by rx_crc_errors_phy, not by the packet counters (mlx5 counters.rst).
    bad = counters.rx_err
    rdma_bytes = counters.rx_bytes - bad * FRAME
    values |= {
        "rx_vport_rdma_unicast_packets": rdma_bytes // FRAME,
        "rx_vport_rdma_unicast_bytes": rdma_bytes,
        "tx_vport_rdma_unicast_packets": counters.tx_bytes // FRAME,
        "tx_vport_rdma_unicast_bytes": counters.tx_bytes,
        "rx_packets_phy": rdma_bytes // FRAME + values["rx_packets"],
        "tx_packets_phy": counters.tx_bytes // FRAME + values["tx_packets"],
        "rx_bytes_phy": rdma_bytes + values["rx_bytes"],
        "tx_bytes_phy": counters.tx_bytes + values["tx_bytes"],
        # The PHY counts every bit it decodes (idles too): pre-FEC BER = corrected / bits.
        "rx_bits_phy": received_bits + values["rx_bytes"] * 8,
        "rx_corrected_bits_phy": corrected,
        **{f"rx_err_lane_{lane}_phy": bits for lane, bits in
           enumerate(sim.lane_split(link, host, nic.name, t, corrected))},
        # Packets dropped for a bad FCS / for coding errors (mlx5 counters.rst): the frames
        # that touched an uncorrectable codeword, a share of the frames received; the PCS
        # counts the symbols FEC could not correct (at least one per lost codeword).
        "rx_crc_errors_phy": bad,
        "rx_symbol_err_phy": bad,
        "rx_pcs_symbol_err_phy": lost,
        "rx_discards_phy": 0,
        "rx_out_of_buffer": 0,
        "link_down_events_phy": counters.link_down_events,
        f"rx_prio{PRIORITY}_bytes": rdma_bytes,
        f"rx_prio{PRIORITY}_packets": rdma_bytes // FRAME,
        f"tx_prio{PRIORITY}_bytes": counters.tx_bytes,
        f"tx_prio{PRIORITY}_packets": counters.tx_bytes // FRAME,
        f"rx_prio{PRIORITY}_pause": pause_rx,
        f"rx_prio{PRIORITY}_pause_duration": int(durations[0]),
        f"rx_prio{PRIORITY}_pause_transition": pause_rx // 20,
        f"tx_prio{PRIORITY}_pause": pause_tx,
        f"tx_prio{PRIORITY}_pause_duration": int(durations[1]),
        f"rx_prio{PRIORITY}_buf_discard": stalled_drops(sim, host, nic.name, link, t),
        f"rx_prio{PRIORITY}_cong_discard": 0,
        f"rx_prio{PRIORITY}_marked": int(sim.integrate(
            lambda x: sim.congestion(host, nic, x)[0], t, link)),
        "tx_pause_storm_warning_events": warnings,
        "tx_pause_storm_error_events": errors,
        "rx_pci_signal_integrity": 0, "tx_pci_signal_integrity": 0,
        "module_unplug": 0, "module_bus_stuck": 0, "module_high_temp": 0,
        "module_bad_shorted": 0,
    }
    return values


def stalled_drops(sim: Sim, host: str, nic: str, link: int, t: float) -> int:
    """Frames a stalled NIC dropped after its stall prevention stopped the pause: the fabric
    is spared, but the host still cannot take what arrives (rx_prio3_buf_discard)."""
    total = 0.0
    for fault in sim.faults:
        if fault.kind is FaultKind.PFC_STORM and fault.host == host and fault.nic == nic:
            _, stopped = sim.storm_pause_window(fault)
            end = min(t, fault.spec.until if fault.spec.until is not None else t)
            if stopped < end:
                def dropped(x: float, after: float = stopped) -> float:
                    return sim.rate(link, x) / FRAME if x >= after else 0.0

                total += sim.integrate(dropped, end, link) - \
                    sim.integrate(dropped, stopped, link)
    return int(total)


def storm_events(sim: Sim, host: str, nic: str, t: float) -> tuple[int, int]:
    """(warning, error) PFC stall-prevention events of a NIC by `t`: its receiver stalled for
    85 % of the timeout (warning), then for all of it, when mlx5 stops pausing (error;
    mlx5 counters.rst tx_pause_storm_*_events). None when prevention is off."""
    warnings = errors = 0
    for fault in sim.faults:
        if fault.kind is not FaultKind.PFC_STORM or fault.host != host or fault.nic != nic:
            continue
        stall = sim.stall_timeout(fault)
        end = fault.spec.until if fault.spec.until is not None else float("inf")
        if stall <= 0:
            continue
        warnings += int(fault.spec.at + 0.85 * stall <= min(t, end))
        errors += int(fault.spec.at + stall <= min(t, end))
    return warnings, errors


def rdma_counters(sim: Sim, host: str, nic: Nic, t: float) -> dict[str, int]:
    """The RDMA hardware counters (`rdma statistic`, hw_counters) of `nic` at `t`."""
    attachment = sim.graph.attachments.get((host, nic.name))
    link = attachment.link_index if attachment else -1
    moved = sim.bytes_moved(link, t) if attachment else 0
    marked = int(sim.integrate(lambda x: sim.congestion(host, nic, x)[0], t, link))
    sent = int(sim.integrate(lambda x: sim.congestion(host, nic, x)[1], t, link))
    handled = int(sim.integrate(lambda x: sim.congestion(host, nic, x)[2], t, link))
    hang = [f for f in sim.faults if f.kind is FaultKind.NCCL_HANG and f.host == host
            and f.nic == nic.name and f.spec.at <= t]
    # A dead link: the QPs retransmit once per ACK timeout until the retry count runs out.
    retries = int(sim.scenario.workload.nccl_env.get("NCCL_IB_RETRY_CNT", 7))
    per_try = sim.retry_window_s() / (retries + 1)
    timeouts = sum(min(retries * 64, int((t - f.spec.at) / per_try) * 64) for f in hang)
    base = sim.base
    key = (host, nic.name)
    lost_packets = sim.lost_frames(link, host, nic.name, t) if attachment else 0
    return {
        "rx_write_requests": moved // (512 * 1024) + base("wr", *key, scale=1e6),
        "rx_read_requests": base("rd", *key, scale=1e4),
        "rx_atomic_requests": 0,
        "out_of_buffer": 0,
        # A lost packet makes the next one arrive out of sequence (the responder NAKs it).
        "out_of_sequence": base("oos", *key, scale=20) + lost_packets,
        "duplicate_request": 0,
        "rnr_nak_retry_err": 0,
        "packet_seq_err": 0,
        "implied_nak_seq_err": 0,
        "local_ack_timeout_err": base("lat", *key, scale=5) + timeouts,
        "resp_local_length_error": 0,
        "resp_cqe_error": 0,
        "req_cqe_error": len(hang) * 64,
        "req_remote_invalid_request": 0,
        "req_remote_access_errors": 0,
        "resp_remote_access_errors": 0,
        "resp_cqe_flush_error": 0,
        "req_cqe_flush_error": len(hang) * 64 * 3,
        "roce_adp_retrans": 0,
        "roce_adp_retrans_to": 0,
        "roce_slow_restart": 0,
        "roce_slow_restart_cnps": 0,
        "roce_slow_restart_trans": 0,
        "rp_cnp_ignored": 0,
        "rp_cnp_handled": handled,
        "np_ecn_marked_roce_packets": marked,
        "np_cnp_sent": sent,
        "rx_icrc_encapsulated": 0,
    }
