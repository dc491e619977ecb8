"""The entry point: `generate(out, spec, graph)` writes a simulated hung job's files and its
manifest (the files are listed in the package docstring).
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterable, Iterator
from heapq import merge
from pathlib import Path
from typing import Any

from fabtui.sim.hangjob.artefacts import fr_dump, ras_report, torchrun_summary
from fabtui.sim.hangjob.cases import build
from fabtui.sim.hangjob.lines import c10_day, init_lines, iteration, iteration_count, iterations
from fabtui.sim.hangjob.spec import CASES, Job, JobSpec, Rank, SpecError
from fabtui.topology.graph import FabricGraph


def _rank_lines(job: Job, r: Rank, graph: FabricGraph) -> Iterator[str]:
    yield from init_lines(job, r, graph)
    yield iterations(job, r)
    for _, line in r.events:
        yield line


def _combined(job: Job, graph: FabricGraph) -> Iterator[str]:
    """`job.log`: srun -l prefixes (one task per node), phases in time order."""
    logged = [r for r in job.ranks if r.has_log]
    for r in logged:
        for line in init_lines(job, r, graph):
            yield f"{r.node_index}: {line}"
    for step in range(1, iteration_count(job) + 1):
        for r in logged:
            yield f"{r.node_index}: {iteration(job, r, step)}"
    streams = [[(t, r.rank, f"{r.node_index}: {line}") for t, line in r.events] for r in logged]
    for _, _, line in merge(*streams):
        yield line
    for index in sorted({r.node_index for r in logged}):
        node_ranks = [r for r in logged if r.node_index == index]
        for r in node_ranks:
            if r.exit is not None and r.exit[1] == -15:
                yield (f"{index}: W{c10_day(job, r.exit[0])} {r.pid - 50} torch/distributed/"
                       f"elastic/multiprocessing/api.py:897] Sending process {r.pid} closing "
                       "signal SIGTERM")
        for line in torchrun_summary(job, node_ranks):
            yield f"{index}: {line}"


def _write_lines(path: Path, lines: Iterable[str]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as out:
        batch: list[str] = []
        for line in lines:
            batch.append(line)
            if len(batch) >= 4096:
                out.write("\n".join(batch) + "\n")
                batch.clear()
        if batch:
            out.write("\n".join(batch) + "\n")


def generate(out: Path, spec: JobSpec, graph: FabricGraph) -> dict[str, Any]:
    """Write the hung job `spec` describes under `out` (created) and return its manifest.

    Raises `SpecError` for a spec the topology or the case cannot honour, or an `out` that is
    not an empty folder.
    Side effects: creates `out` and writes the files listed in the package docstring.
    """
    job = build(spec, graph)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        # Files of an earlier job left beside these would contradict expected.json.
        raise SpecError(f"{out}: not an empty folder (give a new or empty one)")
    out.mkdir(parents=True, exist_ok=True)
    files: list[str] = []
    for r in job.ranks:
        if r.has_log:
            _write_lines(out / f"rank-{r.rank}.log", _rank_lines(job, r, graph))
    files.append("rank-N.log")
    if spec.combined:
        _write_lines(out / "job.log", _combined(job, graph))
        files.append("job.log")
    if spec.flight_recorder:
        folder = out / "fr"
        folder.mkdir(exist_ok=True)
        for r in job.ranks:
            if not r.has_log:
                continue
            dump = fr_dump(job, r)
            (folder / f"nccl_trace_rank_{r.rank}").write_bytes(pickle.dumps(dump, protocol=2))
            as_json = dict(dump, entries=[dict(e, process_group=list(e["process_group"]))
                                          for e in dump["entries"]])
            (folder / f"nccl_trace_rank_{r.rank}.json").write_text(json.dumps(as_json) + "\n",
                                                                   encoding="utf-8")
        files += ["fr/nccl_trace_rank_N", "fr/nccl_trace_rank_N.json"]
    ras = spec.ras if spec.ras is not None else job.minor >= 24
    if ras:
        if job.minor < 24:
            raise SpecError(f"--ras: NCCL {job.nccl} has no RAS (2.24 and later)")
        (out / "ras").mkdir(exist_ok=True)
        (out / "ras" / "ncclras-status.txt").write_text(ras_report(job), encoding="utf-8")
        files.append("ras/ncclras-status.txt")
    manifest = {"case": spec.case, "description": CASES[spec.case], "seed": spec.seed,
                "ranks": spec.ranks, "nccl": job.nccl, "torch": job.torch,
                "topology": graph.topology.cluster.name, **job.truth, "files": files,
                "logged_ranks": sum(1 for r in job.ranks if r.has_log)}
    (out / "expected.json").write_text(json.dumps(manifest, indent=2, default=str) + "\n",
                                       encoding="utf-8")
    return manifest
