"""`mlxlink -d DEV [-m] [-c] [--rx_fec_histogram --show_histogram] [--pc]` on a simulated node:
port state, the NIC's own module (`-m`), the BER counters (`-c`), the FEC histogram of what the
NIC receives (codewords by symbols corrected, BIN0..BIN15 of RS(544,514), as the switch end's
`fec-histogram` counts them), and `--pc`, which clears the port's counters.

The BER counters and the FEC histogram count since the last clear, as mlxlink's `Time Since
Last Clear` says (`--pc` clears PPCNT, every group: mstflint mlxlink_commander.h
`PPCNT_CLEAR_FLAG "pc"`, MlxlinkCommander::clearCounters with `PPCNT_ALL_GROUPS`, or group by
group, the histogram group 0x23 among them, mlxlink_maps.cpp `initPpcntGroupsMapping`). The
sim's `ethtool -S` still counts from the scenario's start (mlx5 reads the same PPCNT groups, so
a real NIC's PHY counters restart too): a delta read after the clear is the same either way.
The clear itself is a change of the fabric's state: the node transports record it
(`cleared_nics`, `state.clear_counters`); this program only says so.

The receiver's counters are integrals over the scenario's time: one command integrates them
once at its time and once at the last clear, however many sections print them."""

from __future__ import annotations

from typing import NamedTuple

from fabtui.model.topology import Nic, Node
from fabtui.sim import misconfig
from fabtui.sim.core import (
    BIAS_HIGH_ALARM,
    BIAS_LOW_ALARM,
    RX_HIGH_ALARM,
    RX_LOW_ALARM,
    TEMP_HIGH_ALARM,
    TX_HIGH_ALARM,
    TX_LOW_ALARM,
    Sim,
)
from fabtui.sim.programs._common import Result, nic_by, port_up


def mlxlink(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    device = args[args.index("-d") + 1] if "-d" in args and args.index("-d") + 1 < len(args) \
        else None
    nic = nic_by(node, device or "")
    if nic is None:
        return "", f"-E- Failed to open device: {device}, No such file or directory\n", 1
    attachment = sim.graph.attachments.get((node.hostname, nic.name))
    link = attachment.link_index if attachment else -1
    up = port_up(sim, node, nic, t)
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
    histogram = "--rx_fec_histogram" in args and "--show_histogram" in args
    counts = _Counts.read(sim, node, nic, link, t) \
        if attachment is not None and ("-c" in args or histogram) else None
    if "-c" in args and counts is not None:
        lines += _counters(sim, node, nic, link, up, t, counts)
    if histogram and counts is not None:
        bins = counts.now[3]
        if counts.then is not None:  # `--pc` clears every PPCNT group, the histogram's too
            bins = tuple(max(now - old, 0) for now, old in zip(bins, counts.then[3],
                                                               strict=True))
        lines += ["Histogram of FEC Errors", "-----------------------",
                  "Header                             : Range       Occurrences"]
        lines += [f"Bin {i:<31}: {f'[{i}]':<12}{count}" for i, count in enumerate(bins)]
        lines.append("")
    if "--pc" in args:  # MlxlinkRecord::printCmdLine: "\n" + line + "...\n", after the rest
        lines += ["Clearing Counters...", ""]
    return "\n".join(lines) + "\n", "", 0


def cleared_nics(node: Node, args: list[str]) -> list[str]:
    """The NIC (`node:nic`) whose counters `mlxlink ARGS` clears (`--pc` on a known device);
    empty for any other mlxlink command."""
    if "--pc" not in args or "-d" not in args or args.index("-d") + 1 >= len(args):
        return []
    nic = nic_by(node, args[args.index("-d") + 1])
    return [f"{node.hostname}:{nic.name}"] if nic is not None else []


_Totals = tuple[int, int, int, tuple[int, ...]]
"""`Sim.receiver_counts`: (corrected bits, uncorrectable codewords, corrected symbols, the FEC
histogram), counted from the scenario's start."""


class _Counts(NamedTuple):
    """The receiver's counts of one NIC now, and at its last clear (None: never cleared)."""

    since: float | None
    now: _Totals
    then: _Totals | None

    @classmethod
    def read(cls, sim: Sim, node: Node, nic: Nic, link: int, t: float) -> _Counts:
        """Each integral once: at `t`, and at the last clear before it."""
        since = sim.last_clear(node.hostname, nic.name, t)
        return cls(since, sim.receiver_counts(link, node.hostname, nic.name, t),
                   sim.receiver_counts(link, node.hostname, nic.name, since)
                   if since is not None else None)


def _counters(sim: Sim, node: Node, nic: Nic, link: int, up: bool, t: float,
              counts: _Counts) -> list[str]:
    """`mlxlink -c`: the physical counters since the last clear (`--pc`), or since the
    scenario's start when never cleared. Raw BER: the errors corrected since the clear over
    the bits received since; never cleared, the rate now (the sim does not model the history
    before its scenario, whose start is no clear a real NIC saw)."""
    host = node.hostname
    since, now, then = counts
    start = since if since is not None else 0.0
    lost = now[1] - (then[1] if then is not None else 0)
    bits = sim.bits_received(link, t) - (sim.bits_received(link, start) if since is not None else 0)
    corrected = max(now[0] - then[0], 0) if then is not None else now[0]
    lanes = sim.lane_split(link, host, nic.name, t, corrected)
    if then is not None:
        raw = (now[0] - then[0]) / bits if bits > 0 else 0.0
    else:
        raw = sim.pre_fec_ber(link, host, nic.name, t) if up else 0.0
    downs = sim.down_events(link, t) - (sim.down_events(link, start) if since is not None else 0)
    return ["Physical Counters and BER Info", "------------------------------",
            f"Time Since Last Clear [Min]        : {(t - start) / 60:.1f}",
            f"Effective Physical Errors          : {max(lost, 0)}",
            f"Effective Physical BER             : {_ber(max(lost, 0) / max(bits, 1))}",
            "Raw Physical Errors Per Lane       : " + ",".join(str(v) for v in lanes),
            f"Raw Physical BER                   : {_ber(raw if up else 0.0)}",
            f"Link Down Counter                  : {downs}",
            "Link Error Recovery Counter        : 0", ""]


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
            "Transfer Distance [m]              : 100",
            "Rx LOS [per lane]                  : "
            + ",".join("1" if v is None else "0" for v in dom.rx_power_dbm), ""]


def _ber(value: float) -> str:
    """mlxlink's BER notation: `15E-255` for nothing, else `1E-11` style."""
    if value <= 0:
        return "15E-255"
    exponent = int(f"{value:e}".split("e")[1])
    mantissa = value / 10**exponent
    return f"{mantissa:.0f}E{exponent}"
