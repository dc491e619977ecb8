"""The GPU commands of a simulated node: `nvidia-smi` (the default table, `topo -m`, `-q -x`;
misconfig answers the other queries) and `dcgmi diag -r N`.
"""

from __future__ import annotations

import time

from fabtui.model.topology import Node
from fabtui.sim import misconfig
from fabtui.sim.core import Sim
from fabtui.sim.scenario import FaultKind
from fabtui.topology.pairing import gpu_map

Result = tuple[str, str, int]
"""(stdout, stderr, exit status), as a process would end."""


def nvidia_smi(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    if args[:2] == ["topo", "-m"] or args[:2] == ["topo", "--matrix"]:
        return _topo(node), "", 0
    if "-q" in args and "-x" in args:
        return _smi_xml(sim, node, t), "", 0
    if not args:
        return _smi_table(sim, node, t), "", 0
    extra = misconfig.nvidia_smi(sim, node, args, t)
    if extra is not None:
        return extra
    return "", "sim: `nvidia-smi`, `nvidia-smi topo -m` and `nvidia-smi -q -x` are simulated\n", 2


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
        used = 61_000 if state.utilization_pct else 1
        name = "NVIDIA H100 80GB HBM3"
        lines += [f"| {gpu.index:>3}  {name:<28}On  |   0000{gpu.pci.upper()} Off |"
                  f" {state.ecc_volatile_uncorrectable:>20} |",
                  f"| N/A   {state.temperature_c:>2}C    P0        "
                  f"{round(state.power_w):>5}W /  700W | {used:>8}MiB /  81559MiB | "
                  f"{state.utilization_pct:>6}%      Default |",
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


def _topo(node: Node) -> str:
    gpus = sorted(node.gpus, key=lambda g: g.index)
    nics = list(node.nics)
    mapping = gpu_map(node)
    devices = [f"GPU{g.index}" for g in gpus] + [f"NIC{i}" for i in range(len(nics))]
    header = "\t" + "\t".join(devices) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"
    rows = [header]
    numa_cpus = {0: "0-55,112-167", 1: "56-111,168-223"}

    def numa_of(index: int) -> int:
        if index < len(gpus):
            return gpus[index].numa or 0
        return nics[index - len(gpus)].numa or 0

    def relation(i: int, j: int) -> str:
        if i == j:
            return " X "
        if i < len(gpus) and j < len(gpus):
            return "NV18"
        gpu_i, nic_j = (i, j) if i < len(gpus) else (j, i)
        if gpu_i < len(gpus) and nic_j >= len(gpus):
            nic = nics[nic_j - len(gpus)]
            if gpus[gpu_i].index in mapping[nic.name]:
                return "PIX"
        return "NODE" if numa_of(i) == numa_of(j) else "SYS"

    for i, name in enumerate(devices):
        cells = [relation(i, j) for j in range(len(devices))]
        if i < len(gpus):
            numa = gpus[i].numa or 0
            cells += [numa_cpus.get(numa, "0-223"), str(numa), "N/A"]
        rows.append(f"{name}\t" + "\t".join(cells))
    legend = ["", "Legend:", "",
              "  X    = Self",
              "  SYS  = Connection traversing PCIe as well as the SMP interconnect between "
              "NUMA nodes (e.g., QPI/UPI)",
              "  NODE = Connection traversing PCIe as well as the interconnect between PCIe "
              "Host Bridges within a NUMA node",
              "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically "
              "the CPU)",
              "  PXB  = Connection traversing multiple PCIe bridges (without traversing the "
              "PCIe Host Bridge)",
              "  PIX  = Connection traversing at most a single PCIe bridge",
              "  NV#  = Connection traversing a bonded set of # NVLinks", "",
              "NIC Legend:", ""]
    legend += [f"  NIC{i}: {nic.name}" for i, nic in enumerate(nics)]
    return "\n".join(rows + legend) + "\n"


def _smi_xml(sim: Sim, node: Node, t: float) -> str:
    parts = ['<?xml version="1.0" ?>', '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">',
             "<nvidia_smi_log>", "\t<timestamp>Mon Nov 30 00:00:00 2026</timestamp>",
             "\t<driver_version>550.127.05</driver_version>", "\t<cuda_version>12.4</cuda_version>",
             f"\t<attached_gpus>{len(node.gpus)}</attached_gpus>"]
    for gpu in sorted(node.gpus, key=lambda g: g.index):
        state = sim.gpu(node.hostname, gpu.index, t)
        bus = "0000" + gpu.pci  # nvidia-smi prints an 8-digit domain
        reasons = {name: ("Active" if name in state.reasons else "Not Active") for name in (
            "gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown",
            "hw_thermal_slowdown", "hw_power_brake_slowdown", "sync_boost",
            "sw_thermal_slowdown", "display_clock_setting")}
        ecc = "".join(f"\t\t\t<{scope}>\n"
                      f"\t\t\t\t<sram_correctable>{state.ecc_volatile_correctable}</sram_correctable>\n"
                      "\t\t\t\t<sram_uncorrectable_parity>0</sram_uncorrectable_parity>\n"
                      "\t\t\t\t<sram_uncorrectable_secded>0</sram_uncorrectable_secded>\n"
                      "\t\t\t\t<dram_correctable>0</dram_correctable>\n"
                      f"\t\t\t\t<dram_uncorrectable>{state.ecc_volatile_uncorrectable}"
                      f"</dram_uncorrectable>\n\t\t\t</{scope}>\n"
                      for scope in ("volatile", "aggregate"))
        event_xml = "".join(f"\t\t\t<clocks_event_reason_{k}>{v}</clocks_event_reason_{k}>\n"
                            for k, v in reasons.items())
        parts.append(f"""\t<gpu id="{bus}">
\t\t<product_name>NVIDIA H100 80GB HBM3</product_name>
\t\t<product_architecture>Hopper</product_architecture>
\t\t<persistence_mode>Enabled</persistence_mode>
\t\t<mig_mode>
\t\t\t<current_mig>Disabled</current_mig>
\t\t\t<pending_mig>Disabled</pending_mig>
\t\t</mig_mode>
\t\t<serial>165232{int(sim.noise('serial', node.hostname, gpu.index) * 1e7):07d}</serial>
\t\t<uuid>GPU-{int(sim.noise('uuid', node.hostname, gpu.index) * 2**64):016x}-sim</uuid>
\t\t<minor_number>{gpu.index}</minor_number>
\t\t<pci>
\t\t\t<pci_bus_id>{bus}</pci_bus_id>
\t\t\t<pci_gpu_link_info>
\t\t\t\t<pcie_gen>
\t\t\t\t\t<max_link_gen>5</max_link_gen>
\t\t\t\t\t<current_link_gen>5</current_link_gen>
\t\t\t\t\t<device_current_link_gen>5</device_current_link_gen>
\t\t\t\t\t<max_device_link_gen>5</max_device_link_gen>
\t\t\t\t\t<max_host_link_gen>5</max_host_link_gen>
\t\t\t\t</pcie_gen>
\t\t\t\t<link_widths>
\t\t\t\t\t<max_link_width>16x</max_link_width>
\t\t\t\t\t<current_link_width>16x</current_link_width>
\t\t\t\t</link_widths>
\t\t\t</pci_gpu_link_info>
\t\t\t<replay_counter>0</replay_counter>
\t\t\t<replay_rollover_counter>0</replay_rollover_counter>
\t\t</pci>
\t\t<performance_state>P0</performance_state>
\t\t<clocks_event_reasons>
{event_xml}\t\t</clocks_event_reasons>
\t\t<fb_memory_usage>
\t\t\t<total>81559 MiB</total>
\t\t\t<used>{71234 if state.utilization_pct else 0} MiB</used>
\t\t\t<free>{81559 - (71234 if state.utilization_pct else 0)} MiB</free>
\t\t</fb_memory_usage>
\t\t<compute_mode>Default</compute_mode>
\t\t<utilization>
\t\t\t<gpu_util>{state.utilization_pct} %</gpu_util>
\t\t\t<memory_util>{state.utilization_pct // 3} %</memory_util>
\t\t</utilization>
\t\t<ecc_mode>
\t\t\t<current_ecc>Enabled</current_ecc>
\t\t\t<pending_ecc>Enabled</pending_ecc>
\t\t</ecc_mode>
\t\t<ecc_errors>
{ecc}\t\t</ecc_errors>
\t\t<remapped_rows>
\t\t\t<remapped_row_corr>0</remapped_row_corr>
\t\t\t<remapped_row_unc>0</remapped_row_unc>
\t\t\t<remapped_row_pending>No</remapped_row_pending>
\t\t\t<remapped_row_failure>No</remapped_row_failure>
\t\t</remapped_rows>
\t\t<temperature>
\t\t\t<gpu_temp>{state.temperature_c} C</gpu_temp>
\t\t\t<memory_temp>{state.temperature_c - 6} C</memory_temp>
\t\t</temperature>
\t\t<gpu_power_readings>
\t\t\t<power_state>P0</power_state>
\t\t\t<power_draw>{state.power_w:.2f} W</power_draw>
\t\t\t<current_power_limit>700.00 W</current_power_limit>
\t\t</gpu_power_readings>
\t\t<clocks>
\t\t\t<graphics_clock>{state.sm_clock_mhz} MHz</graphics_clock>
\t\t\t<sm_clock>{state.sm_clock_mhz} MHz</sm_clock>
\t\t\t<mem_clock>{state.mem_clock_mhz} MHz</mem_clock>
\t\t</clocks>
\t\t<max_clocks>
\t\t\t<graphics_clock>{state.sm_clock_max_mhz} MHz</graphics_clock>
\t\t\t<sm_clock>{state.sm_clock_max_mhz} MHz</sm_clock>
\t\t\t<mem_clock>{state.mem_clock_mhz} MHz</mem_clock>
\t\t</max_clocks>
\t</gpu>""")
    parts.append("</nvidia_smi_log>")
    return "\n".join(parts) + "\n"
