"""SONiC watermarks: peak buffer use per queue / priority group on the lossless classes.

What the peaks say (SONiC buffer and QoS design; Choudhury and Hahne 1998 for the dynamic
threshold): a lossless PG's **headroom** watermark above zero means the PG reached its pause
point and PFC fired (the headroom holds what arrives after pause is sent); reaching the
profile's `xoff` means the headroom was all used and a lossless packet may have been dropped.
An egress **queue** watermark above the WRED/ECN minimum means the queue was long enough to
mark. The evaluator reports the bytes (it does not know the port's buffer profile); the
runbook that reads `mmuconfig -l` judges them against `xoff` and the ECN minimum.
Watermarks are peaks since the last clear (`sonic-clear queue watermark ...`,
`... persistent-watermark`): read them after a clear and a known window.
"""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators._switch_ports import port_component, target_ports
from fabtui.probes.evaluators.base import EvalContext, evaluator

LOSSLESS = ("3", "4")
"""SONiC's default lossless priorities (PORT_QOS_MAP pfc_enable 3,4; roce-qos.toml)."""
SOURCE = ("SONiC watermarkstat (peak since clear); headroom > 0: PFC fired, >= the profile's "
          "xoff: headroom exhausted (SONiC buffer design, mmuconfig -l)")


@evaluator("queue-watermark")
def queue_watermark(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Per port of the target, the lossless queues' and PGs' peaks in bytes (reported: the
    buffer profile they are judged against is read by the runbook)."""
    metrics: list[Metric] = []
    for table in after.tables:
        prefix = "PG" if table.what.startswith("pg-") else \
            "UC" if table.what == "queue-unicast" else None
        if prefix is None:
            continue
        kind = table.what.removeprefix("queue-").replace("-", "_")
        for port in target_ports(ctx, table.ports):
            for priority in LOSSLESS:
                value = table.ports[port].get(prefix + priority)
                if value is not None:
                    metrics.append(Metric(name=f"watermark.{kind}.{prefix}{priority}",
                                          value=value, unit="B", verdict=Verdict.OK,
                                          component=port_component(ctx, port), source=SOURCE))
    return metrics
