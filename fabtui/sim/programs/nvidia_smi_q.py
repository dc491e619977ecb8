"""`nvidia-smi -q -x` on a simulated node: each GPU's state in nvidia-smi's XML."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim import misconfig
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import gpu_product

_ZERO_UUID = "00000000-0000-0000-0000-000000000000"


def _fabric(sim: Sim, node: Node, gpu: int, t: float) -> str:
    """The `<fabric>` block of a GPU in a multi-node NVLink domain: registered (Completed,
    Success, the domain's clique and cluster), or, with its NVLinks down, out of it as
    Azure/azhpc-images PR #506 shows one (Insufficient Resources, clique 0, zero UUID)."""
    if node.nvlink_domain is None:
        # An HGX node: its NVSwitches' fabric manager registers the GPUs (H100 drivers print
        # Completed / Success with a zero clique and ClusterUUID, meta-pytorch/torchcomms
        # #1385); with the fabric manager down (misconfig `fabricmanager: false`) the state
        # stays In Progress with status N/A, as NVIDIA GPU Operator users report it.
        if misconfig.setting(sim, node.hostname, "fabricmanager", t) is False:
            return ("\t\t<fabric>\n\t\t\t<state>In Progress</state>\n"
                    "\t\t\t<status>N/A</status>\n\t\t</fabric>\n")
        return (f"\t\t<fabric>\n\t\t\t<state>Completed</state>\n\t\t\t<status>Success"
                f"</status>\n\t\t\t<cliqueId>0</cliqueId>\n\t\t\t<clusterUuid>{_ZERO_UUID}"
                "</clusterUuid>\n\t\t</fabric>\n")
    if sim.nvlink_registered(node.hostname, t, gpu):
        clique, cluster = sim.fabric_ids(node.hostname)
        status, health = "Success", "Healthy"
    else:
        clique, cluster, status, health = 0, _ZERO_UUID, "Insufficient Resources", "Unhealthy"
    return (f"\t\t<fabric>\n\t\t\t<state>Completed</state>\n\t\t\t<status>{status}</status>\n"
            f"\t\t\t<cliqueId>{clique}</cliqueId>\n\t\t\t<clusterUuid>{cluster}</clusterUuid>\n"
            f"\t\t\t<health>\n\t\t\t\t<summary>{health}</summary>\n"
            f"\t\t\t\t<bandwidth>{'Full' if status == 'Success' else 'Degraded'}</bandwidth>\n"
            "\t\t\t</health>\n\t\t</fabric>\n")


def nvidia_smi_q(sim: Sim, node: Node, t: float) -> str:
    parts = ['<?xml version="1.0" ?>', '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">',
             "<nvidia_smi_log>", "\t<timestamp>Mon Nov 30 00:00:00 2026</timestamp>",
             "\t<driver_version>550.127.05</driver_version>", "\t<cuda_version>12.4</cuda_version>",
             f"\t<attached_gpus>{len(node.gpus)}</attached_gpus>"]
    for gpu in sorted(node.gpus, key=lambda g: g.index):
        state = sim.gpu(node.hostname, gpu.index, t)
        product = gpu_product(gpu.model)
        # Shutdown, slowdown, max operating and memory max operating temperature, as the
        # part's own nvidia-smi prints them (N/A where the demo knows no real output).
        limits = [f"{c} C" for c in product.temperature_limits_c] \
            if product.temperature_limits_c else ["N/A"] * 4
        memory = product.memory_mib
        used = min(71234, memory - 1024) if state.utilization_pct else 0
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
\t\t<product_name>{product.name}</product_name>
\t\t<product_architecture>{product.architecture}</product_architecture>
\t\t<persistence_mode>Enabled</persistence_mode>
\t\t<mig_mode>
\t\t\t<current_mig>Disabled</current_mig>
\t\t\t<pending_mig>Disabled</pending_mig>
\t\t</mig_mode>
\t\t<serial>165232{int(sim.noise('serial', node.hostname, gpu.index) * 1e7):07d}</serial>
\t\t<uuid>GPU-{int(sim.noise('uuid', node.hostname, gpu.index) * 2**64):016x}-sim</uuid>
\t\t<minor_number>{gpu.index}</minor_number>
\t\t<vbios_version>{product.vbios}</vbios_version>
\t\t<gpu_reset_status>
\t\t\t<reset_required>No</reset_required>
\t\t\t<drain_and_reset_recommended>No</drain_and_reset_recommended>
\t\t</gpu_reset_status>
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
\t\t\t<total>{memory} MiB</total>
\t\t\t<used>{used} MiB</used>
\t\t\t<free>{memory - used} MiB</free>
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
\t\t\t<gpu_temp_tlimit>N/A</gpu_temp_tlimit>
\t\t\t<gpu_temp_max_threshold>{limits[0]}</gpu_temp_max_threshold>
\t\t\t<gpu_temp_slow_threshold>{limits[1]}</gpu_temp_slow_threshold>
\t\t\t<gpu_temp_max_gpu_threshold>{limits[2]}</gpu_temp_max_gpu_threshold>
\t\t\t<gpu_target_temperature>N/A</gpu_target_temperature>
\t\t\t<memory_temp>{state.memory_temperature_c} C</memory_temp>
\t\t\t<gpu_temp_max_mem_threshold>{limits[3]}</gpu_temp_max_mem_threshold>
\t\t</temperature>
\t\t<gpu_power_readings>
\t\t\t<power_state>P0</power_state>
\t\t\t<power_draw>{state.power_w:.2f} W</power_draw>
\t\t\t<current_power_limit>{product.power_limit_w:.2f} W</current_power_limit>
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
{_fabric(sim, node, gpu.index, t)}\t</gpu>""")
    parts.append("</nvidia_smi_log>")
    return "\n".join(parts) + "\n"
