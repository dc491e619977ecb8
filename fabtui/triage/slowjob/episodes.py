"""Slow and jittery episodes of a job's step time.

The job's step time at each grid sample is the median over its ranks (in a synchronous job
every rank's step ends at the same collective, so they agree; the median survives a rank that
did not report). `changepoints.segments` cuts it into constant-level stretches; the **baseline**
is the fastest stretch that is long enough to be the job's normal pace (`BASELINE_SHARE` of the
window); a stretch at least `SLOW_AT` above it (and `SIGMAS` noise levels, so a quiet job's 2 %
wobble is no episode) is **slow**, and neighbouring slow stretches merge. Outside slow stretches,
a run of at least `MIN_SEGMENT` samples whose rolling robust spread around the fitted levels is
`JITTER_AT` of the baseline or more, or where spikes recur (`SPIKE_SHARE` of a `SPIKE_WINDOW`
window), is **jitter**. Thresholds: docs/thresholds.md section 8.
No side effects.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fabtui.model.slowjob import Episode
from fabtui.triage.slowjob.changepoints import (
    MIN_SEGMENT,
    noise_sigma,
    rolling_spread,
    segments,
    winsorize,
)
from fabtui.triage.slowjob.frame import Array, Frame

SLOW_AT = 0.05
"""A stretch 5 % or more above the baseline is slow: the low end of the 5-30 % a degraded port
costs a collective (meta GCM PR #119, anchors 2.12)."""
JITTER_AT = 0.05
"""Robust spread (MAD x 1.4826) of 5 % of the step time or more is jitter: five times the ~1 %
step variance of a job whose stragglers are tamed, a quarter of the ~20 % of one whose are not
(Guard / NodeSweep 2026, anchors 2.12) [inference]."""
SIGMAS = 4.0
"""A slow stretch also stands this many noise levels above the baseline."""
SPIKE_WINDOW, SPIKE_SHARE = 24, 0.25
"""Spikes (samples `SLOW_AT` above the baseline) on a quarter of a 24-sample window (6 min at
15 s) are jitter: bursts recur. Healthy noise with a checkpoint spike on 2 % of samples reaches
six in a window about once in 500 hours [binomial; inference]."""
BASELINE_SHARE = 0.03
"""The baseline stretch covers at least this share of the window (and two minimum segments): a
job slow from its third minute on still has its first minutes as the pace to compare with."""


@dataclass(frozen=True)
class Found:
    """The episodes of a window and the masks every later step uses."""

    episodes: list[Episode]
    masks: list[npt.NDArray[np.bool_]]
    """One per episode: the grid samples inside it."""
    baseline: npt.NDArray[np.bool_]
    """Samples outside every episode (one sample of margin each side) while the job ran."""
    baseline_s: float | None
    job: Array
    """The job's step time per sample (median over ranks)."""


def rolling_share(flags: npt.NDArray[np.bool_], width: int) -> Array:
    """The share of True in a centred window of `width` samples (shorter at the ends; the
    whole series when it is shorter than `width`: numpy's "same" mode would return `width`
    values for it, and a job caught minutes after it started has fewer samples than that)."""
    width = max(1, min(width, flags.size))
    counts = np.convolve(flags.astype(float), np.ones(width), mode="same")
    span = np.convolve(np.ones(flags.size), np.ones(width), mode="same")
    share: Array = counts / np.maximum(span, 1.0)
    return share


def job_step(frame: Frame) -> Array:
    """Median step time over the ranks at each sample (NaN where none reported)."""
    if frame.steps.size == 0:
        return np.full(frame.t.shape, np.nan)
    with np.errstate(all="ignore"):
        finite = np.isfinite(frame.steps).any(axis=0)
        out = np.full(frame.t.shape, np.nan)
        if finite.any():
            out[finite] = np.nanmedian(frame.steps[:, finite], axis=0)
    return out


def _runs(mask: npt.NDArray[np.bool_]) -> list[tuple[int, int]]:
    """[start, end) of each run of True."""
    edges = np.diff(np.concatenate(([0], mask.astype(np.int8), [0])))
    return list(zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist(),
                    strict=True))


def find_episodes(frame: Frame) -> Found:
    """The slow and jittery episodes of the frame's job, in time order."""
    job = job_step(frame)
    n = job.size
    finite = np.isfinite(job)
    none = np.zeros(n, dtype=bool)
    if finite.sum() < 2 * MIN_SEGMENT:
        median = float(np.nanmedian(job)) if finite.any() else None
        return Found([], [], ~none, median, job)
    pieces = segments(job)
    # levels of the series with lone spikes clipped, as the segmentation saw it: two
    # checkpoints in a row must not make a four-sample stretch "slow"
    filled = np.where(finite, job, np.nanmedian(job))
    clean = np.where(finite, winsorize(filled, noise_sigma(filled) or 1e-9), np.nan)
    levels = [float(np.nanmedian(clean[i:j])) if finite[i:j].any() else np.inf
              for i, j in pieces]
    long_enough = [k for k, (i, j) in enumerate(pieces)
                   if j - i >= max(2 * MIN_SEGMENT, BASELINE_SHARE * n)]
    base_k = min(long_enough or range(len(pieces)), key=lambda k: levels[k])
    base = levels[base_k]
    sigma = noise_sigma(job[pieces[base_k][0]:pieces[base_k][1]]) or noise_sigma(job)
    slow = np.zeros(n, dtype=bool)
    fitted = np.empty(n)
    for (i, j), level in zip(pieces, levels, strict=True):
        fitted[i:j] = level if np.isfinite(level) else base
        if level >= base * (1 + SLOW_AT) and level - base >= SIGMAS * sigma:
            slow[i:j] = True
    for i, j in _runs(~slow):  # a short lull between two slow stretches is one episode
        if i > 0 and j < n and j - i < MIN_SEGMENT:
            slow[i:j] = True
    # jitter is spread around the fitted levels (a level shift is not jitter), or spikes that
    # recur: a lone checkpoint is neither
    spread = rolling_spread(np.where(finite, job - fitted, 0.0))
    with np.errstate(invalid="ignore"):
        spikes = (job >= base * (1 + SLOW_AT)) & ~slow
    # counted, not a share of a shorter window: two spikes in a 9-sample window (a storm that
    # stall prevention ended, a checkpoint) are not bursts that recur
    width = min(SPIKE_WINDOW, n)
    spiky = rolling_share(spikes, SPIKE_WINDOW) * np.convolve(
        np.ones(n), np.ones(width), mode="same") >= SPIKE_SHARE * SPIKE_WINDOW - 1e-9
    jitter = ((spread >= JITTER_AT * base) | spiky) & ~slow
    for i, j in _runs(jitter):  # jitter at the edge of a slow stretch is part of it
        if (i > 0 and slow[i - 1]) or (j < n and slow[j]):
            slow[i:j], jitter[i:j] = True, False
    episodes: list[Episode] = []
    masks: list[npt.NDArray[np.bool_]] = []
    marked = [(i, j, "slow") for i, j in _runs(slow)] + \
        [(i, j, "jitter") for i, j in _runs(jitter) if j - i >= MIN_SEGMENT]
    for i, j, _kind in sorted(marked):
        mask = np.zeros(n, dtype=bool)
        mask[i:j] = True
        masks.append(mask)
    outside = (~np.any(masks, axis=0) if masks else ~none) & finite
    guard = outside & np.roll(outside, 1) & np.roll(outside, -1)
    outside = guard if guard.sum() >= MIN_SEGMENT else outside
    baseline_s = float(np.nanmedian(job[outside])) if (outside & finite).any() else base
    step = float(np.median(np.diff(frame.t))) if frame.t.size > 1 else 0.0
    for (i, j, kind), mask in zip(sorted(marked), masks, strict=True):
        inside = job[mask]
        median = float(np.nanmedian(inside))
        magnitude = median / baseline_s - 1 if kind == "slow" else \
            float(np.nanstd(inside)) / baseline_s
        episodes.append(Episode(start=float(frame.t[i]), end=float(frame.t[j - 1]) + step,
                                kind="slow" if kind == "slow" else "jitter",
                                magnitude=round(magnitude, 4), baseline_s=round(baseline_s, 4),
                                median_s=round(median, 4), samples=int(j - i)))
    return Found(episodes, masks, outside, baseline_s, job)


def hot_moments(found: Found, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """The samples of an episode at which the step ran slow (`SLOW_AT` above the baseline):
    what "at the same moments" compares. A sustained slow stretch is slow at nearly all of
    them; a jittery one, or one made of short bursts, only at its spikes, and the element that
    moves at the spikes is the one that moves with it. Fewer than `MIN_SEGMENT` such samples:
    the whole episode."""
    if found.baseline_s is None:
        return mask
    with np.errstate(invalid="ignore"):
        hot = mask & (found.job >= found.baseline_s * (1 + SLOW_AT))
    return hot if int(hot.sum()) >= MIN_SEGMENT else mask
