"""Switch counters, PFC, FEC, queues and optics, per port, named `switch:port[/laneN]`.

Sources (shared/reference/fabric-diagnostics.md section 4): sonic-net/sonic-utilities
doc/Command-Reference.md and tests; post-FEC (uncorrectable) codewords must be 0; a lane at
`-inf` dBm has no light (loss of signal); each lane is judged against the module's own alarm and
warning thresholds first (Arista/NX-OS/SONiC print them), then the probe's fallback limits.

This module holds what the switch evaluators share: the ports a target covers and their
component names (`switch_counters.py`, `pfc_counters.py`, `pfcwd.py`, `fec_stats.py`,
`queue_counters.py`, `transceiver_dom.py`).
"""

from __future__ import annotations

from typing import Any

from fabtui.model.topology import long_port_name
from fabtui.probes.evaluators.base import EvalContext


def target_ports(ctx: EvalContext, names: Any) -> list[str]:
    """All ports on a switch target; only the target's port on a port target."""
    port = ctx.target.port
    return [n for n in names if port is None or long_port_name(n) == long_port_name(port)]


def port_component(ctx: EvalContext, name: str) -> str:
    return ctx.component(long_port_name(name))
