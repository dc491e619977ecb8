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

Anything else gets the vendor's error reply. This module dispatches by flavor; each flavor
renders in its own module, `switch_cli_sonic.py`, `switch_cli_eos.py` and `switch_cli_nvue.py`,
on what they share in `switch_cli_common.py`. One session prints many kinds, so the flavor is
the module; inside it, the function that renders a kind is named by the kind's stem, as the
kind's parser, model and evaluator modules are (`switch_counters`, `transceiver_dom`,
`lldp_neighbors`, ...), a second command printing the same kind adds its variant
(`pfc_counters_history`, `transceiver_dom_detail`), and what no parser reads stays private
(`show interfaces status`, NVUE's `nv show interface`).
"""

from __future__ import annotations

import shlex

from fabtui.model.topology import Switch
from fabtui.sim import misconfig, switch_syslog
from fabtui.sim import switch_cli_eos as eos
from fabtui.sim import switch_cli_nvue as nvue
from fabtui.sim import switch_cli_sonic as sonic
from fabtui.sim.core import Sim
from fabtui.sim.switch_cli_common import Reply, port_arg, ports
from fabtui.sim.switch_cli_sonic import PFCWD_DROP_PPS, queue_drops

__all__ = ["PFCWD_DROP_PPS", "Reply", "admin_command", "ports", "prompt", "queue_drops", "reply"]


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
        return extra if extra is not None else sonic.reply(sim, switch, words, t)
    if flavor == "nvue":
        return nvue.reply(sim, switch, words, t)
    if flavor == "eos":
        return eos.reply(sim, switch, words, t)
    return f"% Unrecognized command \"{line}\"\n", True


def admin_command(sim: Sim, switch: Switch, command: str) -> tuple[str, bool] | None:
    """(port, up) when `command` shuts or starts a port: SONiC `[sudo] config interface
    shutdown|startup PORT`, NVUE `nv set interface PORT link state down|up`."""
    words = command.split()
    if words[:1] == ["sudo"]:
        words = words[1:]
    if switch.flavor.value == "sonic" and words[:2] == ["config", "interface"] and \
            len(words) == 4 and words[2] in ("shutdown", "startup"):
        port = port_arg(sim, switch, words[3])
        return (port, words[2] == "startup") if port else None
    if switch.flavor.value == "nvue" and words[:3] == ["nv", "set", "interface"] and \
            words[4:6] == ["link", "state"] and len(words) == 7 and words[6] in ("up", "down"):
        port = port_arg(sim, switch, words[3])
        return (port, words[6] == "up") if port else None
    return None
