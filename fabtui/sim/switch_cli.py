"""What a simulated switch's CLI prints, per flavor, in the vendor's own layout.

`reply(sim, switch, command, t)` answers one command line as the switch OS would (its text, and
whether the CLI rejected it); `serve` wraps that in an interactive session with the vendor's
prompt, echo and pager for `python -m fabtui.sim switch --name X`. Supported commands:

- SONiC: `show interfaces counters [-i PORT]`, `show interfaces counters fec-stats`,
  `show interfaces counters fec-histogram PORT`,
  `show pfc counters [--history]`, `show pfcwd stats|config`, `show queue counters [PORT]`,
  `show interfaces transceiver eeprom --dom [PORT]`, `show lldp table`,
  `show interfaces status`;
- Arista EOS: `show interfaces [PORT]`, `show interfaces counters errors`, `show interfaces
  transceiver`, `show interfaces PORT transceiver detail`, `show lldp neighbors`,
  `terminal length|width N`;
- NVIDIA NVUE (Cumulus): `nv show interface PORT counters`, `nv show interface`.

Anything else gets the vendor's error reply.
"""

from __future__ import annotations

import math
import re
import shlex
import time
from collections.abc import Iterator

from fabtui.model.topology import Switch, long_port_name
from fabtui.sim import misconfig, switch_syslog
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
    PortCounters,
    Sim,
)

Reply = tuple[str, bool]
"""(text, rejected): what the CLI printed and whether it refused the command."""


def ports(sim: Sim, switch: str) -> list[str]:
    """The switch's cabled ports, in the order the switch lists them."""
    return sim.switch_ports(switch)


def prompt(switch: Switch) -> str:
    """The prompt the switch shows when it waits for a command."""
    flavor = switch.flavor.value
    if flavor == "sonic":
        return f"admin@{switch.name}:~$ "
    if flavor == "nvue":
        return f"cumulus@{switch.name}:mgmt:~$ "
    return f"{switch.name}#"


def reply(sim: Sim, switch: Switch, command: str, t: float) -> Reply:
    """Answer one command line on `switch` at time `t`."""
    flavor = switch.flavor.value
    line = command.strip()
    if not line:
        return "", False
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    if flavor == "sonic":
        names = ports(sim, switch.name)
        extra = misconfig.switch_reply(sim, switch, words, t, names) or \
            switch_syslog.reply(sim, switch, words, t, names)
        return extra if extra is not None else _sonic(sim, switch, words, t)
    if flavor == "nvue":
        return _nvue(sim, switch, words, t)
    if flavor == "eos":
        return _eos(sim, switch, words, t)
    return f"% Unrecognized command \"{line}\"\n", True


def admin_command(sim: Sim, switch: Switch, command: str) -> tuple[str, bool] | None:
    """(port, up) when `command` shuts or starts a port: SONiC `[sudo] config interface
    shutdown|startup PORT`, NVUE `nv set interface PORT link state down|up`."""
    words = command.split()
    if words[:1] == ["sudo"]:
        words = words[1:]
    if switch.flavor.value == "sonic" and words[:2] == ["config", "interface"] and \
            len(words) == 4 and words[2] in ("shutdown", "startup"):
        port = _port_arg(sim, switch, words[3])
        return (port, words[2] == "startup") if port else None
    if switch.flavor.value == "nvue" and words[:3] == ["nv", "set", "interface"] and \
            words[4:6] == ["link", "state"] and len(words) == 7 and words[6] in ("up", "down"):
        port = _port_arg(sim, switch, words[3])
        return (port, words[6] == "up") if port else None
    return None


# shared numbers ---------------------------------------------------------------------------------

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


def _counters(sim: Sim, switch: Switch, t: float,
              only: str | None = None) -> Iterator[tuple[str, PortCounters]]:
    """(port, its counters at t) for every cabled port, or just `only`."""
    for port in ports(sim, switch.name):
        if only is not None and port != only:
            continue
        counters = sim.port_counters(switch, port, t)
        if counters is not None:
            yield port, counters


def _port_arg(sim: Sim, switch: Switch, name: str) -> str | None:
    wanted = long_port_name(name)
    return wanted if wanted in ports(sim, switch.name) else None


# SONiC -----------------------------------------------------------------------------------------

def _sonic(sim: Sim, switch: Switch, words: list[str], t: float) -> Reply:
    program = words[0]
    if program in ("export", "true", "stty", "unset"):
        return "", False
    if program == "clear":
        return "\x1b[H\x1b[2J", False
    if program == "hostname":
        return switch.name + "\n", False
    if program not in ("show", "sudo"):
        return f"-bash: {program}: command not found\n", True
    if program == "sudo":
        words = words[1:]
    args = words[1:]
    if args[:2] == ["interfaces", "counters"]:
        rest = args[2:]
        if rest[:1] == ["fec-stats"]:
            return _sonic_fec(sim, switch, t), False
        if rest[:1] == ["fec-histogram"]:
            port = _port_arg(sim, switch, rest[1]) if len(rest) > 1 else None
            if port is None:
                return ("Usage: show interfaces counters fec-histogram [OPTIONS] INTERFACENAME"
                        "\nTry \"show interfaces counters fec-histogram -h\" for help.\n\n"
                        "Error: Missing argument \"INTERFACENAME\".\n"
                        if len(rest) < 2 else f"Invalid interface name {rest[1]}\n"), True
            return _sonic_fec_histogram(sim, switch, port, t), False
        if rest and rest[0] not in ("-i", "--interface", "-a", "--printall"):
            return _click_error("show interfaces counters", rest[0]), True
        only = rest[rest.index("-i") + 1] if "-i" in rest and rest.index("-i") + 1 < len(rest) \
            else None
        if only is not None and _port_arg(sim, switch, only) is None:
            return f"Invalid interface name {only}\n", True
        return _sonic_counters(sim, switch, t, only), False
    if args[:2] == ["pfc", "counters"]:
        if "--history" in args[2:]:
            return _sonic_pfc_history(sim, switch, t), False
        return _sonic_pfc(sim, switch, t), False
    if args[:2] == ["pfcwd", "stats"]:
        return _sonic_pfcwd_stats(sim, switch, t), False
    if args[:2] == ["pfcwd", "config"]:
        return _sonic_pfcwd_config(sim, switch, t), False
    if args[:2] == ["queue", "counters"]:
        only = args[2] if len(args) > 2 else None
        if only is not None and _port_arg(sim, switch, only) is None:
            return f"Port doesn't exist! {only}\n", True
        return _sonic_queues(sim, switch, t, only), False
    if args[:3] == ["interfaces", "transceiver", "eeprom"]:
        rest = [a for a in args[3:] if a not in ("--dom", "-d")]
        only = rest[0] if rest else None
        if only is not None and _port_arg(sim, switch, only) is None:
            return f"Error: Invalid interface name {only}\n", True
        return _sonic_eeprom(sim, switch, t, only), False
    if args[:2] == ["lldp", "table"]:
        return _sonic_lldp(sim, switch, t), False
    if args[:2] == ["interfaces", "status"]:
        return _sonic_status(sim, switch, t), False
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


def _sonic_counters(sim: Sim, switch: Switch, t: float, only: str | None) -> str:
    headers = ["IFACE", "STATE", "RX_OK", "RX_BPS", "RX_PPS", "RX_UTIL", "RX_ERR", "RX_DRP",
               "RX_OVR", "TX_OK", "TX_BPS", "TX_PPS", "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR"]
    rows = []
    wanted = _port_arg(sim, switch, only) if only else None
    for port, c in _counters(sim, switch, t, wanted):
        util = c.rx_bps / (c.speed_gbps * 1e9) * 100
        rows.append([port, "U" if c.up else "D", _n(c.rx_ok), _rate(c.rx_bps),
                     f"{c.rx_bps / 8 / FRAME:.2f}/s", f"{util:.2f}%", _n(c.rx_err),
                     _n(c.rx_drp), "0", _n(c.tx_ok), _rate(c.tx_bps),
                     f"{c.tx_bps / 8 / FRAME:.2f}/s", f"{util:.2f}%", _n(c.tx_err),
                     _n(c.tx_drp), "0"])
    return _table(headers, rows)


def _sonic_fec(sim: Sim, switch: Switch, t: float) -> str:
    headers = ["IFACE", "STATE", "FEC_CORR", "FEC_UNCORR", "FEC_SYMBOL_ERR", "FEC_PRE_BER",
               "FEC_POST_BER"]
    rows = []
    for port, c in _counters(sim, switch, t):
        rows.append([port, "U" if c.up else "D", _n(c.fec_corr), _n(c.fec_uncorr),
                     _n(c.fec_symbol_err), f"{c.pre_ber:.2e}" if c.up else "N/A",
                     f"{c.post_ber:.2e}" if c.up else "N/A"])
    return _table(headers, rows)


def _sonic_fec_histogram(sim: Sim, switch: Switch, port: str, t: float) -> str:
    """Codewords by the number of symbol errors corrected (BIN0..BIN15), as portstat prints
    them: the same integrals as fec-stats (FEC_CORR is BIN1..BIN15)."""
    link = sim.real_link(switch.name, port, t)
    bins = sim.receiver_counts(link, switch.name, port, t)[3] if link is not None else ()
    rows = [[f"BIN{i}", str(value)] for i, value in enumerate(bins)]
    return _table(["Symbol Errors Per Codeword", "Codewords"], rows)


def _sonic_pfc(sim: Sim, switch: Switch, t: float) -> str:
    out = []
    for direction, title in (("rx", "Port Rx"), ("tx", "Port Tx")):
        rows = []
        for port, c in _counters(sim, switch, t):
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


def _sonic_pfcwd_stats(sim: Sim, switch: Switch, t: float) -> str:
    """`show pfcwd stats`: the watchdog's lossless queue on every cabled port."""
    headers = ["QUEUE", "STATUS", "STORM DETECTED/RESTORED", "TX OK/DROP", "RX OK/DROP",
               "TX LAST OK/DROP", "RX LAST OK/DROP"]
    rows = []
    for port, c in _counters(sim, switch, t):
        windows = sim.pfcwd_windows(switch.name, port, t)
        stormed = any(end is None for _, end in windows)
        restored = sum(1 for _, end in windows if end is not None)
        drops = queue_drops(sim, switch.name, port, t)
        last = int(_stormed_time(windows[-1:], t) * PFCWD_DROP_PPS) if windows else 0
        rows.append([f"{port}:{PRIORITY}", "stormed" if stormed else "operational",
                     f"{len(windows)}/{restored}", f"{c.tx_ok}/{drops}", f"{c.rx_ok}/{drops}",
                     f"0/{last}", f"0/{last}"])
    return _table(headers, rows)


def _sonic_pfcwd_config(sim: Sim, switch: Switch, t: float) -> str:
    """`show pfcwd config`: the defaults (drop, 200 ms detection and restoration)."""
    rows = [[port, "drop", f"{PFCWD_DETECTION_S * 1000:.0f}",
             f"{PFCWD_RESTORATION_S * 1000:.0f}", "disable"] for port in ports(sim, switch.name)]
    return "Changed polling interval to 200ms\n" + _table(
        ["PORT", "ACTION", "DETECTION TIME", "RESTORATION TIME", "HISTORY"], rows)


def _sonic_pfc_history(sim: Sim, switch: Switch, t: float) -> str:
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


def _sonic_queues(sim: Sim, switch: Switch, t: float, only: str | None) -> str:
    headers = ["Port", "TxQ", "Counter/pkts", "Counter/bytes", "Drop/pkts", "Drop/bytes"]
    rows = []
    wanted = _port_arg(sim, switch, only) if only else None
    for port, c in _counters(sim, switch, t, wanted):
        for queue in range(16):
            name = f"UC{queue}" if queue < 8 else f"MC{queue}"
            if queue == 3:
                packets, data = c.tx_ok, c.tx_bytes
                drops = queue_drops(sim, switch.name, port, t)
            else:
                data = sim.base("q", switch.name, port, queue, scale=1e7) if queue in (0, 6) \
                    else 0
                packets, drops = data // 300, 0
            rows.append([port, name, _n(packets), _n(data), _n(drops), _n(drops * FRAME)])
    return "For namespace :\n" + _table(headers, rows, right={2, 3, 4, 5})


def _dbm(value: float | None) -> str:
    return "-infdBm" if value is None else f"{value:.4f}dBm"


def _sonic_eeprom(sim: Sim, switch: Switch, t: float, only: str | None) -> str:
    wanted = _port_arg(sim, switch, only) if only else None
    out = []
    for port in ports(sim, switch.name):
        if wanted is not None and port != wanted:
            continue
        dom = sim.dom(switch.name, port, t)
        if dom is None:
            out.append(f"{port}: SFP EEPROM Not detected\n")
            continue
        lines = [f"{port}: SFP EEPROM detected",
                 "        Application Advertisement: 400GAUI-8 C2M (Annex 120E) - Host Assign "
                 "(0x1) - 400GBASE-DR4 (Cl 124) - Media Assign (0x1)",
                 "        CMIS Rev: 5.0", "        Connector: MPO 1x12",
                 "        Host Lane Count: 8",
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


def _neighbors(sim: Sim, switch: Switch, t: float) -> list[tuple[str, str, str, str]]:
    """(local port, neighbor device, neighbor port id, its description) per cabled port."""
    rows = []
    for port in ports(sim, switch.name):
        seen = sim.neighbor(switch.name, port, t)
        if seen is None:
            continue
        device, far_port = seen
        node = sim.graph.nodes.get(device)
        if node is not None:
            nic = next((n for n in node.nics if far_port in (n.netdev, n.name)), None)
            rows.append((port, device, far_port, nic.name if nic else far_port))
        else:
            rows.append((port, device, far_port, far_port))
    return rows


def _sonic_lldp(sim: Sim, switch: Switch, t: float) -> str:
    rows = [[port, device, far, "O" if device in sim.graph.nodes else "BR", descr]
            for port, device, far, descr in _neighbors(sim, switch, t)]
    table = _table(["LocalPort", "RemoteDevice", "RemotePortID", "Capability",
                    "RemotePortDescr"], rows, right=set())
    return ("Capability codes: (R) Router, (B) Bridge, (O) Other\n" + table
            + "-" * 50 + f"\nTotal entries displayed:  {len(rows)}\n")


def _sonic_status(sim: Sim, switch: Switch, t: float) -> str:
    rows = []
    for port, c in _counters(sim, switch, t):
        state = "up" if c.up else "down"
        rows.append([port, "0,1,2,3,4,5,6,7", f"{c.speed_gbps}G", "9100", "rs", port, "routed",
                     state, "up", "OSFP 8X Pluggable Transceiver", "N/A"])
    return _table(["Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper",
                   "Admin", "Type", "Asym PFC"], rows, right=set())


# Arista EOS -----------------------------------------------------------------------------------

def _eos_short(port: str) -> str:
    return re.sub(r"^Ethernet", "Et", port)


def _eos(sim: Sim, switch: Switch, words: list[str], t: float) -> Reply:
    lowered = [w.lower() for w in words]
    if lowered[:1] in (["terminal"], ["term"]) and len(words) >= 3 and \
            lowered[1] in ("length", "width", "len"):
        if lowered[1] in ("length", "len"):
            return "Pagination disabled.\n" if words[2] == "0" else "", False
        return f"Width set to {words[2]} columns.\n", False
    if lowered[:1] in (["enable"], ["en"], ["exit"], ["end"]):
        return "", False
    if lowered[:1] not in (["show"], ["sh"]):
        return _eos_invalid(words, 0), True
    args = lowered[1:]
    if args[:1] in (["interfaces"], ["interface"], ["int"]):
        rest = words[2:]
        lower_rest = [w.lower() for w in rest]
        if not rest:
            return _eos_interfaces(sim, switch, t, None), False
        if lower_rest[:2] == ["counters", "errors"]:
            return _eos_counters_errors(sim, switch, t), False
        if lower_rest[:1] == ["transceiver"]:
            return _eos_transceiver(sim, switch, t), False
        port = _port_arg(sim, switch, rest[0])
        if port is None:
            return _eos_invalid(words, 2), True
        if lower_rest[1:3] == ["transceiver", "detail"]:
            return _eos_transceiver_detail(sim, switch, t, port), False
        if len(rest) == 1:
            return _eos_interfaces(sim, switch, t, port), False
        return _eos_invalid(words, 3), True
    if args[:2] == ["lldp", "neighbors"]:
        return _eos_lldp(sim, switch, t), False
    if args[:1] == ["version"]:
        return ("Arista DCS-7800R3-36P-LC\nHardware version: 11.00\nSoftware image version: "
                "4.31.2F\nArchitecture: x86_64\n"), False
    return _eos_invalid(words, 1), True


def _eos_invalid(words: list[str], at: int) -> str:
    token = words[at] if at < len(words) else ""
    return f"% Invalid input (at token {at}: '{token}')\n"


def _eos_interfaces(sim: Sim, switch: Switch, t: float, only: str | None) -> str:
    out = []
    for port, c in _counters(sim, switch, t, only):
        mac = f"{int(sim.noise('mac', switch.name) * 2**24):06x}"
        address = f"001c.73{mac[:2]}.{mac[2:]}"
        state = "up, line protocol is up (connected)" if c.up else \
            "down, line protocol is down (notconnect)"
        far = sim.neighbor(switch.name, port, t)
        description = f"{far[0]}:{far[1]}" if far else ""
        rate_in = int(c.rx_bps)
        rate_out = int(c.tx_bps)
        pps_in = int(c.rx_bps / 8 / FRAME)
        pps_out = int(c.tx_bps / 8 / FRAME)
        load = c.rx_bps / (c.speed_gbps * 1e9) * 100
        out += [f"{port} is {state}",
                f"  Hardware is Ethernet, address is {address} (bia {address})",
                f"  Description: {description}",
                "  Ethernet MTU 9214 bytes, BW 400000000 kbit",
                f"  Full-duplex, {c.speed_gbps}Gb/s, auto negotiation: off, uni-link: "
                "disabled",
                "  Up 42 days, 3 hours, 12 minutes, 5 seconds" if c.up else
                "  Down 14 seconds",
                "  Loopback Mode : None",
                f"  {2 * c.link_down_events + 1} link status changes since last clear",
                "  Last clearing of \"show interface\" counters never",
                f"  5 minutes input rate {rate_in} bps ({load:.1f}% with framing overhead), "
                f"{pps_in} packets/sec",
                f"  5 minutes output rate {rate_out} bps ({load:.1f}% with framing overhead), "
                f"{pps_out} packets/sec",
                f"     {c.rx_ok} packets input, {c.rx_bytes} bytes",
                "     Received 0 broadcasts, 0 multicast",
                "     0 runts, 0 giants",
                f"     {c.rx_err} input errors, {c.rx_err} CRC, 0 alignment, "
                f"{c.fec_uncorr} symbol, {c.rx_drp} input discards",
                f"     {sum(c.rx_pfc)} PAUSE input",
                f"     {c.tx_ok} packets output, {c.tx_bytes} bytes",
                "     Sent 0 broadcasts, 0 multicast",
                f"     {c.tx_err} output errors, 0 collisions",
                f"     0 late collision, 0 deferred, {c.tx_drp} output discards",
                f"     {sum(c.tx_pfc)} PAUSE output"]
    return "\n".join(out) + "\n"


def _eos_counters_errors(sim: Sim, switch: Switch, t: float) -> str:
    lines = [f"{'Port':<12}{'FCS':>10}{'Align':>11}{'Symbol':>11}{'Rx':>11}{'Runts':>11}"
             f"{'Giants':>11}{'Tx':>11}"]
    for port, c in _counters(sim, switch, t):
        lines.append(f"{_eos_short(port):<12}{c.rx_err:>10}{0:>11}{c.fec_uncorr:>11}"
                     f"{c.rx_err:>11}{0:>11}{0:>11}{c.tx_err:>11}")
    return "\n".join(lines) + "\n"


def _eos_number(value: float | None) -> str:
    return "N/A" if value is None or math.isinf(value) else f"{value:.2f}"


def _eos_transceiver(sim: Sim, switch: Switch, t: float) -> str:
    lines = ["If device is externally calibrated, only calibrated values are printed.",
             "N/A: not applicable, Tx: transmit, Rx: receive.",
             "mA: milliamperes, dBm: decibels (milliwatts).",
             "                               Bias      Optical   Optical",
             "          Temp       Voltage   Current   Tx Power  Rx Power",
             "Port      (Celsius)  (Volts)   (mA)      (dBm)     (dBm)     Last Update",
             "-----     ---------  --------  --------  --------  --------  -------------------"]
    for port in ports(sim, switch.name):
        dom = sim.dom(switch.name, port, t)
        if dom is None:
            continue
        for lane in range(4):
            name = f"{_eos_short(port)}/{lane + 1}" if "/" not in port else \
                f"{_eos_short(port).rsplit('/', 1)[0]}/{lane + 1}"
            lines.append(f"{name:<10}{dom.temperature_c:<11.2f}{dom.voltage_v:<10.2f}"
                         f"{dom.tx_bias_ma[lane]:<10.2f}{_eos_number(dom.tx_power_dbm[lane]):<10}"
                         f"{_eos_number(dom.rx_power_dbm[lane]):<10}0:00:03 ago")
    return "\n".join(lines) + "\n"


def _eos_transceiver_detail(sim: Sim, switch: Switch, t: float, port: str) -> str:
    dom = sim.dom(switch.name, port, t)
    if dom is None:
        return ""
    base = _eos_short(port).rsplit("/", 1)[0] if "/" in port else _eos_short(port)
    lanes = [f"{base}/{lane + 1}" for lane in range(4)]
    header = ["mA: milliamperes, dBm: decibels (milliwatts), NA or N/A: not applicable.",
              "++ : high alarm, +  : high warning, -  : low warning, -- : low alarm.",
              "A2D readouts (if they differ), are reported in parentheses.",
              "The threshold values are calibrated."]
    sections: list[tuple[str, str, list[float | None], tuple[float, ...]]] = [
        ("Temperature", "(Celsius)", [dom.temperature_c] * 4,
         (TEMP_HIGH_ALARM, TEMP_HIGH_WARNING, -5.0, 0.0)),
        ("Voltage", "(Volts)", [dom.voltage_v] * 4, (3.6, 3.5, 3.0, 3.1)),
        ("Current", "(mA)", list(dom.tx_bias_ma[:4]),
         (BIAS_HIGH_ALARM, BIAS_HIGH_WARNING, BIAS_LOW_ALARM, BIAS_LOW_WARNING)),
        ("Tx Power", "(dBm)", list(dom.tx_power_dbm[:4]),
         (TX_HIGH_ALARM, TX_HIGH_WARNING, TX_LOW_ALARM, TX_LOW_WARNING)),
        ("Rx Power", "(dBm)", list(dom.rx_power_dbm[:4]),
         (RX_HIGH_ALARM, RX_HIGH_WARNING, RX_LOW_ALARM, RX_LOW_WARNING)),
    ]
    lines = list(header)
    for title, unit, values, limits in sections:
        lines += ["                         High Alarm  High Warn   Low Alarm   Low Warn",
                  f"           {title:<14}Threshold   Threshold   Threshold   Threshold",
                  f"Port       {unit:<14}{unit:<12}{unit:<12}{unit:<12}{unit:<12}".rstrip(),
                  "-------    ------------  ----------  ----------  ----------  ----------"]
        for lane, value in zip(lanes, values, strict=True):
            cells = "".join(f"{limit:<12.2f}" for limit in limits)
            lines.append(f"{lane:<11}{_eos_number(value):<14}{cells}".rstrip())
    return "\n".join(lines) + "\n"


def _eos_lldp(sim: Sim, switch: Switch, t: float) -> str:
    rows = _neighbors(sim, switch, t)
    lines = ["Last table change time   : 0:12:51 ago", f"Number of table inserts  : {len(rows)}",
             "Number of table deletes  : 0", "Number of table drops    : 0",
             "Number of table age-outs : 0", "",
             "Port          Neighbor Device ID       Neighbor Port ID    TTL",
             "---------- ------------------------ ---------------------- ---"]
    for port, device, far, _ in rows:
        lines.append(f"{_eos_short(port):<11}{device:<25}{far:<23}120")
    return "\n".join(lines) + "\n"


# NVUE -----------------------------------------------------------------------------------------

def _nvue(sim: Sim, switch: Switch, words: list[str], t: float) -> Reply:
    program = words[0]
    if program in ("export", "true", "stty", "unset"):
        return "", False
    if program != "nv":
        return f"-bash: {program}: command not found\n", True
    args = words[1:]
    if args[:2] == ["config", "apply"]:
        return "applied\n", False
    if args[:2] != ["show", "interface"]:
        token = args[0] if args else ""
        return (f"Error: '{token}' is not one of ['show', 'set', 'unset', 'config', "
                "'action']\n"), True
    rest = args[2:]
    if not rest:
        return _nvue_summary(sim, switch, t), False
    port = _port_arg(sim, switch, rest[0])
    if port is None:
        return "Error: The requested item does not exist.\n", True
    if rest[1:] == ["counters"]:
        return _nvue_counters(sim, switch, port, t), False
    return f"Error: '{rest[-1]}' is not one of ['counters', 'link', 'lldp', 'pluggable']\n", True


def _nvue_summary(sim: Sim, switch: Switch, t: float) -> str:
    lines = ["Interface  MTU   Speed  State  Remote Host      Remote Port    Type      Summary",
             "---------  ----  -----  -----  ---------------  -------------  --------  -------"]
    for port, c in _counters(sim, switch, t):
        far = sim.neighbor(switch.name, port, t) or ("", "")
        lines.append(f"{port:<11}9216  {c.speed_gbps}G   {'up' if c.up else 'down':<7}"
                     f"{far[0]:<17}{far[1]:<15}swp")
    return "\n".join(lines) + "\n"


def _nvue_counters(sim: Sim, switch: Switch, port: str, t: float) -> str:
    found = next(_counters(sim, switch, t, port), None)
    if found is None:
        return ""
    c = found[1]

    def section(title: str, rows: list[tuple[str, str, str]]) -> list[str]:
        width = max(len("Counter"), *(len(r[0]) for r in rows))
        return ["", title, "=" * (len(title) + 4),
                f"    {'Counter':<{width}}  Receive  Transmit",
                f"    {'-' * width}  -------  --------",
                *[f"    {name:<{width}}  {rx:<7}  {tx:<8}" for name, rx, tx in rows]]

    lines = ["                     operational  applied",
             "-------------------  -----------  -------",
             f"carrier-transitions  {2 * c.link_down_events:<11}"]
    lines += section("Detailed Counters", [
        ("Broadcast Packets", "0", "0"), ("Multicast Packets", "0", "0"),
        ("Total Octets", str(c.rx_bytes), str(c.tx_bytes)),
        ("Total Packets", str(c.rx_ok), str(c.tx_ok)),
        ("Unicast Packets", str(c.rx_ok), str(c.tx_ok))])
    lines += section("Drop Counters", [
        ("ACL Drops", "0", "n/a"), ("Buffer Drops", str(c.rx_drp), "n/a"),
        ("Non-Queue Drops", "n/a", "0"), ("Queue Drops", "n/a", str(c.tx_drp)),
        ("Total Drops", str(c.rx_drp), str(c.tx_drp))])
    lines += section("Error Counters", [
        ("Alignment Errors", "0", "n/a"), ("FCS Errors", str(c.rx_err), "n/a"),
        ("Jabber Errors", "0", "n/a"), ("Length Errors", "0", "n/a"),
        ("Oversize Errors", "0", "n/a"), ("Symbol Errors", str(c.fec_uncorr), "n/a"),
        ("Total Errors", str(c.rx_err), str(c.tx_err)), ("Undersize Errors", "0", "n/a")])
    lines += section("PFC Counters", [
        (f"Priority {i} Pause", str(c.rx_pfc[i]), str(c.tx_pfc[i])) for i in range(8)])
    return "\n".join(lines) + "\n"

