"""`squeue --json` (and slurmrestd's `GET /slurm/vX/jobs`, the same data parser).

The schema moved between releases; every form below is read:

- numbers are plain (21.08 to 23.02) or `{"set": true, "infinite": false, "number": 8}`
  (23.02+ for most counts; unset means null);
- `job_state` is a string (to 23.02) or a list, base state first (23.11+:
  `["RUNNING", "COMPLETING"]`);
- the per-node allocation is `job_resources.allocated_nodes` (a list, or in 21.08 an object
  keyed by node index, with `nodename`) or, from 24.05, `job_resources.nodes.allocation`
  (`name`, `cpus.count`, `memory.allocated`); the job's `nodes` is a host-list string in all;
- `gres_detail` lists each allocated node's GRES (`gpu:8(IDX:0-7)`) in allocation order;
- `meta.Slurm` (to 23.02) or `meta.slurm` (23.11+) names the release, `meta.plugins` /
  `meta.plugin` the `data_parser`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fabtui.model.parsed._slurm_common import SlurmJob, SlurmNodeAlloc
from fabtui.model.parsed.squeue_json import SqueueJsonOutput
from fabtui.parsers._slurm_common import (
    HostBudget,
    TooLarge,
    gpu_ids,
    hosts,
    quoted,
    text_or_none,
)
from fabtui.parsers.errors import ParseError

KIND = "squeue-json"
MODEL = SqueueJsonOutput
DESCRIPTION = "squeue --json (Slurm 21.08-24.x): jobs, states, node lists, per-node allocation"


def detect(text: str) -> float:
    """How sure we are that `text` is `squeue --json` output (0..1)."""
    head = text[:65536].lstrip("\ufeff \t\r\n")
    if not head.startswith("{") or '"jobs"' not in head:
        return 0.0
    if re.search(r'"job_id"\s*:', head) and re.search(r'"job_state"\s*:', head):
        return 0.9
    return 0.3 if re.search(r'"job_id"\s*:', head) else 0.0


def _number(value: Any) -> int | None:
    """A count as any release prints it: 8, "8", {"set": true, "number": 8}; unset -> None."""
    if isinstance(value, dict):
        if not value.get("set", True) or value.get("infinite"):
            return None
        value = value.get("number")
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _text(value: Any) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return text_or_none(value) if isinstance(value, str) else None


def _allocations(job: dict[str, Any], names: list[str],
                 warnings: list[str], where: str) -> list[SlurmNodeAlloc]:
    """Per-node allocation of one job, from whichever form its release prints."""
    resources = job.get("job_resources")
    if not isinstance(resources, dict):
        return []
    raw: list[Any] = []
    nodes = resources.get("nodes")
    if isinstance(nodes, dict) and isinstance(nodes.get("allocation"), list):
        raw = nodes["allocation"]
    elif isinstance(resources.get("allocated_nodes"), list):
        raw = resources["allocated_nodes"]
    elif isinstance(resources.get("allocated_nodes"), dict):
        raw = list(resources["allocated_nodes"].values())
    detail_list = job.get("gres_detail")
    gres: list[Any] = detail_list if isinstance(detail_list, list) else []
    found: list[SlurmNodeAlloc] = []
    for index, entry in enumerate(raw):
        if not isinstance(entry, dict):
            warnings.append(f"{where}: allocation {index} is not an object; skipped")
            continue
        name = _text(entry.get("name") or entry.get("nodename"))
        if name is None and index < len(names):
            name = names[index]
        if name is None:
            warnings.append(f"{where}: allocation {index} names no node; skipped")
            continue
        cpus = entry.get("cpus")
        count = _number(cpus.get("count")) if isinstance(cpus, dict) else _number(cpus)
        if count is None:
            count = _number(entry.get("cpus_used")) or None
        memory = entry.get("memory")
        mem = _number(memory.get("allocated")) if isinstance(memory, dict) else \
            _number(entry.get("memory_allocated", memory))
        detail = gres[index] if index < len(gres) and isinstance(gres[index], str) else None
        try:
            gpus = gpu_ids(detail)
        except TooLarge as exc:
            raise ParseError(KIND, None, f"{where}: gres_detail {quoted(detail or '')!r}: "
                                         f"{exc}") from None
        found.append(SlurmNodeAlloc(nodes=name, hosts=[name], cpus=count, mem_mb=mem,
                                    gres=detail or None, gpu_ids=gpus))
    return found


def _job(entry: Any, index: int, warnings: list[str], budget: HostBudget) -> SlurmJob:
    where = f"jobs[{index}]"
    if not isinstance(entry, dict):
        raise ParseError(KIND, None, f"{where} is not an object")
    job_id = _number(entry.get("job_id"))
    if job_id is None:
        raise ParseError(KIND, None, f"{where} has no job_id")
    state = entry.get("job_state")
    states = [s for s in state if isinstance(s, str)] if isinstance(state, list) else \
        ([state] if isinstance(state, str) else [])
    listed = entry.get("nodes")
    if isinstance(listed, dict):  # the job_resources.nodes form, should a release print it here
        listed = listed.get("list")
    nodelist, names = hosts(_text(listed), warnings, where, budget)
    array_job = _number(entry.get("array_job_id"))
    array_task = _number(entry.get("array_task_id"))
    per_node = _number(entry.get("tasks_per_node"))
    per_task = _number(entry.get("cpus_per_task"))
    return SlurmJob(
        job_id=str(job_id), array_job_id=str(array_job) if array_job else None,
        array_task_id=str(array_task) if array_task is not None and array_job else None,
        name=_text(entry.get("name")), user=_text(entry.get("user_name")),
        state=states[0] if states else None, state_flags=states[1:],
        reason=_text(entry.get("state_reason")), partition=_text(entry.get("partition")),
        nodelist=nodelist, nodes=names, batch_host=_text(entry.get("batch_host")),
        num_nodes=_number(entry.get("node_count")),
        num_tasks=_number(entry.get("tasks", entry.get("num_tasks"))),
        cpus_per_task=per_task or None, tasks_per_node=per_node or None,
        allocations=_allocations(entry, names, warnings, where))


def parse(text: str) -> SqueueJsonOutput:
    """Parse `squeue --json` output; raises `ParseError` (with the line, for broken JSON)."""
    try:
        data = json.loads(text.lstrip("\ufeff"))
    except json.JSONDecodeError as exc:
        raise ParseError(KIND, exc.lineno, f"not JSON: {exc.msg} (column {exc.colno})") \
            from None
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list):
        raise ParseError(KIND, None, 'not squeue --json output: no "jobs" list')
    result = SqueueJsonOutput()
    meta_value = data.get("meta")
    meta: dict[str, Any] = meta_value if isinstance(meta_value, dict) else {}
    slurm = meta.get("Slurm") or meta.get("slurm")
    if isinstance(slurm, dict):
        result.slurm_release = _text(slurm.get("release"))
    plugins = meta.get("plugins") or meta.get("plugin")
    if isinstance(plugins, dict):
        result.data_parser = _text(plugins.get("data_parser"))
    budget = HostBudget()
    result.jobs = [_job(entry, i, result.warnings, budget)
                   for i, entry in enumerate(data["jobs"])]
    return result
