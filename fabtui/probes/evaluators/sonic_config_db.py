"""A SONiC switch's running CONFIG_DB: recorded, not judged here (`fabtui drift` compares it
with the rendered intent, configs/templates/sonic-qos.json.j2)."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("sonic-config-db")
def sonic_config_db(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """How many keys each table holds."""
    where = ctx.component()
    return [Metric(name=f"keys.{table}", value=len(rows), component=where)
            for table, rows in after.tables.items()]
