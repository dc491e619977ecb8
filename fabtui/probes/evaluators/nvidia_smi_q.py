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
    judged = [_temperature(m, after.gpus) if m.name == "temperature_c" else m
              for m in nvml(None, {"gpus": gpus}, ctx)]
    for index, gpu in enumerate(after.gpus):
        judged += _memory_temperature(gpu, ctx.component(f"GPU{index}"))
        judged += _sram(gpu, ctx.component(f"GPU{index}"))
        judged += _memory_action(gpu, ctx.component(f"GPU{index}"))
    return judged + _nvlink_domain(after.gpus, ctx)


TEMPERATURE_SOURCE = ("the GPU's own limits as nvidia-smi -q prints them (NVML "
                      "nvmlTemperatureThresholds_t: SHUTDOWN, SLOWDOWN, GPU_MAX 'max operating', "
                      "MEM_MAX): above max operating warns, at slowdown (hardware thermal "
                      "slowdown) or shutdown fails; HBM warns 10 °C below its max [inference], "
                      "fails at it")
FALLBACK_SOURCE = ("no limits printed: facebookresearch/gcm health_checks README (84 °C "
                   "example); fail at 90 [inference]")


def _temperature(metric: Metric, gpus: list[Any]) -> Metric:
    """`temperature_c` judged against the GPU's own limits when it prints them (an H100's max
    operating 87, slowdown 89, shutdown 92 °C; another part's are its own), else against the
    fixed 84 / 90 °C."""
    index = int(metric.component.rsplit("GPU", 1)[1])
    gpu = gpus[index]
    value = metric.value if isinstance(metric.value, int | float) else None
    if value is None:
        return metric
    slowdown = gpu.temperature_slowdown_c or gpu.temperature_shutdown_c
    if slowdown is not None:
        high = gpu.temperature_max_operating_c
        verdict = Verdict.FAIL if value >= slowdown else \
            Verdict.WARN if high is not None and value > high else Verdict.OK
        limits = ", ".join(f"{n} {v}" for n, v in (
            ("max operating", high), ("slowdown", gpu.temperature_slowdown_c),
            ("shutdown", gpu.temperature_shutdown_c)) if v is not None)
        return metric.model_copy(update={"verdict": verdict, "limit": float(slowdown),
                                         "source": f"{limits} °C: {TEMPERATURE_SOURCE}"})
    verdict = Verdict.FAIL if value >= 90 else Verdict.WARN if value >= 84 else Verdict.OK
    return metric.model_copy(update={"verdict": verdict, "limit": 90.0,
                                     "source": FALLBACK_SOURCE})


def _memory_temperature(gpu: Any, where: str) -> list[Metric]:
    """HBM temperature against the part's own memory max operating temperature, where both
    are printed: fails at it, warns from 10 °C below [inference: the margin slow-node uses]."""
    value, top = gpu.memory_temperature_c, gpu.memory_temperature_max_c
    if value is None or top is None:
        return []
    verdict = Verdict.FAIL if value >= top else Verdict.WARN if value >= top - 10 else Verdict.OK
    return [Metric(name="memory_temperature_c", value=value, unit="°C", component=where,
                   verdict=verdict, limit=float(top),
                   source=f"memory max operating {top} °C: {TEMPERATURE_SOURCE}")]


SRAM_SOURCE = ("Azure/azurehpc-health-checks customTests/azure_gpu_ecc.nhc (SRAM uncorrectable "
               "volatile or aggregate > 0 fails; SRAM correctable > the threshold fails: "
               "`check_gpu_ecc 20000000 10000` in conf/nd96isr_h100_v5.conf)")
SRAM_CORRECTABLE_LIMIT = 10000


def _sram(gpu: Any, where: str) -> list[Metric]:
    """SRAM ECC per GPU: any uncorrectable (volatile or lifetime) fails, correctable above
    10,000 fails; `SRAM Threshold Exceeded: Yes` fails (field diagnostics' threshold)."""
    metrics = []
    unc = [v for v in (gpu.ecc_volatile_sram_uncorrectable, gpu.ecc_aggregate_sram_uncorrectable)
           if v is not None]
    if unc:
        metrics.append(Metric(name="ecc.sram_uncorrectable", value=max(unc), component=where,
                              verdict=Verdict.FAIL if max(unc) > 0 else Verdict.OK, limit=1,
                              source=SRAM_SOURCE))
    cor = [v for v in (gpu.ecc_volatile_sram_correctable, gpu.ecc_aggregate_sram_correctable)
           if v is not None]
    if cor:
        metrics.append(Metric(name="ecc.sram_correctable", value=max(cor), component=where,
                              verdict=Verdict.FAIL if max(cor) > SRAM_CORRECTABLE_LIMIT
                              else Verdict.OK, limit=SRAM_CORRECTABLE_LIMIT, source=SRAM_SOURCE))
    if gpu.sram_threshold_exceeded is not None:
        metrics.append(Metric(
            name="ecc.sram_threshold_exceeded", value=gpu.sram_threshold_exceeded,
            component=where, verdict=Verdict.FAIL if gpu.sram_threshold_exceeded else Verdict.OK,
            source="NVML nvmlEccSramErrorStatus_v1_t.bThresholdExceeded ('the error threshold "
                   "of field diag is exceeded')"))
    return metrics


MEMORY_ERROR_SOURCE = ("NVIDIA GPU memory error management, 'Error Recovery and Response "
                       "Flags' (row-remapping pending: remapped at the next GPU reset; failure: "
                       "RMA policy thresholds); Azure azure_gpu_ecc.nhc (SRAM uncorrectable)")


def _memory_action(gpu: Any, where: str) -> list[Metric]:
    """`recovery_action` of the GPU from its memory error state, the same names the kernel
    log's Xid actions use (`_xid_actions.py`; the driver's Xid 154 there comes first): a
    remapping failure or SRAM over field diagnostics' threshold -> replace the GPU (RMA); a
    pending row remap or an uncorrectable SRAM error since the driver loaded -> reset GPU
    (the reset applies the remap and clears the volatile state [inference for SRAM: the
    counters cannot tell a contained Xid 94 from an uncontained Xid 95, so the stricter
    action]); nothing pending -> no metric."""
    if gpu.remapped_rows_failure or gpu.sram_threshold_exceeded:
        why = "row remapping failed" if gpu.remapped_rows_failure else \
            "SRAM errors over the field-diagnostic threshold"
        action = f"replace GPU (RMA): {why}; drain the node and contact the vendor"
    elif gpu.remapped_rows_pending or (gpu.ecc_volatile_sram_uncorrectable or 0) > 0:
        why = "row remap pending" if gpu.remapped_rows_pending else \
            "uncorrectable SRAM error since the driver loaded"
        action = f"reset GPU: {why}; drain the GPU's jobs, then nvidia-smi -r (or reboot)"
    else:
        return []
    return [Metric(name="recovery_action", value=action, component=where, verdict=Verdict.FAIL,
                   source=MEMORY_ERROR_SOURCE)]


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
