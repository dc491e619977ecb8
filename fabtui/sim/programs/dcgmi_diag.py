"""`dcgmi diag -r N` on a simulated node."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim.core import Sim, throttles
from fabtui.sim.programs._common import Result
from fabtui.sim.scenario import FaultKind
from fabtui.topology.platform import gpu_generation

_DEVICE_IDS = {"A100": "20b2", "H100": "2330", "H200": "2335", "B200": "2901"}
"""PCI device ids DCGM prints per GPU generation (A100 SXM4 80GB 20b2 as in the real capture;
H100 SXM5 2330, H200 2335, B200 2901 from the PCI ids database)."""


def dcgmi(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    """`dcgmi diag -r 1|2|3`: a slow node's GPUs fail the thermal part of the stress tests."""
    if args[:1] != ["diag"] or "-r" not in args:
        return "", "Usage: dcgmi diag -r <level>\n", 1
    level = args[args.index("-r") + 1] if args.index("-r") + 1 < len(args) else "1"
    hot = any(f.host == node.hostname and throttles(f)
              for f in sim.active(FaultKind.SLOW_NODE, t))
    # DCGM 3.x opens the table with what it ran against (its version, the driver, each GPU's
    # PCI device id), as a real `dcgmi diag` does (awsome-distributed-training capture).
    devices = ",".join(_DEVICE_IDS.get(gpu_generation(g.model) or "H100", "2330")
                       for g in sorted(node.gpus, key=lambda g: g.index))
    rows = [("Metadata", [("DCGM Version", "3.3.7"), ("Driver Version Detected", "550.127.05"),
                          ("GPU Device IDs Detected", devices)]),
            ("Deployment", [("Denylist", "Pass"), ("NVML Library", "Pass"),
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
