"""A real job's slow-chain inputs from the files it leaves (issue 39): training logs for the
step times, NCCL Inspector logs or textfiles for the communicators' busbw, read with their
parsers (`training-log`, `nccl-inspector`) and turned into `SlowJobInputs` by
`fabtui.triage.slowinputs`. The fabric's series are not in such files: a chain read from them
alone stops at the communicator and says what it lacked; `fabtui triage slow --job` reads the
fabric from Prometheus.

Side effects: reads the named files (or the files of the named folders).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from fabtui.errors import InputError, Problem
from fabtui.model.parsed.nccl_inspector import NcclInspector
from fabtui.model.parsed.training_log import TrainingLog
from fabtui.model.slowjob import BusbwSeries, Communicator, SlowJobInputs, StepSeries
from fabtui.parsers.errors import ParseError
from fabtui.triage.slowinputs import inspector_busbw, log_step_series, prom_busbw

MAX_BYTES = 512 * 1024 * 1024
"""A file larger than this is refused (an Inspector log of a long job can grow without bound:
select a window of it first)."""


def _files(paths: Sequence[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        found += sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    return found


def _read(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_BYTES:
            raise InputError.single(str(path), None, f"larger than {MAX_BYTES >> 20} MiB: "
                                                     "cut the window out of it first")
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError.single(str(path), None, f"cannot read: {exc.strerror or exc}") \
            from None


def _parse(path: Path, kind: str) -> TrainingLog | NcclInspector:
    from fabtui.parsers import registry

    try:
        parsed = registry.get(kind).parse(_read(path))
    except ParseError as exc:
        raise InputError.single(str(path), exc.line, exc.message) from None
    assert isinstance(parsed, TrainingLog | NcclInspector)
    return parsed


def inputs_from_files(job: str, logs: Sequence[Path], inspector: Sequence[Path], *,
                      utc_offset_s: float = 0.0, world_size: int | None = None,
                      rank_at: Callable[[str, int], int | None] | None = None,
                      job_log: str | None = None) -> SlowJobInputs:
    """The job's inputs from its training logs and Inspector files (folders are read file by
    file); `job_log`, the job's log as a path on its nodes, is kept as given. Raises
    `InputError` with `file:line: what is wrong` for a file that is not what it was given
    as."""
    steps: list[StepSeries] = []
    comms: list[Communicator] = []
    busbw: list[BusbwSeries] = []
    warnings: list[str] = []
    problems: list[Problem] = []
    for path in _files(logs):
        try:
            parsed = _parse(path, "training-log")
        except InputError as exc:
            problems += exc.problems
            continue
        assert isinstance(parsed, TrainingLog)
        warnings += [f"{path}: {w}" for w in parsed.warnings]
        found, more = log_step_series(parsed, origin=str(path), utc_offset_s=utc_offset_s)
        steps += found
        warnings += more
    for path in _files(inspector):
        try:
            parsed = _parse(path, "nccl-inspector")
        except InputError as exc:
            problems += exc.problems
            continue
        assert isinstance(parsed, NcclInspector)
        warnings += [f"{path}: {w}" for w in parsed.warnings]
        if parsed.shape == "json":
            c, b, more = inspector_busbw(parsed, origin=str(path), world_size=world_size)
        else:
            series = [(g.labels, [(0.0, g.value)]) for g in parsed.gauges
                      if g.metric == "nccl_bus_bandwidth_gbs" and g.value is not None]
            c, b, more = prom_busbw(series, rank_at=rank_at or (lambda host, gpu: None))
            more.append(f"{path}: a textfile holds one moment (its samples carry no time); "
                        "read the Inspector's series from Prometheus for a window")
        comms += [x for x in c if x.id not in {y.id for y in comms}]
        busbw += b
        warnings += more
    if problems:
        raise InputError(problems)
    times = [t for s in steps for t in s.t] + [t for b in busbw for t in b.t]
    if not times:
        raise InputError.single(", ".join(map(str, [*logs, *inspector])) or "(no file)", None,
                                "no step time or busbw sample with a time: nothing to place "
                                "in a window")
    return SlowJobInputs(job=job, start=min(times), end=max(times), steps=steps,
                         communicators=comms, busbw=busbw,
                         sources=[str(p) for p in [*logs, *inspector]], warnings=warnings,
                         job_log=job_log)
