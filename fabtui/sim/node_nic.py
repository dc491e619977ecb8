"""The NIC and RDMA commands of a simulated node, in each real tool's own layout.

`ethtool -S`, `rdma statistic show`, `show_counters`, `ibstat`, `ibv_devinfo`, `show_gids`,
`ibdev2netdev`, `mlxlink [-m] [-c]` and `perfquery` (which fails on a RoCE port, as the real one
does). `ethtool_counters` and `rdma_counters` are the values themselves (the Prometheus exporter
serves them too).
"""

from __future__ import annotations

from fabtui.model.topology import Nic, Node
from fabtui.sim import misconfig
from fabtui.sim.core import (
    BIAS_HIGH_ALARM,
    BIAS_LOW_ALARM,
    FRAME,
    PRIORITY,
    RX_HIGH_ALARM,
    RX_LOW_ALARM,
    TEMP_HIGH_ALARM,
    TX_HIGH_ALARM,
    TX_LOW_ALARM,
    Sim,
)
from fabtui.sim.scenario import FaultKind

Result = tuple[str, str, int]
"""(stdout, stderr, exit status), as a process would end."""


def nic_by(node: Node, name: str) -> Nic | None:
    return next((n for n in node.nics if name in (n.name, n.netdev)), None)


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
    rdma_bytes = counters.rx_bytes
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
           enumerate(sim.lane_corrected_bits(link, host, nic.name, t))},
        # Each uncorrectable codeword is a frame with a bad FCS (mlx5 counters.rst).
        "rx_crc_errors_phy": lost,
        "rx_symbol_err_phy": lost,
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
    cnps = int(sim.integrate(lambda x: sim.congestion(host, nic, x)[1], t, link))
    hang = [f for f in sim.faults if f.kind is FaultKind.NCCL_HANG and f.host == host
            and f.nic == nic.name and f.spec.at <= t]
    # A dead link: the QPs retransmit once per ACK timeout until the retry count runs out.
    retries = int(sim.scenario.workload.nccl_env.get("NCCL_IB_RETRY_CNT", 7))
    per_try = sim.retry_window_s() / (retries + 1)
    timeouts = sum(min(retries * 64, int((t - f.spec.at) / per_try) * 64) for f in hang)
    base = sim.base
    key = (host, nic.name)
    return {
        "rx_write_requests": moved // (512 * 1024) + base("wr", *key, scale=1e6),
        "rx_read_requests": base("rd", *key, scale=1e4),
        "rx_atomic_requests": 0,
        "out_of_buffer": 0,
        "out_of_sequence": base("oos", *key, scale=20),
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
        "rp_cnp_handled": cnps,
        "np_ecn_marked_roce_packets": marked,
        "np_cnp_sent": cnps,
        "rx_icrc_encapsulated": 0,
    }


def ethtool(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    if len(args) != 2 or args[0] not in ("-S", "--statistics"):
        return "", "ethtool: bad command line argument(s)\n", 1
    nic = nic_by(node, args[1])
    if nic is None:
        return "", "Cannot get stats strings information: No such device\n", 71
    lines = ["NIC statistics:"]
    lines += [f"     {name}: {value}" for name, value in
              ethtool_counters(sim, node.hostname, nic, t).items()]
    return "\n".join(lines) + "\n", "", 0


def rdma(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    words = [a for a in args if a not in ("-p", "-pretty")]
    if len(words) < 2 or words[0] not in ("statistic", "stat") or words[1] != "show":
        return "", "Object \"{}\" is unknown, try \"rdma help\".\n".format(
            words[0] if words else ""), 1
    wanted = None
    if len(words) >= 4 and words[2] == "link":
        wanted = words[3].split("/")[0]
    out = []
    for nic in node.nics:
        if wanted is not None and nic.name != wanted:
            continue
        counters = rdma_counters(sim, node.hostname, nic, t)
        pairs = " ".join(f"{name} {value}" for name, value in counters.items())
        out.append(f"link {nic.name}/1 {pairs}")
    if not out:
        return "", "Wrong device name\n", 1
    return "\n".join(out) + "\n", "", 0


def show_counters(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    nic = nic_by(node, args[0]) if args else None
    if nic is None:
        return "", "usage: show_counters <device>\n", 1
    lines = [f"# show_counters {nic.name}", "Port 1 hw counters:"]
    lines += [f"{name}: {value}" for name, value in
              sorted(rdma_counters(sim, node.hostname, nic, t).items())]
    return "\n".join(lines) + "\n", "", 0


def _port_state(sim: Sim, node: Node, nic: Nic, t: float) -> bool:
    attachment = sim.graph.attachments.get((node.hostname, nic.name))
    return attachment is not None and sim.link_up(attachment.link_index, t)


def _guid(sim: Sim, *key: object) -> str:
    value = int(sim.noise("guid", *key) * 2**48)
    return f"0x{0x946dae << 40 | value & 0xFFFFFFFFFF:016x}"


def ibstat(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    nics = [n for n in node.nics if not args or args[0] in (n.name, n.netdev)]
    if not nics:
        return "", f"ibpanic: [{args[0]}] main: '{args[0]}' IB device can't be found: " \
                   "No such file or directory\n", 1
    lines = []
    for nic in nics:
        up = _port_state(sim, node, nic, t)
        guid = _guid(sim, node.hostname, nic.name)
        attachment = sim.graph.attachments.get((node.hostname, nic.name))
        rate = sim.link_speed(attachment.link_index) if attachment else nic.speed
        lines += [f"CA '{nic.name}'", "\tCA type: MT4129", "\tNumber of ports: 1",
                  f"\tFirmware version: {misconfig.firmware(sim, node, nic, t)}",
                  "\tHardware version: 0",
                  f"\tNode GUID: {guid}", f"\tSystem image GUID: {guid}", "\tPort 1:",
                  f"\t\tState: {'Active' if up else 'Down'}",
                  f"\t\tPhysical state: {'LinkUp' if up else 'Polling'}",
                  f"\t\tRate: {rate if up else 10}", "\t\tBase lid: 0", "\t\tLMC: 0",
                  "\t\tSM lid: 0", "\t\tCapability mask: 0x00010000",
                  f"\t\tPort GUID: {guid}", "\t\tLink layer: Ethernet"]
    return "\n".join(lines) + "\n", "", 0


def ibv_devinfo(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    wanted = args[args.index("-d") + 1] if "-d" in args and args.index("-d") + 1 < len(args) \
        else None
    nics = [n for n in node.nics if wanted is None or wanted == n.name]
    if not nics:
        return "", f"IB device '{wanted}' wasn't found\n", 255
    lines = []
    for nic in nics:
        up = _port_state(sim, node, nic, t)
        raw = _guid(sim, node.hostname, nic.name)[2:]
        guid = ":".join(raw[i:i + 4] for i in range(0, 16, 4))
        lines += [f"hca_id:\t{nic.name}", "\ttransport:\t\t\tInfiniBand (0)",
                  f"\tfw_ver:\t\t\t\t{misconfig.firmware(sim, node, nic, t)}",
                  f"\tnode_guid:\t\t\t{guid}",
                  f"\tsys_image_guid:\t\t\t{guid}", "\tvendor_id:\t\t\t0x02c9",
                  "\tvendor_part_id:\t\t\t4129", "\thw_ver:\t\t\t\t0x0",
                  "\tboard_id:\t\t\tMT_0000000838", "\tphys_port_cnt:\t\t\t1",
                  "\t\tport:\t1",
                  f"\t\t\tstate:\t\t\t{'PORT_ACTIVE (4)' if up else 'PORT_DOWN (1)'}",
                  "\t\t\tmax_mtu:\t\t4096 (5)", _mtu_line(misconfig.active_mtu(sim, node, nic, t)),
                  "\t\t\tsm_lid:\t\t\t0", "\t\t\tport_lid:\t\t0", "\t\t\tport_lmc:\t\t0x00",
                  "\t\t\tlink_layer:\t\tEthernet", ""]
    return "\n".join(lines), "", 0


def _mtu_line(mtu: int) -> str:
    codes = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
    return f"\t\t\tactive_mtu:\t\t{mtu} ({codes.get(mtu, 5)})"


def show_gids(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    nics = [n for n in node.nics if not args or args[0] == n.name]
    lines = ["DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV",
             "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---"]
    count = 0
    for nic in nics:
        mac = _guid(sim, node.hostname, nic.name)[-12:]
        link_local = f"fe80:0000:0000:0000:{mac[0:4]}:{mac[4:8]}:{mac[8:12]}:0000"
        entries = [(0, link_local, "", "v1"), (1, link_local, "", "v2")]
        if nic.ip:
            octets = [int(o) for o in nic.ip.split(".")]
            mapped = f"0000:0000:0000:0000:0000:ffff:{octets[0]:02x}{octets[1]:02x}:" \
                     f"{octets[2]:02x}{octets[3]:02x}"
            v2 = misconfig.gid_index(sim, node, nic, t)
            # extra IPv6 GIDs before the IPv4 pair shift it (a second address on the netdev)
            extra = [(i, link_local.replace("fe80", "fd00"), "", "v1" if i % 2 == 0 else "v2")
                     for i in range(2, max(2, v2 - 1))]
            entries += [*extra, (v2 - 1, mapped, nic.ip, "v1"), (v2, mapped, nic.ip, "v2")]
        for index, gid, ip, version in entries:
            lines.append(f"{nic.name}\t1\t{index}\t{gid}\t{ip}  \t{version}\t{nic.netdev}")
            count += 1
    lines.append(f"n_gids_found={count}")
    return "\n".join(lines) + "\n", "", 0


def ibdev2netdev(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    lines = []
    for nic in node.nics:
        up = _port_state(sim, node, nic, t)
        state = "Up" if up else "Down"
        if "-v" in args:
            lines.append(f"{nic.pci} {nic.name} (MT4129 - MCX75310AAS-NEAT) "
                         f"NVIDIA ConnectX-7 HHHL Adapter Card, 400GbE / NDR IB (default mode), "
                         "Single-port OSFP, PCIe 5.0 x16 "
                         f"fw {misconfig.firmware(sim, node, nic, t)} port 1 "
                         f"({'ACTIVE' if up else 'DOWN  '}) ==> {nic.netdev} ({state})")
        else:
            lines.append(f"{nic.name} port 1 ==> {nic.netdev} ({state})")
    return "\n".join(lines) + "\n", "", 0


def mlxlink(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    device = args[args.index("-d") + 1] if "-d" in args and args.index("-d") + 1 < len(args) \
        else None
    nic = nic_by(node, device or "")
    if nic is None:
        return "", f"-E- Failed to open device: {device}, No such file or directory\n", 1
    attachment = sim.graph.attachments.get((node.hostname, nic.name))
    link = attachment.link_index if attachment else -1
    up = _port_state(sim, node, nic, t)
    lines = ["", "Operational Info", "----------------",
             f"State                              : {'Active' if up else 'Disable'}",
             f"Physical state                     : {'LinkUp' if up else 'Disabled'}",
             f"Speed                              : "
             f"{str(sim.link_speed(link)) + 'G' if up else 'N/A'}",
             f"Width                              : {'4x' if up else 'N/A'}",
             "FEC                                : Standard_RS-FEC - (544,514)",
             "Loopback Mode                      : No Loopback",
             "Auto Negotiation                   : ON", "",
             "Supported Info", "--------------",
             "Enabled Link Speed (Ext.)          : 0x00001000 (400G_4X)",
             "Supported Cable Speed (Ext.)       : 0x00001000 (400G_4X)", "",
             "Troubleshooting Info", "--------------------",
             f"Status Opcode                      : {0 if up else 1024}",
             "Group Opcode                       : N/A",
             "Recommendation                     : "
             + ("No issue was observed" if up else "Check the cable and the remote side"), "",
             "Tool Information", "----------------",
             f"Firmware Version                   : {misconfig.firmware(sim, node, nic, t)}",
             "amBER Version                      : 4.8",
             "MFT Version                        : mft 4.28.0-92", ""]
    if "-m" in args and attachment is not None:
        lines += _mlxlink_module(sim, node, nic, t)
    if "-c" in args and attachment is not None:
        _corrected, lost, _symbols = sim.receiver(link, node.hostname, nic.name, t)
        bits = max(sim.bits_received(link, t), 1)
        ber_now = sim.pre_fec_ber(link, node.hostname, nic.name, t)
        lines += ["Physical Counters and BER Info", "------------------------------",
                  f"Time Since Last Clear [Min]        : {t / 60:.1f}",
                  f"Effective Physical Errors          : {lost}",
                  f"Effective Physical BER             : {_ber(lost / bits)}",
                  "Raw Physical Errors Per Lane       : "
                  + ",".join(str(v) for v in sim.lane_corrected_bits(link, node.hostname,
                                                                     nic.name, t)),
                  f"Raw Physical BER                   : {_ber(ber_now if up else 0.0)}",
                  f"Link Down Counter                  : {sim.down_events(link, t)}",
                  "Link Error Recovery Counter        : 0", ""]
    return "\n".join(lines) + "\n", "", 0


def _mlxlink_module(sim: Sim, node: Node, nic: Nic, t: float) -> list[str]:
    """`mlxlink -m`: the NIC's own module, its launch power and bias and what it receives."""
    dom = sim.nic_dom(node.hostname, nic.name, t)
    if dom is None:
        return []

    def lanes(values: tuple[float | None, ...], digits: int = 3) -> str:
        return ",".join("-inf" if v is None else f"{v:.{digits}f}" for v in values)

    return ["Module Info", "-----------",
            f"Temperature [C]                    : {dom.temperature_c:.0f} "
            f"[-5..{TEMP_HIGH_ALARM:.0f}]",
            f"Voltage [mV]                       : {dom.voltage_v * 1000:.1f} [3135..3465]",
            f"Bias Current [mA]                  : {lanes(dom.tx_bias_ma)} "
            f"[{BIAS_LOW_ALARM:g}..{BIAS_HIGH_ALARM:g}]",
            f"Rx Power Current [dBm]             : {lanes(dom.rx_power_dbm)} "
            f"[{RX_LOW_ALARM:g}..{RX_HIGH_ALARM:g}]",
            f"Tx Power Current [dBm]             : {lanes(dom.tx_power_dbm)} "
            f"[{TX_LOW_ALARM:g}..{TX_HIGH_ALARM:g}]",
            "Identifier                         : OSFP",
            "Compliance                         : 400GBASE-DR4",
            "Cable Technology                   : 1310 nm, EML",
            "Cable Type                         : Optical Module (separated)",
            "OUI                                : Mellanox",
            f"Vendor Name                        : {dom.vendor}",
            f"Vendor Part Number                 : {dom.part_number}",
            f"Vendor Serial Number               : {dom.serial}",
            "Rev                                : A5",
            "Wavelength [nm]                    : 1311",
            "Transfer Distance [m]              : 500",
            "Rx LOS [per lane]                  : "
            + ",".join("1" if v is None else "0" for v in dom.rx_power_dbm), ""]


def _ber(value: float) -> str:
    """mlxlink's BER notation: `15E-255` for nothing, else `1E-11` style."""
    if value <= 0:
        return "15E-255"
    exponent = int(f"{value:e}".split("e")[1])
    mantissa = value / 10**exponent
    return f"{mantissa:.0f}E{exponent}"


def perfquery(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    """perfquery reads InfiniBand PMA counters: on a RoCE port there is no subnet manager."""
    device = args[args.index("-C") + 1] if "-C" in args and args.index("-C") + 1 < len(args) \
        else node.nics[0].name
    return "", (f"ibwarn: [{41000 + len(device)}] mad_rpc_open_port: client_register for mgmt 1 "
                f"failed\nperfquery: iberror: failed: Failed to open '{device}' port '1'\n"), 255
