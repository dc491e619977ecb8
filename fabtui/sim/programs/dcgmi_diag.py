"""`dcgmi diag -r N` on a simulated node."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result
from fabtui.sim.scenario import FaultKind


def dcgmi(sim: Sim, node: Node, args: list[str], t: float) -> Result:
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
