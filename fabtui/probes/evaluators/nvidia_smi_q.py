"""GPU health from `nvidia-smi -q (-x)` on a remote node, judged as an NVML snapshot is
(`nvml.py`), and, on a node of a multi-node NVLink domain (GB200/GB300 NVL72), whether every
GPU is registered in that domain."""

from __future__ import annotations

from collections import Counter
from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext, evaluator
from fabtui.probes.evaluators.nvml import nvml

NVLINK_DOMAIN_SOURCE = "Azure/azhpc-images PR #506 (per GPU: Fabric State Completed, Status " \
                       "Success, CliqueId non-zero, ClusterUUID non-zero)"
_ZERO_UUID = "00000000-0000-0000-0000-000000000000"


@evaluator("nvidia-smi-q")
def nvidia_smi_q(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """The same judgement as NVML, from `nvidia-smi -q (-x)` on a remote node, plus the NVLink
    domain on nodes the topology puts in one."""
    gpus = []
    for index, gpu in enumerate(after.gpus):
        gpus.append({
            "index": index, "temperature_c": gpu.temperature_c,
            "utilization_gpu_pct": gpu.utilization_gpu_pct, "power_draw_w": gpu.power_draw_w,
            "ecc": {"volatile_uncorrectable": gpu.ecc_volatile_uncorrectable_total,
                    "volatile_correctable": gpu.ecc_volatile_correctable_total},
            "remapped_rows": None if gpu.remapped_rows_pending is None else {
                "pending": bool(gpu.remapped_rows_pending),
                "failure": bool(gpu.remapped_rows_failure),
                "uncorrectable": gpu.remapped_rows_uncorrectable},
            "retired_pages_pending": gpu.retired_pages_pending,
            "pcie": {"gen_current": gpu.pcie_gen_current, "gen_max": gpu.pcie_gen_max,
                     "width_current": gpu.pcie_width_current, "width_max": gpu.pcie_width_max},
            "clocks_event_reasons": gpu.clocks_event_reasons,
        })
    return nvml(None, {"gpus": gpus}, ctx) + _nvlink_domain(after.gpus, ctx)


def _nvlink_domain(gpus: list[Any], ctx: EvalContext) -> list[Metric]:
    """On a node the topology puts in a multi-node NVLink domain: each GPU's fabric
    registration (State Completed, Status Success, a CliqueId and a ClusterUUID), and the same
    clique and cluster as the node's other GPUs. Elsewhere (HGX: drivers print Completed with a
    zero ClusterUUID there) nothing is judged."""
    node = ctx.target.node
    if node is None or node.nvlink_domain is None:
        return _fabric_registration(gpus, ctx)

    def member(gpu: Any) -> bool:
        return gpu.fabric_state == "Completed" and gpu.fabric_status == "Success" and \
            gpu.fabric_clique_id not in (None, "0") and \
            gpu.fabric_cluster_uuid not in (None, _ZERO_UUID)

    domain = Counter((g.fabric_cluster_uuid, g.fabric_clique_id) for g in gpus if member(g))
    majority = domain.most_common(1)[0][0] if domain else None
    metrics = []
    for index, gpu in enumerate(gpus):
        value = f"{gpu.fabric_state or 'no fabric state'}/{gpu.fabric_status or '-'}, clique " \
                f"{gpu.fabric_clique_id or '-'}, cluster {gpu.fabric_cluster_uuid or '-'}"
        good = member(gpu) and (gpu.fabric_cluster_uuid, gpu.fabric_clique_id) == majority
        if member(gpu) and not good:
            value += " (another domain than the node's other GPUs)"
        metrics.append(Metric(name="nvlink_domain", value=value,
                              component=ctx.component(f"GPU{index}"),
                              verdict=Verdict.OK if good else Verdict.FAIL,
                              source=f"{node.nvlink_domain}: {NVLINK_DOMAIN_SOURCE}"))
    return metrics


FABRIC_MANAGER_SOURCE = ("NVIDIA Fabric Manager user guide (NVSwitch systems: the fabric manager "
                         "registers each GPU; until then nvidia-smi -q prints Fabric State In "
                         "Progress, Status N/A, and CUDA fails with error 802 'system not yet "
                         "initialized'); e.g. NVIDIA GPU Operator reports of that state")


def _fabric_registration(gpus: list[Any], ctx: EvalContext) -> list[Metric]:
    """On a node in no multi-node domain: a GPU whose fabric state is printed (an NVSwitch
    system) must be `Completed` with status `Success`; `In Progress` means the fabric manager
    has not registered it (not running, or failed) and the GPU cannot run CUDA work. Nothing is
    said where the driver prints no fabric state or `N/A` (PCIe GPUs, older drivers)."""
    metrics = []
    for index, gpu in enumerate(gpus):
        state = (gpu.fabric_state or "").strip()
        if not state or state == "N/A":
            continue
        status = (gpu.fabric_status or "").strip()
        good = state == "Completed" and status in ("Success", "", "N/A")
        value = f"{state}/{status or '-'}"
        if not good:
            value += (": the fabric manager has not registered this GPU (check "
                      "`systemctl status nvidia-fabricmanager` and its log); CUDA work fails "
                      "until it does" if state != "Completed" else
                      ": fabric registration failed")
        metrics.append(Metric(name="fabric_registration", value=value,
                              component=ctx.component(f"GPU{index}"),
                              verdict=Verdict.OK if good else Verdict.FAIL,
                              source=FABRIC_MANAGER_SOURCE))
    return metrics
