"""What the commands on a simulated node print, in each real tool's own layout.

Every renderer prints the simulation's values in the layout the real tool uses, so the real
parsers read them back exactly (tests check each command). `run(sim, host, argv, t)` is the whole
node: it returns (stdout, stderr, exit status) like a process would.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable, Sequence

from fabtui.hostlist import HostlistError, expand
from fabtui.model.topology import Nic, Node
from fabtui.sim import misconfig, scheduler
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
from fabtui.topology.pairing import gpu_map

Result = tuple[str, str, int]
LOG_DIR = "/var/log/fabtui-sim"
"""Where the simulated job writes its logs (`job.log`; `rank-N.log` on the rank's node)."""


def run(sim: Sim, host: str, argv: Sequence[str], t: float) -> Result:
    """Run `argv` on simulated node `host` at time `t`."""
    if not argv:
        return "", "", 0
    node = sim.graph.nodes.get(host)
    if node is None:
        return "", f"ssh: Could not resolve hostname {host}: Name or service not known\n", 255
    program = argv[0].rsplit("/", 1)[-1]
    if program in ("mpirun", "srun") or program.endswith("_perf"):
        return _nccl_tests(sim, node, list(argv), t)
    handler = _COMMANDS.get(program)
    if handler is None:
        return "", f"bash: {argv[0]}: command not found\n", 127
    return handler(sim, node, list(argv[1:]), t)


# NIC and RDMA -----------------------------------------------------------------------------------

def _nic_by(node: Node, name: str) -> Nic | None:
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


def _ethtool(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    if len(args) != 2 or args[0] not in ("-S", "--statistics"):
        return "", "ethtool: bad command line argument(s)\n", 1
    nic = _nic_by(node, args[1])
    if nic is None:
        return "", "Cannot get stats strings information: No such device\n", 71
    lines = ["NIC statistics:"]
    lines += [f"     {name}: {value}" for name, value in
              ethtool_counters(sim, node.hostname, nic, t).items()]
    return "\n".join(lines) + "\n", "", 0


def _rdma(sim: Sim, node: Node, args: list[str], t: float) -> Result:
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


def _show_counters(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    nic = _nic_by(node, args[0]) if args else None
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


def _ibstat(sim: Sim, node: Node, args: list[str], t: float) -> Result:
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


def _ibv_devinfo(sim: Sim, node: Node, args: list[str], t: float) -> Result:
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


def _show_gids(sim: Sim, node: Node, args: list[str], t: float) -> Result:
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


def _ibdev2netdev(sim: Sim, node: Node, args: list[str], t: float) -> Result:
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


def _mlxlink(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    device = args[args.index("-d") + 1] if "-d" in args and args.index("-d") + 1 < len(args) \
        else None
    nic = _nic_by(node, device or "")
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


# GPUs -------------------------------------------------------------------------------------------

def _nvidia_smi(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    if args[:2] == ["topo", "-m"] or args[:2] == ["topo", "--matrix"]:
        return _topo(node), "", 0
    if "-q" in args and "-x" in args:
        return _smi_xml(sim, node, t), "", 0
    if not args:
        return _smi_table(sim, node, t), "", 0
    extra = misconfig.nvidia_smi(sim, node, args, t)
    if extra is not None:
        return extra
    return "", "sim: `nvidia-smi`, `nvidia-smi topo -m` and `nvidia-smi -q -x` are simulated\n", 2


def _smi_table(sim: Sim, node: Node, t: float) -> str:
    """The default `nvidia-smi` table (R550 layout)."""
    rule = "+-----------------------------------------+------------------------+" \
           "----------------------+"
    lines = [time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(sim.epoch + t)),
             "+" + "-" * 89 + "+",
             "| NVIDIA-SMI 550.127.05             Driver Version: 550.127.05     CUDA Version: "
             "12.4     |", rule.replace("+-", "|-", 1),
             "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile "
             "Uncorr. ECC |",
             "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  "
             "Compute M. |",
             "|                                         |                        |           "
             "    MIG M. |",
             "|=========================================+========================+"
             "======================|"]
    for gpu in sorted(node.gpus, key=lambda g: g.index):
        state = sim.gpu(node.hostname, gpu.index, t)
        used = 61_000 if state.utilization_pct else 1
        name = "NVIDIA H100 80GB HBM3"
        lines += [f"| {gpu.index:>3}  {name:<28}On  |   0000{gpu.pci.upper()} Off |"
                  f" {state.ecc_volatile_uncorrectable:>20} |",
                  f"| N/A   {state.temperature_c:>2}C    P0        "
                  f"{round(state.power_w):>5}W /  700W | {used:>8}MiB /  81559MiB | "
                  f"{state.utilization_pct:>6}%      Default |",
                  "|                                         |                        |"
                  "             Disabled |", rule]
    lines += [" " * 89, "+" + "-" * 89 + "+",
              "| Processes:" + " " * 78 + "|",
              "|  GPU   GI   CI        PID   Type   Process name                              "
              "GPU Memory |",
              "|        ID   ID                                                               "
              "Usage      |",
              "|" + "=" * 89 + "|"]
    if sim.job_factor(t) > 0:
        for gpu in sorted(node.gpus, key=lambda g: g.index):
            pid = 41000 + (sim.rank_of(node.hostname, gpu.index) or 0) * 3
            lines.append(f"|  {gpu.index:>3}   N/A  N/A  {pid:>9}      C   "
                         f"{'/usr/bin/python3':<40}{'60988MiB':>10} |")
    else:
        lines.append("|  No running processes found" + " " * 61 + "|")
    lines.append("+" + "-" * 89 + "+")
    return "\n".join(lines) + "\n"


def _dcgmi(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    """`dcgmi diag -r 1|2|3`: a slow node's GPUs fail the thermal part of the stress tests."""
    if args[:1] != ["diag"] or "-r" not in args:
        return "", "Usage: dcgmi diag -r <level>\n", 1
    level = args[args.index("-r") + 1] if args.index("-r") + 1 < len(args) else "1"
    hot = any(f.host == node.hostname for f in sim.active(FaultKind.SLOW_NODE, t))
    rows = [("Deployment", [("Denylist", "Pass"), ("NVML Library", "Pass"),
                            ("CUDA Main Library", "Pass"),
                            ("Permissions and OS Blocks", "Pass"), ("Persistence Mode", "Pass"),
                            ("Environment Variables", "Pass"),
                            ("Page Retirement/Row Remap", "Pass"),
                            ("Graphics Processes", "Pass"), ("Inforom", "Pass")])]
    if level in ("2", "3", "4"):
        rows.append(("Integration", [("PCIe", "Pass - All")]))
        rows.append(("Hardware", [("GPU Memory", "Pass - All"), ("Diagnostic", "Pass - All")]))
    if level in ("3", "4"):
        rows.append(("Stress", [("Targeted Stress", "Pass - All"),
                                ("Targeted Power", "Fail - All" if hot else "Pass - All"),
                                *([("Warning", "GPU 0 Thermal violations totaling 41.2 "
                                   "seconds")] if hot else []),
                                ("Memory Bandwidth", "Pass - All")]))
    edge = "+---------------------------+------------------------------------------------+"
    lines = ["Successfully ran diagnostic for group.", edge,
             "| Diagnostic                | Result                                         |",
             edge.replace("-", "=")]
    for title, items in rows:
        head = f"-----  {title}  "
        lines.append(f"|{head:-<27}+------------------------------------------------|")
        lines += [f"| {name:<25} | {value:<46} |" for name, value in items]
    lines.append(edge)
    return "\n".join(lines) + "\n", "", 0


def _perfquery(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    """perfquery reads InfiniBand PMA counters: on a RoCE port there is no subnet manager."""
    device = args[args.index("-C") + 1] if "-C" in args and args.index("-C") + 1 < len(args) \
        else node.nics[0].name
    return "", (f"ibwarn: [{41000 + len(device)}] mad_rpc_open_port: client_register for mgmt 1 "
                f"failed\nperfquery: iberror: failed: Failed to open '{device}' port '1'\n"), 255


def _topo(node: Node) -> str:
    gpus = sorted(node.gpus, key=lambda g: g.index)
    nics = list(node.nics)
    mapping = gpu_map(node)
    devices = [f"GPU{g.index}" for g in gpus] + [f"NIC{i}" for i in range(len(nics))]
    header = "\t" + "\t".join(devices) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"
    rows = [header]
    numa_cpus = {0: "0-55,112-167", 1: "56-111,168-223"}

    def numa_of(index: int) -> int:
        if index < len(gpus):
            return gpus[index].numa or 0
        return nics[index - len(gpus)].numa or 0

    def relation(i: int, j: int) -> str:
        if i == j:
            return " X "
        if i < len(gpus) and j < len(gpus):
            return "NV18"
        gpu_i, nic_j = (i, j) if i < len(gpus) else (j, i)
        if gpu_i < len(gpus) and nic_j >= len(gpus):
            nic = nics[nic_j - len(gpus)]
            if gpus[gpu_i].index in mapping[nic.name]:
                return "PIX"
        return "NODE" if numa_of(i) == numa_of(j) else "SYS"

    for i, name in enumerate(devices):
        cells = [relation(i, j) for j in range(len(devices))]
        if i < len(gpus):
            numa = gpus[i].numa or 0
            cells += [numa_cpus.get(numa, "0-223"), str(numa), "N/A"]
        rows.append(f"{name}\t" + "\t".join(cells))
    legend = ["", "Legend:", "",
              "  X    = Self",
              "  SYS  = Connection traversing PCIe as well as the SMP interconnect between "
              "NUMA nodes (e.g., QPI/UPI)",
              "  NODE = Connection traversing PCIe as well as the interconnect between PCIe "
              "Host Bridges within a NUMA node",
              "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically "
              "the CPU)",
              "  PXB  = Connection traversing multiple PCIe bridges (without traversing the "
              "PCIe Host Bridge)",
              "  PIX  = Connection traversing at most a single PCIe bridge",
              "  NV#  = Connection traversing a bonded set of # NVLinks", "",
              "NIC Legend:", ""]
    legend += [f"  NIC{i}: {nic.name}" for i, nic in enumerate(nics)]
    return "\n".join(rows + legend) + "\n"


def _smi_xml(sim: Sim, node: Node, t: float) -> str:
    parts = ['<?xml version="1.0" ?>', '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">',
             "<nvidia_smi_log>", "\t<timestamp>Mon Nov 30 00:00:00 2026</timestamp>",
             "\t<driver_version>550.127.05</driver_version>", "\t<cuda_version>12.4</cuda_version>",
             f"\t<attached_gpus>{len(node.gpus)}</attached_gpus>"]
    for gpu in sorted(node.gpus, key=lambda g: g.index):
        state = sim.gpu(node.hostname, gpu.index, t)
        bus = "0000" + gpu.pci  # nvidia-smi prints an 8-digit domain
        reasons = {name: ("Active" if name in state.reasons else "Not Active") for name in (
            "gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown",
            "hw_thermal_slowdown", "hw_power_brake_slowdown", "sync_boost",
            "sw_thermal_slowdown", "display_clock_setting")}
        ecc = "".join(f"\t\t\t<{scope}>\n"
                      f"\t\t\t\t<sram_correctable>{state.ecc_volatile_correctable}</sram_correctable>\n"
                      "\t\t\t\t<sram_uncorrectable_parity>0</sram_uncorrectable_parity>\n"
                      "\t\t\t\t<sram_uncorrectable_secded>0</sram_uncorrectable_secded>\n"
                      "\t\t\t\t<dram_correctable>0</dram_correctable>\n"
                      f"\t\t\t\t<dram_uncorrectable>{state.ecc_volatile_uncorrectable}"
                      f"</dram_uncorrectable>\n\t\t\t</{scope}>\n"
                      for scope in ("volatile", "aggregate"))
        event_xml = "".join(f"\t\t\t<clocks_event_reason_{k}>{v}</clocks_event_reason_{k}>\n"
                            for k, v in reasons.items())
        parts.append(f"""\t<gpu id="{bus}">
\t\t<product_name>NVIDIA H100 80GB HBM3</product_name>
\t\t<product_architecture>Hopper</product_architecture>
\t\t<persistence_mode>Enabled</persistence_mode>
\t\t<mig_mode>
\t\t\t<current_mig>Disabled</current_mig>
\t\t\t<pending_mig>Disabled</pending_mig>
\t\t</mig_mode>
\t\t<serial>165232{int(sim.noise('serial', node.hostname, gpu.index) * 1e7):07d}</serial>
\t\t<uuid>GPU-{int(sim.noise('uuid', node.hostname, gpu.index) * 2**64):016x}-sim</uuid>
\t\t<minor_number>{gpu.index}</minor_number>
\t\t<pci>
\t\t\t<pci_bus_id>{bus}</pci_bus_id>
\t\t\t<pci_gpu_link_info>
\t\t\t\t<pcie_gen>
\t\t\t\t\t<max_link_gen>5</max_link_gen>
\t\t\t\t\t<current_link_gen>5</current_link_gen>
\t\t\t\t\t<device_current_link_gen>5</device_current_link_gen>
\t\t\t\t\t<max_device_link_gen>5</max_device_link_gen>
\t\t\t\t\t<max_host_link_gen>5</max_host_link_gen>
\t\t\t\t</pcie_gen>
\t\t\t\t<link_widths>
\t\t\t\t\t<max_link_width>16x</max_link_width>
\t\t\t\t\t<current_link_width>16x</current_link_width>
\t\t\t\t</link_widths>
\t\t\t</pci_gpu_link_info>
\t\t\t<replay_counter>0</replay_counter>
\t\t\t<replay_rollover_counter>0</replay_rollover_counter>
\t\t</pci>
\t\t<performance_state>P0</performance_state>
\t\t<clocks_event_reasons>
{event_xml}\t\t</clocks_event_reasons>
\t\t<fb_memory_usage>
\t\t\t<total>81559 MiB</total>
\t\t\t<used>{71234 if state.utilization_pct else 0} MiB</used>
\t\t\t<free>{81559 - (71234 if state.utilization_pct else 0)} MiB</free>
\t\t</fb_memory_usage>
\t\t<compute_mode>Default</compute_mode>
\t\t<utilization>
\t\t\t<gpu_util>{state.utilization_pct} %</gpu_util>
\t\t\t<memory_util>{state.utilization_pct // 3} %</memory_util>
\t\t</utilization>
\t\t<ecc_mode>
\t\t\t<current_ecc>Enabled</current_ecc>
\t\t\t<pending_ecc>Enabled</pending_ecc>
\t\t</ecc_mode>
\t\t<ecc_errors>
{ecc}\t\t</ecc_errors>
\t\t<remapped_rows>
\t\t\t<remapped_row_corr>0</remapped_row_corr>
\t\t\t<remapped_row_unc>0</remapped_row_unc>
\t\t\t<remapped_row_pending>No</remapped_row_pending>
\t\t\t<remapped_row_failure>No</remapped_row_failure>
\t\t</remapped_rows>
\t\t<temperature>
\t\t\t<gpu_temp>{state.temperature_c} C</gpu_temp>
\t\t\t<memory_temp>{state.temperature_c - 6} C</memory_temp>
\t\t</temperature>
\t\t<gpu_power_readings>
\t\t\t<power_state>P0</power_state>
\t\t\t<power_draw>{state.power_w:.2f} W</power_draw>
\t\t\t<current_power_limit>700.00 W</current_power_limit>
\t\t</gpu_power_readings>
\t\t<clocks>
\t\t\t<graphics_clock>{state.sm_clock_mhz} MHz</graphics_clock>
\t\t\t<sm_clock>{state.sm_clock_mhz} MHz</sm_clock>
\t\t\t<mem_clock>{state.mem_clock_mhz} MHz</mem_clock>
\t\t</clocks>
\t\t<max_clocks>
\t\t\t<graphics_clock>{state.sm_clock_max_mhz} MHz</graphics_clock>
\t\t\t<sm_clock>{state.sm_clock_max_mhz} MHz</sm_clock>
\t\t\t<mem_clock>{state.mem_clock_mhz} MHz</mem_clock>
\t\t</max_clocks>
\t</gpu>""")
    parts.append("</nvidia_smi_log>")
    return "\n".join(parts) + "\n"


# nccl-tests -------------------------------------------------------------------------------------

_FACTORS: dict[str, Callable[[int], float]] = {
    "all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n,
    "sendrecv": lambda n: 1.0, "broadcast": lambda n: 1.0, "reduce": lambda n: 1.0}
"""busbw / algbw per collective for n ranks (nccl-tests doc/PERFORMANCE.md)."""


def _size(text: str) -> int:
    match = re.fullmatch(r"(\d+)([KMG]?)", text.upper())
    if match is None:
        raise ValueError(text)
    return int(match.group(1)) * {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[match.group(2)]


def _nccl_tests(sim: Sim, node: Node, argv: list[str], t: float) -> Result:
    """Single node, or `mpirun ... -H a:8,b:8 ... X_perf` / `srun ... --nodelist=... X_perf`."""
    launcher = argv[0].rsplit("/", 1)[-1]
    nodes = [node.hostname]
    prefix = ""
    launch_argv = list(argv)
    pxn = "NCCL_PXN_DISABLE=1" not in argv  # mpirun -x NCCL_PXN_DISABLE=1
    if launcher in ("mpirun", "srun"):
        nodes = _launch_nodes(sim, argv) or [node.hostname]
        prefix = "[1,0]<stdout>:" if launcher == "mpirun" else "0: "
        binary_at = next((i for i, a in enumerate(argv) if a.endswith("_perf")), None)
        if binary_at is None:
            return "", f"{launcher}: no program to run\n", 1
        argv = argv[binary_at:]
    binary = argv[0].rsplit("/", 1)[-1]
    collective = binary.removesuffix("_perf")
    if collective not in _FACTORS:
        return "", f"bash: {argv[0]}: command not found\n", 127
    options = _options(argv[1:])
    try:
        low, high = _size(options.get("-b", "8")), _size(options.get("-e", "128M"))
    except ValueError:
        return "", "Invalid size\n", 1
    gpus_per_proc = int(options.get("-g", "1"))
    ranks = len(nodes) * 8 if launcher in ("mpirun", "srun") else gpus_per_proc
    hung = sim.active(FaultKind.NCCL_HANG, t) and len(nodes) > 1
    lines = ["# nccl-tests version 2.17.1 nccl-headers=22705 nccl-library=22705",
             f"# Collective test starting: {binary}",
             f"# nThread 1 nGpus {gpus_per_proc} minBytes {low} maxBytes {high} step: 2(factor)"
             f" warmup iters: 5 iters: {options.get('-n', '20')} agg iters: 1 validation: "
             f"{options.get('-c', '1')} graph: 0", "#", "# Using devices"]
    for rank in range(ranks):
        host = nodes[rank // 8] if launcher in ("mpirun", "srun") else node.hostname
        gpu = sim.graph.nodes[host].gpus[rank % 8]
        pid = 40000 + rank * 7
        lines.append(f"#  Rank {rank:2d} Group  0 Pid {pid:6d} on {host:>10} device {rank % 8:2d} "
                     f"[{gpu.pci[:-2]}] NVIDIA H100 80GB HBM3")
    lines += ["#",
              "#                                                              out-of-place"
              "                       in-place          ",
              "#       size         count      type   redop    root     time   algbw   busbw"
              " #wrong     time   algbw   busbw #wrong",
              "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
              "            (us)  (GB/s)  (GB/s)       "]
    factor = _FACTORS[collective](max(ranks, 2))
    size, busbws = low, []
    while size <= high:
        if hung:
            break
        count = size // 4 if collective not in ("all_gather", "alltoall", "reduce_scatter") \
            else size // 4 // max(ranks, 1)
        busbw = sim.busbw(nodes, t, size, collective=collective, pxn=pxn)
        if len(nodes) > 1:  # fewer NICs under NCCL_IB_HCA: the network part shrinks with them
            busbw *= misconfig.hca_share(sim, nodes, launch_argv, t)
        algbw = busbw / factor if factor else busbw
        time_us = size / (algbw * 1e3) if algbw else 0.0
        redop = "sum" if collective in ("all_reduce", "reduce_scatter", "reduce") else "none"
        root = "0" if collective in ("broadcast", "reduce") else "-1"
        cells = f"{size:12d}  {count:12d}     float    {redop:>4}  {root:>6}"
        place = f"{time_us:8.2f} {algbw:7.2f} {busbw:7.2f}  {0:5d}"
        lines.append(f"{cells}  {place}  {place}")
        busbws.append(busbw)
        size *= 2
    if hung:
        stuck = next((f.host for f in sim.active(FaultKind.NCCL_HANG, t) if f.host in nodes),
                     nodes[-1])
        pid = 40000 + 7 * 8 * nodes.index(stuck)
        lines += [f"{stuck}: Test NCCL failure common.cu:1159 'remote process exited or"
                  " there was a network error / '", f" .. {stuck} pid {pid}: Test failure "
                  "common.cu:1044"]
        out = "\n".join(prefix + line for line in lines) + "\n"
        return out, "", 3
    average = sum(busbws) / len(busbws) if busbws else 0.0
    lines += ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {average:.4f} ", "#",
              f"# Collective test concluded: {binary}", "#"]
    return "\n".join(prefix + line for line in lines) + "\n", "", 0


_PERFTEST_FLAGS = frozenset({"-F", "--report_gbits", "-a", "--all", "-b", "--bidirectional",
                             "-R", "--rdma_cm", "--run_infinitely", "-z", "--com_rdma_cm"})
"""perftest options that take no value."""


def _options(args: list[str], flags: frozenset[str] = frozenset()) -> dict[str, str]:
    options, i = {}, 0
    while i < len(args):
        if args[i] in flags or "=" in args[i]:
            name, _, value = args[i].partition("=")
            options[name] = value
            i += 1
        elif args[i].startswith("-") and i + 1 < len(args):
            options[args[i]] = args[i + 1]
            i += 2
        else:
            i += 1
    return options


def _launch_nodes(sim: Sim, argv: list[str]) -> list[str]:
    for i, arg in enumerate(argv):
        if arg in ("-H", "--host") and i + 1 < len(argv):
            return [h.split(":")[0] for h in argv[i + 1].split(",") if h]
        if arg.startswith("--nodelist="):
            return _expand_nodelist(arg.split("=", 1)[1], sim)
    return []


def _expand_nodelist(text: str, sim: Sim) -> list[str]:
    """`node[001-004]` or `node001,node002` (Slurm host lists), only the fabric's nodes."""
    try:
        names = expand(text)
    except HostlistError:
        return []
    return [h for h in names if h in sim.graph.nodes]


# perftest ---------------------------------------------------------------------------------------

_PERFTEST = {"ib_write_bw": ("RDMA_Write", "bw"), "ib_read_bw": ("RDMA_Read", "bw"),
             "ib_send_bw": ("Send", "bw"), "ib_write_lat": ("RDMA_Write", "lat"),
             "ib_send_lat": ("Send", "lat")}


def _perftest(tool: str) -> Callable[[Sim, Node, list[str], float], Result]:
    def run_tool(sim: Sim, node: Node, args: list[str], t: float) -> Result:
        test, kind = _PERFTEST[tool]
        options = _options(args, _PERFTEST_FLAGS)
        server_side = not args or args[-1].startswith("-") or args[-1] in options.values()
        device = options.get("-d") or node.nics[0].name
        nic = _nic_by(node, device)
        if nic is None:
            return "", f" Couldn't find IB device {device}\n", 1
        peer = None if server_side else args[-1]
        if peer is not None and peer not in sim.graph.nodes:
            return "", f" Couldn't connect to {peer}:18515\n", 1
        gbits = "--report_gbits" in args
        size = int(options.get("-s", "65536"))
        lines = []
        if server_side:
            lines += ["", "************************************",
                      "* Waiting for client to connect... *",
                      "************************************"]
        lines += ["-" * 87, f"                    {test} {'BW' if kind == 'bw' else 'Latency'} "
                  "Test",
                  f" Dual-port       : OFF\t\tDevice         : {nic.name}",
                  " Number of qps   : 1\t\tTransport type : IB",
                  " Connection type : RC\t\tUsing SRQ      : OFF",
                  " PCIe relax order: ON", " ibv_wr* API     : ON",
                  f" {'RX' if server_side else 'TX'} depth        : "
                  f"{512 if server_side else 128}",
                  " CQ Moderation   : 1", " Mtu             : 4096[B]",
                  " Link type       : Ethernet", f" GID index       : {options.get('-x', '3')}",
                  " Max inline data : 0[B]", " rdma_cm QPs\t : OFF",
                  " Data ex. method : Ethernet", "-" * 87]
        if kind == "bw":
            unit = "Gb/sec" if gbits else "MB/sec"
            lines.append(f" #bytes     #iterations    BW peak[{unit}]    BW average[{unit}]"
                         "   MsgRate[Mpps]")
            rate = _pair_rate(sim, node, nic, peer, t, args)
            value = rate if gbits else rate * 1000 / 8
            peak = 0.0 if server_side else value * 1.01
            msg_rate = value / size / (8 / 1e9 if gbits else 1 / 1e6) / 1e6 if size else 0.0
            lines.append(f" {size:<10d} {int(options.get('-n', '5000')):<10d}       "
                         f"{peak:.2f}            {value:.2f}\t\t   {msg_rate:.6f}")
        else:
            lines.append(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]"
                         "    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   "
                         "99.9% percentile[usec] ")
            base = 2.6 + 0.3 * sim.noise("lat", node.hostname, nic.name)
            lines.append(f" {size:<6d} {int(options.get('-n', '1000')):<10d}    "
                         f"{base - 0.3:.2f}           {base + 4.1:.2f}         {base:.2f}"
                         f"              {base + 0.04:.2f}           {0.05:.2f}            "
                         f"{base + 0.4:.2f}                   {base + 2.7:.2f}")
        lines.append("-" * 87)
        return "\n".join(lines) + "\n", "", 0

    return run_tool


def _pair_rate(sim: Sim, node: Node, nic: Nic, peer: str | None, t: float,
               args: list[str]) -> float:
    """Gb/s one QP pair reaches: line rate, less what faults take."""
    attachment = sim.graph.attachments.get((node.hostname, nic.name))
    if attachment is None or not sim.link_up(attachment.link_index, t):
        return 0.0
    # What fabtui.topology.expected calls the RoCE write ceiling, within half a per cent.
    rate = sim.rdma_ceiling(nic.speed) * (0.995 + 0.01 * sim.noise("perf", node.hostname,
                                                                     nic.name, peer))
    cuda = any(a.startswith("--use_cuda") for a in args)
    for host in (node.hostname, peer):
        if cuda and any(f.host == host for f in sim.active(FaultKind.GDR_OFF, t)):
            rate *= 0.5  # GPU memory through a host bounce buffer (perftest #241)
    for fault in sim.active(FaultKind.PFC_STORM, t):
        # The storming NIC (client side, or the same rail's NIC of the server) holds the flow.
        if fault.nic == nic.name and fault.host in (node.hostname, peer):
            rate *= 0.1
    return rate


# logs -------------------------------------------------------------------------------------------

def _read_file(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    paths = [a for a in args if not a.startswith("-") and not a.isdigit()
             and not re.fullmatch(r"\d+[KMG]?", a)]
    if not paths:
        return "", "usage: cat FILE\n", 1
    path = paths[-1]
    from fabtui.sim.logs import job_log, rank_log

    if path == f"{LOG_DIR}/job.log":
        return job_log(sim, t), "", 0
    match = re.fullmatch(re.escape(LOG_DIR) + r"/rank-(\d+)\.log", path)
    if match:
        text = rank_log(sim, int(match.group(1)), node.hostname, t)
        if text is not None:
            return text, "", 0
    config = misconfig.read_file(sim, node, path, t)
    if config is not None:
        return config, "", 0
    return "", f"cat: {path}: No such file or directory\n", 1


def _dmesg(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    from fabtui.sim.logs import kernel_log

    human = any(a in ("-T", "--ctime") for a in args)
    return kernel_log(sim, node.hostname, t, human=human), "", 0


def _lsmod(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    loaded = not any(f.host == node.hostname for f in sim.active(FaultKind.GDR_OFF, t))
    users = "nvidia_peermem," if loaded else ""
    modules = ["Module                  Size  Used by", "mlx5_ib               462848  0",
               f"ib_uverbs             184320  {2 if loaded else 1} {users}mlx5_ib",
               "mlx5_core            2134016  1 mlx5_ib",
               f"nvidia              56729600  {312 if loaded else 311} nvidia_uvm,{users}"
               "nvidia_modeset"]
    if loaded:
        modules.insert(1, "nvidia_peermem         16384  0")
    return "\n".join(modules) + "\n", "", 0


def _simple(output: str, status: int = 0) -> Callable[[Sim, Node, list[str], float], Result]:
    def answer(sim: Sim, node: Node, args: list[str], t: float) -> Result:
        return output.format(host=node.hostname, args=" ".join(args)), "", status

    return answer


def _echo(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    return " ".join(args) + "\n", "", 0


def _sh(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    """`sh -c 'a; b'`: the commands of a simple script, one after another (no pipes; `;`,
    `&&` and newlines separate commands)."""
    if len(args) < 2 or args[0] != "-c":
        return "", "sh: only `sh -c SCRIPT` is simulated\n", 2
    out, err, status = [], [], 0
    for part in re.split(r"\s*(?:;|&&|\n)\s*", args[1]):
        if not part.strip():
            continue
        o, e, status = run(sim, node.hostname, shlex.split(part), t)
        out.append(o)
        err.append(e)
    return "".join(out), "".join(err), status


_COMMANDS: dict[str, Callable[[Sim, Node, list[str], float], Result]] = {
    "ethtool": _ethtool, "rdma": _rdma, "show_counters": _show_counters, "ibstat": _ibstat,
    "ibv_devinfo": _ibv_devinfo, "show_gids": _show_gids, "ibdev2netdev": _ibdev2netdev,
    "mlxlink": _mlxlink, "nvidia-smi": _nvidia_smi, "tail": _read_file, "cat": _read_file,
    "dmesg": _dmesg, "dcgmi": _dcgmi, "perfquery": _perfquery,
    "lsmod": _lsmod, "hostname": _simple("{host}\n"), "true": _simple(""),
    "false": _simple("", 1), "echo": _echo, "sh": _sh, "pkill": _simple("", 1),
    "uptime": _simple(" 10:00:00 up 42 days,  3:12,  0 users,  load average: 12.1, 12.3, 12.2\n"),
    **{tool: _perftest(tool) for tool in _PERFTEST},
    **misconfig.COMMANDS,
    **scheduler.COMMANDS,
}
