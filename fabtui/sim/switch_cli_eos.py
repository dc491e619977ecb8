"""What a simulated Arista EOS switch prints, in EOS's own layouts.

`show interfaces [PORT]`, `show interfaces counters errors`, `show interfaces transceiver`,
`show interfaces PORT transceiver detail`, `show lldp neighbors`, `show version`,
`terminal length|width N`; anything else gets `% Invalid input`.
"""

from __future__ import annotations

import math
import re

from fabtui.model.topology import Switch
from fabtui.sim import misconfig
from fabtui.sim.core import (
    BIAS_HIGH_ALARM,
    BIAS_HIGH_WARNING,
    BIAS_LOW_ALARM,
    BIAS_LOW_WARNING,
    FRAME,
    PFCWD_DETECTION_S,
    PFCWD_RESTORATION_S,
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
from fabtui.sim.switch_cli_common import Reply, counters, neighbors, port_arg, ports


def _eos_short(port: str) -> str:
    return re.sub(r"^Ethernet", "Et", port)


def reply(sim: Sim, switch: Switch, words: list[str], t: float) -> Reply:
    """Answer one EOS command line (its words) on `switch` at time `t`."""
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
            return switch_counters(sim, switch, t, None), False
        if lower_rest[:2] == ["counters", "errors"]:
            return switch_counters_errors(sim, switch, t), False
        if lower_rest[:1] == ["transceiver"]:
            return transceiver_dom(sim, switch, t), False
        port = port_arg(sim, switch, rest[0])
        if port is None:
            return _eos_invalid(words, 2), True
        if lower_rest[1:3] == ["transceiver", "detail"]:
            return transceiver_dom_detail(sim, switch, t, port), False
        if len(rest) == 1:
            return switch_counters(sim, switch, t, port), False
        return _eos_invalid(words, 3), True
    if args[:2] == ["lldp", "neighbors"]:
        return lldp_neighbors(sim, switch, t), False
    if args[:1] == ["version"]:
        return switch_version(sim, switch, t), False
    if args == ["running-config"]:
        return eos_running_config(sim, switch, t), False
    return _eos_invalid(words, 1), True


def _eos_invalid(words: list[str], at: int) -> str:
    token = words[at] if at < len(words) else ""
    return f"% Invalid input (at token {at}: '{token}')\n"


def switch_counters(sim: Sim, switch: Switch, t: float, only: str | None) -> str:
    out = []
    for port, c in counters(sim, switch, t, only):
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


def switch_counters_errors(sim: Sim, switch: Switch, t: float) -> str:
    lines = [f"{'Port':<12}{'FCS':>10}{'Align':>11}{'Symbol':>11}{'Rx':>11}{'Runts':>11}"
             f"{'Giants':>11}{'Tx':>11}"]
    for port, c in counters(sim, switch, t):
        lines.append(f"{_eos_short(port):<12}{c.rx_err:>10}{0:>11}{c.fec_uncorr:>11}"
                     f"{c.rx_err:>11}{0:>11}{0:>11}{c.tx_err:>11}")
    return "\n".join(lines) + "\n"


def _eos_number(value: float | None) -> str:
    return "N/A" if value is None or math.isinf(value) else f"{value:.2f}"


def transceiver_dom(sim: Sim, switch: Switch, t: float) -> str:
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


def transceiver_dom_detail(sim: Sim, switch: Switch, t: float, port: str) -> str:
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


def lldp_neighbors(sim: Sim, switch: Switch, t: float) -> str:
    rows = neighbors(sim, switch, t)
    lines = ["Last table change time   : 0:12:51 ago", f"Number of table inserts  : {len(rows)}",
             "Number of table deletes  : 0", "Number of table drops    : 0",
             "Number of table age-outs : 0", "",
             "Port          Neighbor Device ID       Neighbor Port ID    TTL",
             "---------- ------------------------ ---------------------- ---"]
    for port, device, far, _ in rows:
        lines.append(f"{_eos_short(port):<11}{device:<25}{far:<23}120")
    return "\n".join(lines) + "\n"


def switch_version(sim: Sim, switch: Switch, t: float) -> str:
    """`show version`: the model line and the software image version (misconfig
    `os_version`, else `EOS_VERSION`), in EOS's layout (tests/fixtures/switch-version)."""
    version = misconfig.setting(sim, switch.name, "os_version", t) or misconfig.EOS_VERSION
    return ("Arista DCS-7800R3-36P-LC\nHardware version: 11.00\n\n"
            f"Software image version: {version}\nArchitecture: x86_64\n")


def eos_running_config(sim: Sim, switch: Switch, t: float) -> str:
    """`show running-config`: the header, hostname and the spine's lossless QoS in EOS's layout
    (tests/fixtures/eos-running-config), from its settings (`misconfig.setting`: lossless
    priorities, DSCP map, ECN thresholds; PFC watchdog as the sim's): what a drift check
    compares with the rendered `eos-qos.cfg`."""
    name = switch.name
    version = misconfig.setting(sim, name, "os_version", t) or misconfig.EOS_VERSION
    rdma, cnp = misconfig.setting(sim, name, "dscp_rdma", t), misconfig.setting(sim, name,
                                                                                "dscp_cnp", t)
    lossless = [int(p) for p in misconfig.setting(sim, name, "pfc", t) or []]
    marks = misconfig.setting(sim, name, "ecn", t) != "ecn_none"
    low, high = misconfig.setting(sim, name, "ecn_min_kb", t), misconfig.setting(
        sim, name, "ecn_max_kb", t)
    chance = misconfig.setting(sim, name, "ecn_probability", t)
    out = ["! Command: show running-config",
           f"! device: {name} (DCS-7800R3-36P-LC, EOS-{version})", "!",
           "service routing protocols model multi-agent", "!", f"hostname {name}", "!",
           f"qos map dscp {rdma} to traffic-class 3", f"qos map dscp {cnp} to traffic-class 6",
           "!", f"priority-flow-control pause watchdog default timeout "
                f"{PFCWD_DETECTION_S:g}",
           f"priority-flow-control pause watchdog default recovery-time "
           f"{PFCWD_RESTORATION_S:g}", "priority-flow-control pause watchdog action drop"]
    for port in ports(sim, name):
        out += ["!", f"interface {port}", f"   mtu {switch.mtu or 9216}", "   no switchport",
                "   qos trust dscp", "   priority-flow-control on"]
        out += [f"   priority-flow-control priority {p} no-drop" for p in lossless]
        out.append("   tx-queue 3")
        if marks:
            out.append(f"      random-detect ecn minimum-threshold {low} kbytes "
                       f"maximum-threshold {high} kbytes max-mark-probability {chance}")
    out += ["!", "ip routing", "!", "end"]
    return "\n".join(out) + "\n"
