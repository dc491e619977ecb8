"""NVLink error counters (`nvidia-smi nvlink -e`), judged by their growth between two reads.

The counters run since the driver loaded (or `nvidia-smi nvlink -re`), so their absolute values
say little about now; growth over the probe's window does. A **recovery** is the link retraining
after a fault: any in the window fails. **Replay** and **CRC** errors are corrected by the link
layer (the flit is sent again), so growth warns: the link is degrading and slows collectives
before it fails. Meta GCM's NVLink check fails by default on any replay, recovery or CRC error
(`--replay_error_threshold`, `--recovery_error_threshold`, `--data_error_threshold` 0;
facebookresearch/gcm check-dcgmi nvlink docs); imbue warns from 5 (imbue-ai/cluster-health
`MIN_NVLINK_ERRORS_TO_WARN`). With one reading, the totals are reported, not judged.
"""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators.base import EvalContext, evaluator

SOURCE = ("growth between two reads: recovery fails, replay/CRC warn (facebookresearch/gcm "
          "check-dcgmi nvlink: thresholds 0; imbue-ai/cluster-health MIN_NVLINK_ERRORS_TO_WARN)")
_KINDS = (("Recovery Errors", "recovery", Verdict.FAIL), ("Replay Errors", "replay", Verdict.WARN),
          ("CRC Errors", "crc", Verdict.WARN))


def _counters(parsed: Any) -> dict[tuple[int, int], dict[str, int]]:
    return {(gpu.index, link.link): dict(link.counters)
            for gpu in (parsed.gpus if parsed is not None else []) for link in gpu.links}


@evaluator("nvlink-errors")
def nvlink_errors(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Per GPU, the growth of each NVLink error kind over the window, naming its links."""
    now = _counters(after)
    then = _counters(before) if before is not None else None
    metrics: list[Metric] = []
    for gpu in sorted({g for g, _ in now}):
        for name, short, verdict in _KINDS:
            links = {link: c[name] for (g, link), c in now.items() if g == gpu and name in c}
            if not links:
                continue
            component = ctx.component(f"GPU{gpu}")
            if then is None:
                metrics.append(Metric(name=f"nvlink.{short}_total", value=sum(links.values()),
                                      component=component,
                                      source="since the driver loaded: not judged"))
                continue
            grown = {link: value - then.get((gpu, link), {}).get(name, value)
                     for link, value in links.items()}
            if any(d < 0 for d in grown.values()):
                metrics.append(Metric(name=f"nvlink.{short}_delta", value="counters reset "
                                      "during the window", component=component,
                                      verdict=Verdict.WARN, source=SOURCE))
                continue
            total = sum(grown.values())
            where = ", ".join(f"link {k} +{v}" for k, v in sorted(grown.items()) if v)
            metrics.append(Metric(name=f"nvlink.{short}_delta",
                                  value=f"{total} ({where})" if total else 0,
                                  component=component, source=SOURCE,
                                  verdict=verdict if total else Verdict.OK))
    return metrics
