"""Stragglers: which rank or node is slow, and a sweep that isolates the slow node or link.

Scores come from what the job or a benchmark already printed:

- nccl-tests output (one file per run; `fabtui.parsers.nccl_tests`): the busbw of the largest
  messages, per node set the run covered (its `# Using devices` hosts);
- training step logs: Megatron's `elapsed time per iteration (ms): X` or `step_time 4.01s`-style
  lines, per rank (the `rank-N` file name or a `[rankN]:` prefix) or per file;
- per-rank timings: `RANK SECONDS [SECONDS ...]` lines (or CSV with a `rank` header), or JSON
  `{"RANK": [seconds, ...]}` / `[{"rank": R, "seconds": S}, ...]`.

Score = fastest median / own median (own / best for bandwidths): 1.0 is the fastest, below 0.75
a straggler (`STRAGGLER_BELOW`).

The sweep (`plan_sweep`, `run_sweep`) runs `nccl.mpirun` across node pairs, in parallel
through whatever runs probes (the workspace: anything with `run_probe`): disjoint pairs first;
each node of a slow pair then beside a node known to be fast (slow beside it: the node; fast
beside it while the pair was slow: the path between the two); a clean pair round with a slow set
as a whole is halved until the slow half is a pair. A dead or slow run is a run with its error,
never a stall.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from fabtui.errors import InputError
from fabtui.model.probe import ProbeResult, Verdict
from fabtui.model.stragglers import STRAGGLER_BELOW, Score, StragglerReport, SweepPlan, SweepRun
from fabtui.topology.graph import FabricGraph
from fabtui.triage.probing import CANNOT_TELL, is_bug

SWEEP_PROBE = "nccl.mpirun"
PAIR_ENV = "NCCL_ALGO=Ring"
"""Pairs run ring all_reduce: on 2 nodes NCCL would pick tree / NVLS-tree, which go beyond the
network and could not be compared (see probes/nccl.toml)."""
_MAX_BYTES_ROWS = 3
"""busbw samples of an nccl-tests run: its largest message sizes (out-of-place and in-place)."""

_ITERATION_MS = re.compile(r"elapsed time per iteration \(ms\):\s*([\d.]+)")
_STEP_TIME = re.compile(r"\b(?:step[_ ]time|time per (?:step|iteration)|iteration time)"
                        r"(?:\s*\((ms|s)\))?\s*[:=]?\s*([\d.]+)\s*(ms|s)?\b", re.IGNORECASE)
_RANK_PREFIX = re.compile(r"^\s*\[rank(\d+)\]:")
_RANK_FILE = re.compile(r"rank[-_]?(\d+)", re.IGNORECASE)
_TIMING_ROW = re.compile(r"^\s*(?:rank\s*)?(\d+)\s*[,:=\s]\s*([\d.]+(?:[\s,]+[\d.]+)*)\s*$",
                         re.IGNORECASE)


class ProbeRunning(Protocol):
    """What runs one probe: `Workspace.run_probe` (fan-out stays with the caller)."""

    def run_probe(self, name: str, target: str | None, params: Mapping[str, str],
                  topology: Path | None = None) -> Awaitable[ProbeResult]: ...


@dataclass
class _Samples:
    unit: str
    name: str
    metric: str
    source: str
    rank: int | None = None
    nodes: list[str] = field(default_factory=list)
    values: list[float] = field(default_factory=list)


# --- reading ---------------------------------------------------------------------------------

def _nccl_tests(path: Path, text: str) -> list[_Samples]:
    from fabtui.parsers.nccl_tests import parse

    result = parse(text)
    if not result.rows:
        return []
    hosts = sorted({r.host for r in result.ranks})
    rows = sorted(result.rows, key=lambda r: r.size_bytes)[-_MAX_BYTES_ROWS:]
    values = [v for row in rows for v in (row.out_of_place.busbw, row.in_place.busbw)
              if v is not None]
    name = "+".join(hosts) if hosts else path.name
    return [_Samples(unit="node" if len(hosts) == 1 else "nodes", name=name, metric="busbw",
                     source=str(path), nodes=hosts, values=values)]


def step_seconds(line: str) -> float | None:
    """The step (iteration) time a training log line states, in seconds; None if it states
    none (Megatron `elapsed time per iteration (ms): X`, `step_time 4.01s`, ...)."""
    if (m := _ITERATION_MS.search(line)) is not None:
        return float(m.group(1)) / 1000
    if (m := _STEP_TIME.search(line)) is not None:
        unit = (m.group(1) or m.group(3) or "s").lower()
        return float(m.group(2)) / (1000 if unit == "ms" else 1)
    return None


def _step_logs(path: Path, text: str) -> list[_Samples]:
    by_rank: dict[int | None, list[float]] = {}
    file_rank = _RANK_FILE.search(path.stem)
    for line in text.splitlines():
        seconds = step_seconds(line)
        if seconds is None:
            continue
        prefix = _RANK_PREFIX.match(line)
        rank = int(prefix.group(1)) if prefix else int(file_rank.group(1)) if file_rank else None
        by_rank.setdefault(rank, []).append(seconds)
    return [_Samples(unit="rank" if rank is not None else "nodes",
                     name=f"rank {rank}" if rank is not None else path.name, metric="time",
                     source=str(path), rank=rank, values=values)
            for rank, values in by_rank.items()]


def _timings(path: Path, text: str) -> list[_Samples]:
    stripped = text.strip()
    rows: dict[int, list[float]] = {}
    if stripped.startswith(("{", "[")):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise InputError.single(str(path), exc.lineno, f"not JSON: {exc.msg}") from None
        items: Iterable[tuple[Any, Any]] = data.items() if isinstance(data, dict) else \
            ((d.get("rank"), d.get("seconds", d.get("time"))) for d in data
             if isinstance(d, dict))
        for rank, value in items:
            values = value if isinstance(value, list) else [value]
            try:
                rows.setdefault(int(rank), []).extend(float(v) for v in values)
            except (TypeError, ValueError):
                raise InputError.single(str(path), None, f"rank {rank!r}: expected numbers of "
                                                         "seconds") from None
    else:
        for line in stripped.splitlines():
            if (m := _TIMING_ROW.match(line)) is not None:
                values = [float(v) for v in re.split(r"[\s,]+", m.group(2)) if v]
                rows.setdefault(int(m.group(1)), []).extend(values)
    return [_Samples(unit="rank", name=f"rank {rank}", metric="time", source=str(path),
                     rank=rank, values=values) for rank, values in sorted(rows.items())]


def read_samples(paths: Sequence[Path]) -> list[_Samples]:
    """Every file's timings, by the first reading that finds any. Raises `InputError`
    (`file: what is wrong`) for a file that cannot be read or holds no timings."""
    from fabtui.parsers.nccl_tests import detect

    found: list[_Samples] = []
    for path in paths:
        files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
        for file in files:
            try:
                text = file.read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                raise InputError.single(str(file), None, f"cannot read: {exc.strerror}") \
                    from None
            samples = (_nccl_tests(file, text) if detect(text) >= 0.5 else []) or \
                _step_logs(file, text) or _timings(file, text)
            if not samples and not path.is_dir():
                raise InputError.single(str(file), None, "no timings found: expected nccl-tests "
                                        "output, step logs or 'RANK SECONDS' lines")
            found += samples
    if not found:
        raise InputError.single(", ".join(map(str, paths)), None, "no timings found")
    return found


# --- scoring ---------------------------------------------------------------------------------

def score(samples: Sequence[_Samples], graph: FabricGraph | None = None) -> list[Score]:
    """One score per unit (merged across files), slowest first."""
    merged: dict[tuple[str, str], _Samples] = {}
    for s in samples:
        if not s.values:
            continue
        key = (s.metric, s.name)
        if key in merged:
            merged[key].values += s.values
        else:
            merged[key] = _Samples(s.unit, s.name, s.metric, s.source, s.rank, list(s.nodes),
                                   list(s.values))
    scores: list[Score] = []
    for metric in ("time", "busbw"):
        group = [s for (m, _), s in merged.items() if m == metric]
        if not group:
            continue
        medians = {s.name: statistics.median(s.values) for s in group}
        best = min(medians.values()) if metric == "time" else max(medians.values())
        for s in group:
            own = medians[s.name]
            value = (best / own if own > 0 else 0.0) if metric == "time" else \
                (own / best if best > 0 else 0.0)
            nodes = s.nodes
            if s.rank is not None and graph is not None and s.rank < len(graph.ranks):
                nodes = [graph.ranks[s.rank].node]
            scores.append(Score(unit=s.unit, name=s.name, rank=s.rank,
                                nodes=nodes, metric=metric,
                                samples=len(s.values), median=round(own, 6),
                                score=round(value, 4), straggler=value < STRAGGLER_BELOW,
                                source=s.source))
    return sorted(scores, key=lambda s: (s.score, s.name))


# --- the sweep -------------------------------------------------------------------------------

def _pair_run(round_: int, kind: str, nodes: Sequence[str], gpus: int) -> SweepRun:
    hosts = ",".join(f"{n}:{gpus}" for n in nodes)
    return SweepRun(round=round_, kind=kind, nodes=list(nodes),
                    probe=SWEEP_PROBE, target=nodes[0],
                    params={"hosts": hosts, "ranks": str(gpus * len(nodes)),
                            "nccl_env": PAIR_ENV})


def _gpus(graph: FabricGraph | None, nodes: Sequence[str]) -> int:
    if graph is None:
        return 8
    counts = [len(graph.nodes[n].gpus) for n in nodes if n in graph.nodes]
    return min(counts) if counts else 8


_STEPS = [
    "1. all_reduce (nccl.mpirun, ring) on disjoint node pairs, all at once; a pair below 0.75 "
    "of the best pair, or below the topology's expected busbw, is slow",
    "2. each node of a slow pair beside a node of a fast pair: slow again -> that node; fast "
    "with both -> the path between the pair's two nodes",
    "3. no slow pair: the whole set once; if it is slow, halve it and run each half, down to a "
    "pair",
]


def plan_sweep(nodes: Sequence[str], graph: FabricGraph | None = None) -> SweepPlan:
    """The sweep's first round over `nodes` (pairs; an odd node out pairs with the first)."""
    nodes = list(dict.fromkeys(nodes))
    if len(nodes) < 2:
        raise InputError.single("stragglers", None, "a sweep needs at least 2 nodes")
    gpus = _gpus(graph, nodes)
    pairs = [nodes[i:i + 2] for i in range(0, len(nodes) - 1, 2)]
    if len(nodes) % 2:
        pairs.append([nodes[-1], nodes[0]])
    return SweepPlan(nodes=nodes, steps=_STEPS,
                     runs=[_pair_run(1, "pairs", p, gpus) for p in pairs])


def _busbw(result: ProbeResult) -> tuple[float | None, bool]:
    """(busbw at the largest message, whether the evaluator judged it below expected)."""
    value = None
    below = False
    for metric in result.metrics:
        if metric.name == "busbw_max" and isinstance(metric.value, (int, float)):
            value = float(metric.value)
            below = metric.verdict in (Verdict.FAIL, Verdict.WARN)
    return value, below


async def _execute(runs: list[SweepRun], runner: ProbeRunning, limit: int,
                   timeout: float) -> list[SweepRun]:
    gate = asyncio.Semaphore(limit)

    async def one(run: SweepRun) -> SweepRun:
        async with gate:
            try:
                result = await asyncio.wait_for(
                    runner.run_probe(run.probe, run.target, run.params), timeout)
            except TimeoutError:
                return run.model_copy(update={"error": f"no answer in {timeout:g} s",
                                              "slow": None})
            except CANNOT_TELL as exc:  # a dead device or a refused request: a result
                if is_bug(exc):
                    raise  # a bug is not a fact about the fabric
                return run.model_copy(update={"error": str(exc) or type(exc).__name__})
        if result.error:
            return run.model_copy(update={"error": result.error})
        busbw, below = _busbw(result)
        if busbw is None:
            return run.model_copy(update={"error": "no busbw in the output"})
        return run.model_copy(update={"busbw": busbw, "slow": below})

    return list(await asyncio.gather(*(one(r) for r in runs)))


def _judge(runs: list[SweepRun], best: float) -> list[SweepRun]:
    judged = []
    for run in runs:
        if run.busbw is None:
            judged.append(run)
            continue
        ratio = run.busbw / best if best > 0 else 0.0
        judged.append(run.model_copy(update={"score": round(ratio, 4),
                                             "slow": bool(run.slow) or ratio < STRAGGLER_BELOW}))
    return judged


async def run_sweep(plan: SweepPlan, runner: ProbeRunning, graph: FabricGraph | None = None, *,
                    limit: int = 4, timeout: float = 300.0) -> SweepPlan:
    """Run `plan` adaptively (pairs, checks, halving) and say what it isolated."""
    gpus = _gpus(graph, plan.nodes)
    first = await _execute(list(plan.runs), runner, limit, timeout)
    measured = [r.busbw for r in first if r.busbw is not None]
    best = max(measured) if measured else 0.0
    done = _judge(first, best)
    slow_pairs = [r for r in done if r.slow]
    fast_nodes = [n for r in done if r.slow is False for n in r.nodes]
    slow_nodes: list[str] = []
    slow_links: list[list[str]] = []
    notes: list[str] = []
    failed = [r for r in done if r.error]
    if failed:
        notes.append(f"{len(failed)} run(s) failed ({failed[0].target}: {failed[0].error})")
    if slow_pairs and fast_nodes:
        reference = fast_nodes[0]
        checks = [_pair_run(2, "check", [n, reference], gpus)
                  for r in slow_pairs for n in r.nodes if n not in fast_nodes]
        checked = _judge(await _execute(checks, runner, limit, timeout), best)
        done += checked
        verdict = {c.nodes[0]: c.slow for c in checked}
        for pair in slow_pairs:
            slow_here = [n for n in pair.nodes if verdict.get(n)]
            if slow_here:
                slow_nodes += [n for n in slow_here if n not in slow_nodes]
            elif all(verdict.get(n) is False for n in pair.nodes):
                slow_links.append(list(pair.nodes))
    elif slow_pairs:
        notes.append("every pair is slow: no fast node to compare with (a fabric-wide cause?)")
    elif not failed and len(plan.nodes) > 2:
        group = list(plan.nodes)
        round_ = 2
        whole = _judge(await _execute([_pair_run(round_, "halving", group, gpus)], runner,
                                      limit, timeout), best)
        done += whole
        while whole[0].slow and len(group) > 2:
            round_ += 1
            halves = [group[:len(group) // 2], group[len(group) // 2:]]
            runs = [_pair_run(round_, "halving", h, gpus) for h in halves if len(h) >= 2]
            halved = _judge(await _execute(runs, runner, limit, timeout), best)
            done += halved
            slow = [h for h in halved if h.slow]
            if len(slow) != 1:
                notes.append(f"both halves of {'+'.join(group)} are "
                             f"{'slow' if slow else 'fast'}: the set is slow only as a whole")
                break
            group, whole = slow[0].nodes, slow
        if whole and whole[0].slow and len(group) <= 2:
            slow_links.append(group)
    conclusion = "; ".join(
        [f"slow node{'s' if len(slow_nodes) > 1 else ''}: {', '.join(slow_nodes)}"]
        * bool(slow_nodes)
        + [f"slow path between {' and '.join(link)}" for link in slow_links]
        + notes) or "no slow node or link: every pair ran at the speed of the best"
    return plan.model_copy(update={"runs": done, "executed": True, "slow_nodes": slow_nodes,
                                   "slow_links": slow_links, "conclusion": conclusion})


def report(paths: Sequence[Path], graph: FabricGraph | None = None,
           nodes: Sequence[str] | None = None) -> StragglerReport:
    """Scores of the timings in `paths` and the sweep plan over their nodes (or `nodes`, or
    every node of the topology when the timings name none)."""
    scores = score(read_samples(paths), graph)
    warnings = []
    chosen = list(nodes or [])
    if not chosen:
        chosen = list(dict.fromkeys(n for s in scores for n in s.nodes))
    if len(chosen) < 2 and graph is not None:
        chosen = list(graph.nodes)
    if graph is not None:
        order = {name: i for i, name in enumerate(graph.nodes)}
        chosen.sort(key=lambda n: order.get(n, len(order)))
    plan = plan_sweep(chosen, graph) if len(chosen) >= 2 else None
    if plan is None:
        warnings.append("fewer than 2 nodes known: no sweep plan (give --nodes)")
    if len({s.metric for s in scores}) > 1:
        warnings.append("times and bandwidths are scored separately (each against its fastest)")
    return StragglerReport(inputs=[str(p) for p in paths], scores=scores,
                           stragglers=[s for s in scores if s.straggler], plan=plan,
                           warnings=warnings)
