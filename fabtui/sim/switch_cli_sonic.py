"""What a simulated SONiC switch prints: bash around the `show` commands, in portstat's,
pfcstat's, pfcwd's, queuestat's, sfputil's and lldpshow's own layouts (`tabulate` tables).

`show interfaces counters [-i PORT]`, `show interfaces counters fec-stats`, `show interfaces
counters fec-histogram PORT`, `show pfc counters [--history]`, `show pfcwd stats|config`,
`show queue counters [PORT]`, `show interfaces transceiver eeprom --dom [PORT]`,
`show lldp table`, `show interfaces status`, `show runningconfiguration all` (CONFIG_DB as
JSON, `sim.config_db`); anything else gets click's or bash's error.
`queue_drops` is what the PFC watchdog dropped on a port's lossless queue; `_deadlock_held` what
a lossless queue did not send while a PFC deadlock held its port paused.
"""

from __future__ import annotations

import time
import zlib

from fabtui.model.topology import Switch
from fabtui.sim import config_db, misconfig
from fabtui.sim.core import (
    BIAS_HIGH_ALARM,
    BIAS_HIGH_WARNING,
    BIAS_LOW_ALARM,
    BIAS_LOW_WARNING,
    FRAME,
    PFCWD_DETECTION_S,
    PFCWD_RESTORATION_S,
    PRIORITY,
    RX_HIGH_ALARM,
    RX_HIGH_WARNING,
    RX_LOW_ALARM,
    RX_LOW_WARNING,
    TEMP_HIGH_ALARM,
    TEMP_HIGH_WARNING,
    TX_HIGH_ALARM,
    TX_HIGH_WARNING,
    TX_LOW_ALARM,
    TX_LOW_WARNING,
    Sim,
)
from fabtui.sim.scenario import FaultKind
from fabtui.sim.switch_cli_common import Reply, counters, neighbors, port_arg, ports


def _n(value: int) -> str:
    return f"{value:,}"


def _rate(bps: float) -> str:
    """SONiC portstat's byte rate: `12.34 MB/s`."""
    value = bps / 8
    for unit in ("B/s", "KB/s", "MB/s", "GB/s"):
        if value < 1000 or unit == "GB/s":
            return f"{value:.2f} {unit}"
        value /= 1000
    return f"{value:.2f} GB/s"


def reply(sim: Sim, switch: Switch, words: list[str], t: float) -> Reply:
    """Answer one SONiC command line (its words) on `switch` at time `t`."""
    program = words[0]
    if program in ("export", "true", "stty", "unset"):
        return "", False
    if program == "clear":
        return "\x1b[H\x1b[2J", False
    if program == "hostname":
        return switch.name + "\n", False
    if words[:1] == ["mmuconfig"] and "-l" in words:
        return buffer_profiles(sim, switch, t), False
    if program not in ("show", "sudo"):
        return f"-bash: {program}: command not found\n", True
    if program == "sudo":
        words = words[1:]
    args = words[1:]
    if args[:2] == ["interfaces", "counters"]:
        rest = args[2:]
        if rest[:1] == ["fec-stats"]:
            return fec_stats(sim, switch, t), False
        if rest[:1] == ["fec-histogram"]:
            port = port_arg(sim, switch, rest[1]) if len(rest) > 1 else None
            if port is None:
                return ("Usage: show interfaces counters fec-histogram [OPTIONS] INTERFACENAME"
                        "\nTry \"show interfaces counters fec-histogram -h\" for help.\n\n"
                        "Error: Missing argument \"INTERFACENAME\".\n"
                        if len(rest) < 2 else f"Invalid interface name {rest[1]}\n"), True
            return fec_stats_histogram(sim, switch, port, t), False
        if rest and rest[0] not in ("-i", "--interface", "-a", "--printall"):
            return _click_error("show interfaces counters", rest[0]), True
        only = rest[rest.index("-i") + 1] if "-i" in rest and rest.index("-i") + 1 < len(rest) \
            else None
        if only is not None and port_arg(sim, switch, only) is None:
            return f"Invalid interface name {only}\n", True
        return switch_counters(sim, switch, t, only), False
    if args[:2] == ["pfc", "counters"]:
        if "--history" in args[2:]:
            return pfc_counters_history(sim, switch, t), False
        return pfc_counters(sim, switch, t), False
    if args[:2] == ["pfcwd", "stats"]:
        return pfcwd(sim, switch, t), False
    if args[:2] == ["pfcwd", "config"]:
        return pfcwd_config(sim, switch, t), False
    if args[:2] == ["queue", "wredcounters"]:
        only = args[2] if len(args) > 2 else None
        if only is not None and port_arg(sim, switch, only) is None:
            return f"Port doesn't exist! {only}\n", True
        return queue_counters_wred(sim, switch, t, only), False
    if args[:2] == ["queue", "counters"]:
        only = args[2] if len(args) > 2 else None
        if only is not None and port_arg(sim, switch, only) is None:
            return f"Port doesn't exist! {only}\n", True
        return queue_counters(sim, switch, t, only), False
    if args[:3] == ["interfaces", "transceiver", "eeprom"]:
        rest = [a for a in args[3:] if a not in ("--dom", "-d")]
        only = rest[0] if rest else None
        if only is not None and port_arg(sim, switch, only) is None:
            return f"Error: Invalid interface name {only}\n", True
        return transceiver_dom(sim, switch, t, only), False
    if args[:2] == ["lldp", "table"]:
        return lldp_neighbors(sim, switch, t), False
    if args[:2] == ["interfaces", "status"]:
        return _sonic_status(sim, switch, t), False
    if args == ["runningconfiguration", "all"]:
        return sonic_config_db(sim, switch, t), False
    if args == ["version"]:
        return switch_version(sim, switch, t), False
    if len(args) >= 2 and args[0] in ("interfaces", "pfc", "pfcwd", "queue", "lldp"):
        return _click_error(f"show {args[0]}", args[1]), True
    return _click_error("show", args[0] if args else ""), True


def _click_error(group: str, token: str) -> str:
    return (f"Usage: {group} [OPTIONS] COMMAND [ARGS]...\nTry \"{group} -h\" for help.\n\n"
            f"Error: No such command \"{token}\".\n")


def _table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> str:
    """A `tabulate`-style table as SONiC's show commands print it."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    right = right if right is not None else set(range(1, len(headers)))

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    lines = [fmt(headers), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in rows]
    return "\n".join(lines) + "\n"


def switch_counters(sim: Sim, switch: Switch, t: float, only: str | None) -> str:
    headers = ["IFACE", "STATE", "RX_OK", "RX_BPS", "RX_PPS", "RX_UTIL", "RX_ERR", "RX_DRP",
               "RX_OVR", "TX_OK", "TX_BPS", "TX_PPS", "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR"]
    rows = []
    wanted = port_arg(sim, switch, only) if only else None
    for port, c in counters(sim, switch, t, wanted):
        util = c.rx_bps / (c.speed_gbps * 1e9) * 100
        rows.append([port, "U" if c.up else "D", _n(c.rx_ok), _rate(c.rx_bps),
                     f"{c.rx_bps / 8 / FRAME:.2f}/s", f"{util:.2f}%", _n(c.rx_err),
                     _n(c.rx_drp), "0", _n(c.tx_ok), _rate(c.tx_bps),
                     f"{c.tx_bps / 8 / FRAME:.2f}/s", f"{util:.2f}%", _n(c.tx_err),
                     _n(c.tx_drp), "0"])
    return _table(headers, rows)


def fec_stats(sim: Sim, switch: Switch, t: float) -> str:
    headers = ["IFACE", "STATE", "FEC_CORR", "FEC_UNCORR", "FEC_SYMBOL_ERR", "FEC_PRE_BER",
               "FEC_POST_BER"]
    rows = []
    for port, c in counters(sim, switch, t):
        rows.append([port, "U" if c.up else "D", _n(c.fec_corr), _n(c.fec_uncorr),
                     _n(c.fec_symbol_err), f"{c.pre_ber:.2e}" if c.up else "N/A",
                     f"{c.post_ber:.2e}" if c.up else "N/A"])
    return _table(headers, rows)


def fec_stats_histogram(sim: Sim, switch: Switch, port: str, t: float) -> str:
    """Codewords by the number of symbol errors corrected (BIN0..BIN15), as portstat prints
    them: the same integrals as fec-stats (FEC_CORR is BIN1..BIN15)."""
    link = sim.real_link(switch.name, port, t)
    bins = sim.receiver_counts(link, switch.name, port, t)[3] if link is not None else ()
    rows = [[f"BIN{i}", str(value)] for i, value in enumerate(bins)]
    return _table(["Symbol Errors Per Codeword", "Codewords"], rows)


def pfc_counters(sim: Sim, switch: Switch, t: float) -> str:
    out = []
    for direction, title in (("rx", "Port Rx"), ("tx", "Port Tx")):
        rows = []
        for port, c in counters(sim, switch, t):
            values = c.rx_pfc if direction == "rx" else c.tx_pfc
            rows.append([port, *(_n(v) for v in values)])
        out.append(_table([title, *(f"PFC{i}" for i in range(8))], rows))
    return "\n".join(out)


PFCWD_DROP_PPS = 5000.0
"""Packets/s a stormed lossless queue drops (pfcwd action drop) in each direction."""


def _stormed_time(windows: list[tuple[float, float | None]], t: float) -> float:
    return sum(max(0.0, (t if end is None else min(end, t)) - start) for start, end in windows)


def queue_drops(sim: Sim, switch: str, port: str, t: float) -> int:
    """Packets PFC watchdog dropped on the lossless queue of a port while it was stormed."""
    return int(_stormed_time(sim.pfcwd_windows(switch, port, t), t) * PFCWD_DROP_PPS)


def _deadlock_held(sim: Sim, switch: str, port: str, t: float) -> int:
    """Bytes the lossless queue of `switch:port` did not send by `t` because a PFC deadlock held
    the port paused (the port waits on the far switch around the loop): a deadlocked queue makes
    no transmit progress, and once pfcwd storms it what arrives is dropped, not sent."""
    link = sim.real_link(switch, port, t)
    held = 0
    for fault in sim.faults:
        if fault.kind is not FaultKind.PFC_DEADLOCK or link is None or not any(
                w == switch and c == link for w, _, c in sim.deadlock_cycle(fault)):
            continue
        end = min(t, fault.spec.until if fault.spec.until is not None else t)
        if end > fault.spec.at:
            held += sim.bytes_moved(link, end) - sim.bytes_moved(link, fault.spec.at)
    return held


def pfcwd(sim: Sim, switch: Switch, t: float) -> str:
    """`show pfcwd stats`: the watchdog's lossless queue on every cabled port."""
    headers = ["QUEUE", "STATUS", "STORM DETECTED/RESTORED", "TX OK/DROP", "RX OK/DROP",
               "TX LAST OK/DROP", "RX LAST OK/DROP"]
    rows = []
    for port, c in counters(sim, switch, t):
        windows = sim.pfcwd_windows(switch.name, port, t)
        stormed = any(end is None for _, end in windows)
        restored = sum(1 for _, end in windows if end is not None)
        drops = queue_drops(sim, switch.name, port, t)
        last = int(_stormed_time(windows[-1:], t) * PFCWD_DROP_PPS) if windows else 0
        rows.append([f"{port}:{PRIORITY}", "stormed" if stormed else "operational",
                     f"{len(windows)}/{restored}", f"{c.tx_ok}/{drops}", f"{c.rx_ok}/{drops}",
                     f"0/{last}", f"0/{last}"])
    return _table(headers, rows)


def pfcwd_config(sim: Sim, switch: Switch, t: float) -> str:
    """`show pfcwd config`: the defaults (drop, 200 ms detection and restoration)."""
    rows = [[port, "drop", f"{PFCWD_DETECTION_S * 1000:.0f}",
             f"{PFCWD_RESTORATION_S * 1000:.0f}", "disable"] for port in ports(sim, switch.name)]
    return "Changed polling interval to 200ms\n" + _table(
        ["PORT", "ACTION", "DETECTION TIME", "RESTORATION TIME", "HISTORY"], rows)


def pfc_counters_history(sim: Sim, switch: Switch, t: float) -> str:
    """`show pfc counters --history`: pause transitions and the time each priority was held
    paused (us), measured, not inferred from frame counts."""
    rows = []
    for port in ports(sim, switch.name):
        link = sim.real_link(switch.name, port, t)
        if link is None:
            continue
        def held(x: float, lk: int = link) -> float:
            return sim.pause_duration_rate(switch.name, lk, x)[0]

        def frames_at(x: float, lk: int = link, p: str = port) -> float:
            return sim.pause_rates(switch.name, p, lk, x)[0]

        paused = sim.integrate(held, t, link)
        frames = sim.integrate(frames_at, t, link)
        for priority in range(8):
            if priority == PRIORITY and paused:
                stamp = time.strftime("%m/%d/%Y, %H:%M:%S", time.gmtime(sim.epoch + t))
                rows.append([port, f"PFC{priority}", _n(int(frames // 20)), _n(int(paused)),
                             _n(int(min(paused, 1e6))), stamp])
            else:
                rows.append([port, f"PFC{priority}", "0", "0", "0", "N/A"])
    return _table(["Port", "Priority", "RX Pause Transitions", "Total RX Pause Time US",
                   "Recent RX Pause Time US", "Recent RX Pause Timestamp"], rows)


def queue_counters(sim: Sim, switch: Switch, t: float, only: str | None) -> str:
    headers = ["Port", "TxQ", "Counter/pkts", "Counter/bytes", "Drop/pkts", "Drop/bytes"]
    rows = []
    wanted = port_arg(sim, switch, only) if only else None
    for port, c in counters(sim, switch, t, wanted):
        for queue in range(16):
            name = f"UC{queue}" if queue < 8 else f"MC{queue}"
            if queue == 3:
                data = c.tx_bytes - _deadlock_held(sim, switch.name, port, t)
                packets = data // FRAME
                drops = queue_drops(sim, switch.name, port, t)
            else:
                data = sim.base("q", switch.name, port, queue, scale=1e7) if queue in (0, 6) \
                    else 0
                packets, drops = data // 300, 0
            rows.append([port, name, _n(packets), _n(data), _n(drops), _n(drops * FRAME)])
    return "For namespace :\n" + _table(headers, rows, right={2, 3, 4, 5})


def queue_counters_wred(sim: Sim, switch: Switch, t: float, only: str | None) -> str:
    """`show queue wredcounters [PORT]`: WRED drops and ECN-marked packets per queue, one table
    per port (sonic-utilities queuestat `--wredcounters`). The lossless queue UC3 of a host
    port marks what its NIC counts as received marked (`np_ecn_marked_roce_packets`); an
    uplink of a leaf another job congests marks half as much again; a leaf whose WRED profile
    marks nothing counts 0. WRED drops nothing on the ECN-enabled lossless queue."""
    wanted = port_arg(sim, switch, only) if only else None
    headers = ["Port", "TxQ", "WredDrp/pkts", "WredDrp/bytes", "EcnMarked/pkts",
               "EcnMarked/bytes"]
    out = []
    for port in ports(sim, switch.name):
        if wanted is not None and port != wanted:
            continue
        marked = _marked(sim, switch, port, t)
        rows = []
        for queue in range(16):
            name = f"UC{queue}" if queue < 8 else f"MC{queue}"
            count = marked if queue == PRIORITY else 0
            rows.append([port, name, "0", "0", _n(count), _n(count * FRAME)])
        out.append(_table(headers, rows, right=set(range(6))))
    return "\n".join(out) + "\n"


def _marked(sim: Sim, switch: Switch, port: str, t: float) -> int:
    """ECN-marked packets the switch sent out of `port`'s lossless queue over [0, t]."""
    seen = sim.neighbor(switch.name, port, t)
    link = sim.real_link(switch.name, port, t)
    if seen is None:
        return 0
    node = sim.graph.nodes.get(seen[0])
    if node is not None:
        nic = next((n for n in node.nics if seen[1] in (n.netdev, n.name)), None)
        if nic is None:
            return 0
        return int(sim.integrate(lambda x: sim.congestion(node.hostname, nic, x)[0], t, link))

    def uplink(x: float) -> float:
        if not sim.ecn_marking(switch.name, x):
            return 0.0
        busy = any(f.switch == switch.name for f in sim.active(FaultKind.INTERFERENCE, x))
        return 26000.0 if busy else 4.0 * (0.5 + sim.noise("ecn-up", switch.name, port))
    return int(sim.integrate(uplink, t, link))


def _dbm(value: float | None) -> str:
    return "-infdBm" if value is None else f"{value:.4f}dBm"


def transceiver_dom(sim: Sim, switch: Switch, t: float, only: str | None) -> str:
    wanted = port_arg(sim, switch, only) if only else None
    out = []
    for port in ports(sim, switch.name):
        if wanted is not None and port != wanted:
            continue
        dom = sim.dom(switch.name, port, t)
        if dom is None:
            out.append(f"{port}: SFP EEPROM Not detected\n")
            continue
        lines = [f"{port}: SFP EEPROM detected",
                 # One 400G half of a twin-port OSFP (optics.SWITCH_PART): 4 host lanes of
                 # 100G-PAM4 (IEEE 802.3ck Annex 120G), one DR4 over an MPO-12.
                 "        Application Advertisement: 400GAUI-4 C2M (Annex 120G) - Host Assign "
                 "(0x1) - 400GBASE-DR4 (Cl 124) - Media Assign (0x1)",
                 "        CMIS Rev: 5.0", "        Connector: MPO 1x12",
                 "        Host Lane Count: 4",
                 "        Identifier: OSFP 8X Pluggable Transceiver",
                 "        Media Interface Code: 400GBASE-DR4 (Cl 124)",
                 "        Media Lane Count: 4",
                 f"        Vendor Name: {dom.vendor}", "        Vendor OUI: 48-b0-2d",
                 f"        Vendor PN: {dom.part_number}", "        Vendor Rev: A3",
                 f"        Vendor SN: {dom.serial}", "        ChannelMonitorValues:"]
        for lane in range(len(dom.rx_power_dbm)):
            lines.append(f"                RX{lane + 1}Power: {_dbm(dom.rx_power_dbm[lane])}")
        for lane in range(len(dom.tx_bias_ma)):
            dark = dom.tx_power_dbm[lane] is None
            lines.append(f"                TX{lane + 1}Bias: "
                         f"{0.0 if dark else dom.tx_bias_ma[lane]:.4f}mA")
            lines.append(f"                TX{lane + 1}Power: {_dbm(dom.tx_power_dbm[lane])}")
        lines += ["        ChannelThresholdValues:",
                  f"                RxPowerHighAlarm  : {RX_HIGH_ALARM:.4f}dBm",
                  f"                RxPowerHighWarning: {RX_HIGH_WARNING:.4f}dBm",
                  f"                RxPowerLowAlarm   : {RX_LOW_ALARM:.4f}dBm",
                  f"                RxPowerLowWarning : {RX_LOW_WARNING:.4f}dBm",
                  f"                TxBiasHighAlarm   : {BIAS_HIGH_ALARM:.4f}mA",
                  f"                TxBiasHighWarning : {BIAS_HIGH_WARNING:.4f}mA",
                  f"                TxBiasLowAlarm    : {BIAS_LOW_ALARM:.4f}mA",
                  f"                TxBiasLowWarning  : {BIAS_LOW_WARNING:.4f}mA",
                  f"                TxPowerHighAlarm  : {TX_HIGH_ALARM:.4f}dBm",
                  f"                TxPowerHighWarning: {TX_HIGH_WARNING:.4f}dBm",
                  f"                TxPowerLowAlarm   : {TX_LOW_ALARM:.4f}dBm",
                  f"                TxPowerLowWarning : {TX_LOW_WARNING:.4f}dBm",
                  "        ModuleMonitorValues:",
                  f"                Temperature: {dom.temperature_c:.4f}C",
                  f"                Vcc: {dom.voltage_v:.4f}Volts",
                  "        ModuleThresholdValues:",
                  f"                TempHighAlarm  : {TEMP_HIGH_ALARM:.4f}C",
                  f"                TempHighWarning: {TEMP_HIGH_WARNING:.4f}C",
                  "                TempLowAlarm   : -5.0000C",
                  "                TempLowWarning : 0.0000C",
                  "                VccHighAlarm   : 3.4650Volts",
                  "                VccHighWarning : 3.4500Volts",
                  "                VccLowAlarm    : 3.1350Volts",
                  "                VccLowWarning  : 3.1500Volts", ""]
        out.append("\n".join(lines) + "\n")
    return "".join(out)


def lldp_neighbors(sim: Sim, switch: Switch, t: float) -> str:
    rows = [[port, device, far, "O" if device in sim.graph.nodes else "BR", descr]
            for port, device, far, descr in neighbors(sim, switch, t)]
    table = _table(["LocalPort", "RemoteDevice", "RemotePortID", "Capability",
                    "RemotePortDescr"], rows, right=set())
    return ("Capability codes: (R) Router, (B) Bridge, (O) Other\n" + table
            + "-" * 50 + f"\nTotal entries displayed:  {len(rows)}\n")


def _lanes(port: str, index: int) -> str:
    """The port's own serdes lanes, as SONiC lists them (port_config.ini): an 8-lane OSFP port
    named EthernetN holds lanes N..N+7 (sonic-utilities tests/intfutil_test.py and sonic-mgmt's
    msn2700 capture: Ethernet0 `0,1,2,3`, Ethernet4 `4,5,6,7`, each port its own lanes)."""
    digits = port.removeprefix("Ethernet")
    first = int(digits) if digits.isdigit() else index * 8
    return ",".join(str(first + lane) for lane in range(8))


def _sonic_status(sim: Sim, switch: Switch, t: float) -> str:
    rows: list[list[str]] = []
    for port, c in counters(sim, switch, t):
        state = "up" if c.up else "down"
        rows.append([port, _lanes(port, len(rows)), f"{c.speed_gbps}G", "9100", "rs", port,
                     "routed", state, "up", "OSFP 8X Pluggable Transceiver", "N/A"])
    return _table(["Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper",
                   "Admin", "Type", "Asym PFC"], rows, right=set())


def buffer_profiles(sim: Sim, switch: Switch, t: float) -> str:
    """`mmuconfig -l`: the buffer profiles, their lossless xoff per cable length
    (fabtui.sim.misconfig keeps the settings a scenario can change)."""
    return misconfig.mmuconfig(sim, switch, t)


def sonic_config_db(sim: Sim, switch: Switch, t: float) -> str:
    """`show runningconfiguration all`: the leaf's CONFIG_DB as JSON (`sim.config_db`)."""
    return config_db.running_config(sim, switch, t, ports(sim, switch.name))


def switch_version(sim: Sim, switch: Switch, t: float) -> str:
    """`show version`: the image, platform and HwSKU in sonic-utilities' layout
    (tests/fixtures/switch-version), the Docker table cut to two rows."""
    version = misconfig.setting(sim, switch.name, "os_version", t) or misconfig.SONIC_VERSION
    platform, hwsku, model = misconfig.SONIC_PLATFORM
    return (f"SONiC Software Version: SONiC.{version}\nDistribution: Debian 11.8\n"
            "Kernel: 5.10.0-23-2-amd64\nBuild commit: 8c08d87\n"
            "Build date: Thu Nov 16 14:23:00 UTC 2023\nBuilt by: sonicbld@sonic-build\n\n"
            f"Platform: {platform}\nHwSKU: {hwsku}\nASIC: mellanox\nASIC Count: 1\n"
            f"Serial Number: MT2302X0{zlib.crc32(switch.name.encode()) % 10000:04d}\n"
            f"Model Number: {model}\nHardware Rev: A1\n"
            "Uptime: 10:00:00 up 42 days,  3:12,  1 user,  load average: 1.02, 1.10, 1.08\n\n"
            "Docker images:\nREPOSITORY                 TAG                 IMAGE ID"
            "            SIZE\n"
            f"docker-syncd-mlnx          {version:<20}434240daff6e        362MB\n"
            f"docker-orchagent           {version:<20}e4f9c4631025        287MB\n")
