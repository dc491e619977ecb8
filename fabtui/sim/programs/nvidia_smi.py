"""`nvidia-smi` on a simulated node: the default table (R550 layout) here, `topo -m` from
`nvidia_smi_topo.py`, `-q -x` from `nvidia_smi_q.py`, `nvlink -e` from `nvlink_errors.py`."""

from __future__ import annotations

import time

from fabtui.model.topology import Node
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result, gpu_product
from fabtui.sim.programs.nvidia_smi_q import nvidia_smi_q
from fabtui.sim.programs.nvidia_smi_topo import nvidia_smi_topo
from fabtui.sim.programs.nvlink_errors import nvlink_errors


def nvidia_smi(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    if args[:2] == ["topo", "-m"] or args[:2] == ["topo", "--matrix"]:
        return nvidia_smi_topo(node, sim, t), "", 0
    if "-q" in args and "-x" in args:
        return nvidia_smi_q(sim, node, t), "", 0
    if not args:
        return _smi_table(sim, node, t), "", 0
    if args[:1] == ["nvlink"] and ("-e" in args or "--errorcounters" in args):
        return nvlink_errors(sim, node, t), "", 0
    return "", ("sim: `nvidia-smi`, `nvidia-smi topo -m`, `nvidia-smi -q -x` and `nvidia-smi "
                "nvlink -e` are simulated\n"), 2


def _smi_table(sim: Sim, node: Node, t: float) -> str:
    """The default `nvidia-smi` table (R550 layout)."""
    rule = "+-----------------------------------------+------------------------+" \
           "----------------------+"
    lines = [time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(sim.epoch + t)),
             "+" + "-" * 89 + "+",
             "| NVIDIA-SMI 550.127.05             Driver Version: 550.127.05     CUDA Version: "
             "12.4     |", rule.replace("+-", "|-", 1),
             "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile "
             "Uncorr. ECC |",
             "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  "
             "Compute M. |",
             "|                                         |                        |           "
             "    MIG M. |",
             "|=========================================+========================+"
             "======================|"]
    for gpu in sorted(node.gpus, key=lambda g: g.index):
        state = sim.gpu(node.hostname, gpu.index, t)
        product = gpu_product(gpu.model)
        used = 61_000 if state.utilization_pct else 1
        name = product.name
        lines += [f"| {gpu.index:>3}  {name:<28}On  |   0000{gpu.pci.upper()} Off |"
                  f" {state.ecc_volatile_uncorrectable:>20} |",
                  f"| N/A   {state.temperature_c:>2}C    P0        "
                  f"{round(state.power_w):>5}W / {product.power_limit_w:>4}W | {used:>8}MiB / "
                  f"{product.memory_mib:>6}MiB | {state.utilization_pct:>6}%      Default |",
                  "|                                         |                        |"
                  "             Disabled |", rule]
    lines += [" " * 89, "+" + "-" * 89 + "+",
              "| Processes:" + " " * 78 + "|",
              "|  GPU   GI   CI        PID   Type   Process name                              "
              "GPU Memory |",
              "|        ID   ID                                                               "
              "Usage      |",
              "|" + "=" * 89 + "|"]
    if sim.job_factor(t) > 0:
        for gpu in sorted(node.gpus, key=lambda g: g.index):
            pid = 41000 + (sim.rank_of(node.hostname, gpu.index) or 0) * 3
            lines.append(f"|  {gpu.index:>3}   N/A  N/A  {pid:>9}      C   "
                         f"{'/usr/bin/python3':<40}{'60988MiB':>10} |")
    else:
        lines.append("|  No running processes found" + " " * 61 + "|")
    lines.append("+" + "-" * 89 + "+")
    return "\n".join(lines) + "\n"
