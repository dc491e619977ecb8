"""What a simulated NVIDIA NVUE (Cumulus Linux) switch prints, in NVUE's own layouts.

`nv show interface PORT counters`, `nv show interface` and `nv config apply` in bash; anything
else gets NVUE's or bash's error.
"""

from __future__ import annotations

from fabtui.model.topology import Switch
from fabtui.sim.core import Sim
from fabtui.sim.switch_cli_common import Reply, counters, port_arg


def reply(sim: Sim, switch: Switch, words: list[str], t: float) -> Reply:
    """Answer one NVUE command line (its words) on `switch` at time `t`."""
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
    port = port_arg(sim, switch, rest[0])
    if port is None:
        return "Error: The requested item does not exist.\n", True
    if rest[1:] == ["counters"]:
        return switch_counters(sim, switch, port, t), False
    return f"Error: '{rest[-1]}' is not one of ['counters', 'link', 'lldp', 'pluggable']\n", True


def _nvue_summary(sim: Sim, switch: Switch, t: float) -> str:
    lines = ["Interface  MTU   Speed  State  Remote Host      Remote Port    Type      Summary",
             "---------  ----  -----  -----  ---------------  -------------  --------  -------"]
    for port, c in counters(sim, switch, t):
        far = sim.neighbor(switch.name, port, t) or ("", "")
        lines.append(f"{port:<11}9216  {c.speed_gbps}G   {'up' if c.up else 'down':<7}"
                     f"{far[0]:<17}{far[1]:<15}swp")
    return "\n".join(lines) + "\n"


def switch_counters(sim: Sim, switch: Switch, port: str, t: float) -> str:
    found = next(counters(sim, switch, t, port), None)
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
