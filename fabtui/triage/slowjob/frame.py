"""The slow-job inputs as numpy arrays on one time grid: what every other step of the engine reads.

`SlowJobInputs` (pydantic, JSON) hold one list per series with its own times; the engine wants a
rank x time matrix of step times, a rank x time matrix of busbw per communicator, and one array
per (element, metric), all on the same grid, so an episode is one boolean mask that applies to
every series. `frame_from_inputs` resamples onto a grid at the step series' own resolution
(linear interpolation between samples, NaN outside a series' own span); a producer that already
has arrays on a grid (the demo, a benchmark) builds `Frame` directly and skips the lists.
No side effects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from fabtui.model.slowjob import Communicator, SlowJobInputs

Array = npt.NDArray[np.float64]
DEFAULT_RESOLUTION_S = 15.0
"""Grid step when the inputs do not say (a Prometheus scrape interval)."""
MAX_SAMPLES = 20_000
"""A window longer than this many grid steps is read at a coarser step (memory stays bounded)."""


@dataclass
class CommFrame:
    """One communicator: its description, the global ranks that reported busbw, and their
    busbw (GB/s) as a (ranks x time) matrix."""

    info: Communicator
    ranks: npt.NDArray[np.int64]
    busbw: Array


@dataclass
class Frame:
    """Everything on one grid `t` (Unix seconds)."""

    job: str
    t: Array
    ranks: npt.NDArray[np.int64]
    steps: Array
    """(ranks x time) step seconds; NaN where a rank reported nothing."""
    comms: list[CommFrame] = field(default_factory=list)
    fabric: dict[str, dict[str, Array]] = field(default_factory=dict)
    """Element key -> metric -> values on the grid."""
    sources: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    job_log: str | None = None
    """The job's log as a path on its nodes (`SlowJobInputs.job_log`); None: not known."""

    def series(self, element: str, metric: str) -> Array | None:
        """The values of `metric` on `element`, or None when nobody measured it."""
        return self.fabric.get(element, {}).get(metric)


def _grid(inputs: SlowJobInputs) -> Array:
    gaps = [np.diff(np.asarray(s.t, dtype=float)) for s in inputs.steps if len(s.t) > 1]
    joined = np.concatenate(gaps) if gaps else np.empty(0)
    positive = joined[joined > 0]
    step = float(np.median(positive)) if positive.size else DEFAULT_RESOLUTION_S
    span = max(inputs.end - inputs.start, 0.0)
    step = max(step, span / MAX_SAMPLES, 1.0)
    return np.arange(inputs.start, inputs.end + step / 2, step, dtype=float)


def on_grid(t: Sequence[float], v: Sequence[float], grid: Array) -> Array:
    """`v` sampled at `t`, read at the grid's times: linear between samples, NaN outside."""
    times = np.asarray(t, dtype=float)
    values = np.asarray(v, dtype=float)
    if times.size == 0:
        return np.full(grid.shape, np.nan)
    order = np.argsort(times, kind="stable")
    times, values = times[order], values[order]
    if times.size == 1:
        out = np.full(grid.shape, np.nan)
        out[np.abs(grid - times[0]) <= (grid[1] - grid[0] if grid.size > 1 else 0)] = values[0]
        return out
    read: Array = np.interp(grid, times, values, left=np.nan, right=np.nan)
    return read


def frame_from_inputs(inputs: SlowJobInputs) -> Frame:
    """The inputs on one grid (see the module's docstring)."""
    grid = _grid(inputs)
    by_rank: dict[int, Array] = {}
    for series in inputs.steps:
        by_rank[series.rank] = on_grid(series.t, series.step_s, grid)
    ranks = np.array(sorted(by_rank), dtype=np.int64)
    steps = np.vstack([by_rank[int(r)] for r in ranks]) if ranks.size else \
        np.empty((0, grid.size))
    comms: list[CommFrame] = []
    grouped: dict[str, dict[int, Array]] = {}
    for bw in inputs.busbw:
        grouped.setdefault(bw.comm, {})[bw.rank] = on_grid(bw.t, bw.busbw_gbs, grid)
    described = {c.id: c for c in inputs.communicators}
    warnings = list(inputs.warnings)
    for comm_id, rows in grouped.items():
        info = described.get(comm_id)
        if info is None:
            info = Communicator(id=comm_id, nranks=len(rows))
            warnings.append(f"busbw for communicator {comm_id} that the inputs do not describe")
        members = np.array(sorted(rows), dtype=np.int64)
        comms.append(CommFrame(info=info, ranks=members,
                               busbw=np.vstack([rows[int(r)] for r in members])))
    fabric = {element: {metric: on_grid(s.t, s.v, grid) for metric, s in metrics.items()}
              for element, metrics in inputs.fabric.items()}
    return Frame(job=inputs.job, t=grid, ranks=ranks, steps=steps, comms=comms, fabric=fabric,
                 sources=list(inputs.sources), warnings=warnings, job_log=inputs.job_log)
