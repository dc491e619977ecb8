"""The evaluators' rules in words and numbers, for the report's threshold column.

A catalog threshold (`probes/*.toml`) is numbers with a source and needs no words. An evaluator
judges some metrics itself (a lane with no light, a port that is not Active, a job-fatal log
event), against limits that depend on what it read (the module's own alarm thresholds, the
topology's NIC speed): the reading records the limit applied, and this table says the rule
around it, with its source, as docs/thresholds.md section 2 states it. `bounds`, where the rule
is fixed numbers, are shown only when they give the reading's verdict (rows.py checks). Data
only.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Literal

from fabtui.model.report import Bound
from fabtui.model.verdict import Verdict

_OPTICS = ("IEEE 802.3bs clause 124 (400GBASE-DR4); Edgecore ET7502-DR4/-FR4 datasheets; "
           "the module's alarm thresholds from its EEPROM; docs/thresholds.md section 2")


@dataclass(frozen=True)
class Rule:
    """An evaluator's rule for one metric."""

    text: str
    source: str
    direction: Literal["above", "below"] | None = None
    """`above`: larger values are worse; `below`: smaller ones."""
    level: Verdict = Verdict.FAIL
    """The verdict past a recorded limit when the reading was ok (which limit it is)."""
    bounds: tuple[Bound, ...] = ()
    always: bool = False
    """Say the words even when the row shows numbers (they hold more than the numbers)."""


RULES: tuple[tuple[str, str, Rule], ...] = (
    ("*", "rx_power_dbm", Rule(
        "light on every lane (-inf dBm, loss of signal, fails); receive power at least the "
        "module's low alarm (below fails) and the type's minimum (400GBASE-DR4/DR8 -5.9 dBm, "
        "FR4 -7.3 dBm; below warns), at most +4.0 dBm (DR4) / +3.5 dBm (FR4)",
        _OPTICS, "below", always=True)),
    ("*", "tx_power_dbm", Rule(
        "launch power within the module's alarm thresholds and at least the type's minimum "
        "(400GBASE-DR4/DR8 -2.9 dBm; below fails), at most +4.0 dBm",
        _OPTICS, "below", always=True)),
    ("*", "tx_bias_ma", Rule(
        "laser bias current within the module's own low and high alarm thresholds (read from "
        "its EEPROM; 0 mA: the laser is off)", _OPTICS, "below", always=True)),
    ("*", "rx_power_spread_db", Rule(
        "receive power of the lanes within 3 dB of each other (more warns: one dirty or "
        "damaged lane)", "[inference] docs/thresholds.md section 2", "above", Verdict.WARN,
        (Bound(verdict=Verdict.WARN, op=">", limit=3.0),))),
    ("switch.dom*", "temperature_c", Rule(
        "module temperature below its own high alarm (fails) and warning (warns); 70 °C warns "
        "when it prints none", _OPTICS, "above")),
    ("nic.mlxlink", "temperature_c", Rule(
        "module temperature below its own high alarm (fails) and warning (warns); 70 °C warns "
        "when it prints none", _OPTICS, "above")),
    ("*", "alarm.*", Rule(
        "no alarm or warning flag raised by the module (an alarm fails, a warning warns)",
        _OPTICS)),
    ("*", "state", Rule(
        "link Active (any other state fails)",
        "Azure azurehpc-health-checks conf (check_hw_ib); docs/thresholds.md section 2")),
    ("*", "port.state", Rule(
        "port Active (any other state fails)",
        "Azure azurehpc-health-checks conf (check_hw_ib); docs/thresholds.md section 2")),
    ("*", "port.physical_state", Rule(
        "physical state LinkUp (Polling, Disabled and the rest fail)",
        "Azure azurehpc-health-checks conf (check_hw_ib); docs/thresholds.md section 2")),
    ("*", "port.rate_gbps", Rule(
        "port rate at least the topology's NIC speed (below fails)",
        "Azure conf check_hw_ib 400; the topology file", "below")),
    ("*", "port.active_mtu", Rule(
        "active MTU 4096 (below warns)", "fabric-diagnostics 6.1; docs/thresholds.md section 2",
        "below", Verdict.WARN)),
    ("*", "recommendation", Rule(
        "mlxlink prints no troubleshooting recommendation (No issue was observed.; one printed "
        "warns)",
        "mlxlink output (Troubleshooting Info)")),
    ("logs.dmesg", "link_flaps", Rule(
        "link-down events in the last 24 h: 5 or more fail, any warns",
        "Azure azurehpc-health-checks customTests/azure_ib_link_flapping.nhc", "above",
        bounds=(Bound(verdict=Verdict.FAIL, op=">=", limit=5.0),
                Bound(verdict=Verdict.WARN, op=">=", limit=1.0)))),
    ("logs.dmesg", "xid.*", Rule(
        "no Xid of Azure's node-failing list (48, 56-58, 62-65, 68, 69, 73, 74, 79-81, 92, 95, "
        "119, 120) in the last 2 h (fails); other Xids warn",
        "Azure customTests/azure_gpu_xid.nhc; NVIDIA Xid catalog")),
    ("logs.dmesg", "sxid.*", Rule(
        "no fatal NVSwitch SXid in the last 2 h (fatal fails, non-fatal warns)",
        "NVIDIA Fabric Manager user guide")),
    ("logs.dmesg", "pcie_downtrained", Rule(
        "no PCIe link downtrained (limited by) in the log", "imbue-ai/cluster-health")),
    ("logs.nccl", "event.*", Rule(
        "no job-fatal event in the NCCL log (watchdog timeout, IB completion error, NCCL error, "
        "desync fail)", "NCCL net_ib and PyTorch ProcessGroupNCCL messages; docs/triage.md")),
    ("logs.nccl", "suspect_*", Rule(
        "no NIC or switch where two or more failed paths of the completion errors meet",
        "fabtui/topology/failed_paths.py; docs/triage.md")),
    ("logs.nccl", "gpudirect_rdma", Rule(
        "GPUDirect RDMA in effect (not in effect warns)", "NCCL INFO lines (GDRDMA)")),
    ("*", "lldp_neighbor", Rule(
        "the neighbour the topology cables the port to (any other fails)", "the topology file")),
    ("*", "stormed", Rule(
        "no queue stormed by the PFC watchdog (fails)", "sonic-utilities pfcwd/main.py")),
)


def rule_for(probe: str, metric: str) -> Rule | None:
    """The evaluator rule for `metric` of `probe`, if this table states it."""
    for probes, names, rule in RULES:
        if fnmatch.fnmatchcase(probe, probes) and fnmatch.fnmatchcase(metric, names):
            return rule
    return None


__all__ = ["RULES", "Rule", "rule_for"]
