"""Change points in one series: binary segmentation of the mean with a MAD-based penalty.

Why this method (issue 39 asks for a well-kept library such as `ruptures` or a justified method
of our own): the question is "where does the level of the job's step time change", on a few
hundred to a few thousand samples. Binary segmentation (Scott and Knott 1974; the `Binseg`
search of ruptures, Truong, Oudre and Vayatis, "Selective review of offline change point
detection methods", Signal Processing 2020) finds the split that lowers the squared error of a
piecewise-constant fit most, keeps it if the gain beats a penalty, and recurses into both
halves: O(n log n) with cumulative sums, a dozen lines of numpy, no new dependency.

Robustness, because step times are not Gaussian (checkpoints and garbage collection add lone
spikes):

- the noise level sigma is the MAD of the *first differences* / sqrt(2) (x 1.4826 for a normal
  scale), which a level shift does not inflate (a shift adds one large difference, a lone
  spike two; the median ignores both);
- the series is winsorized at its running median (9 samples) +- 5 sigma before segmenting, so
  a spike cannot pay for a segment of its own while a level shift is kept;
- the penalty is `PENALTY_K` x sigma^2 x log(n) (BIC's 2 sigma^2 log n for one new mean, made
  stricter), and a segment is at least `MIN_SEGMENT` samples long.

PELT would give the exact optimum of the same cost; on series this short with few changes,
binary segmentation finds the same splits (Truong et al., section 5) and is simpler to read.
No side effects.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]
PENALTY_K = 3.0
MIN_SEGMENT = 4
"""Samples (one minute at 15 s): shorter stretches are noise to this engine."""
MAD_SCALE = 1.4826
"""MAD x this = the standard deviation of a normal distribution."""


def mad(x: Array) -> float:
    """Median absolute deviation (NaNs ignored; 0.0 for no data)."""
    values = x[np.isfinite(x)]
    if values.size == 0:
        return 0.0
    return float(np.median(np.abs(values - np.median(values))))


def noise_sigma(x: Array) -> float:
    """The sample-to-sample noise of `x`, robust to level shifts and spikes."""
    values = x[np.isfinite(x)]
    if values.size < 3:
        return 0.0
    return float(MAD_SCALE * mad(np.diff(values)) / np.sqrt(2.0))


def _cost(csum: Array, csum2: Array, i: int, j: int) -> float:
    n = j - i
    total = csum[j] - csum[i]
    return float(csum2[j] - csum2[i] - total * total / n)


def _best_split(csum: Array, csum2: Array, i: int, j: int, min_size: int) -> tuple[int, float]:
    """(split point, gain) for [i, j), or (-1, 0) when no split keeps both sides long enough."""
    if j - i < 2 * min_size:
        return -1, 0.0
    k = np.arange(i + min_size, j - min_size + 1)
    left_n, right_n = k - i, j - k
    left_s = csum[k] - csum[i]
    right_s = csum[j] - csum[k]
    total_s = csum[j] - csum[i]
    # cost(i,k) + cost(k,j) = sum of squares - left_s^2/left_n - right_s^2/right_n
    gain = left_s ** 2 / left_n + right_s ** 2 / right_n - total_s ** 2 / (j - i)
    best = int(np.argmax(gain))
    return int(k[best]), float(gain[best])


def segments(x: Array, *, min_size: int = MIN_SEGMENT,
             penalty_k: float = PENALTY_K) -> list[tuple[int, int]]:
    """[start, end) index ranges of the constant-level stretches of `x` (NaNs filled with the
    median first)."""
    n = x.size
    if n == 0:
        return []
    values = x.astype(float).copy()
    finite = np.isfinite(values)
    if not finite.any():
        return [(0, n)]
    centre = float(np.median(values[finite]))
    values[~finite] = centre
    sigma = noise_sigma(values)
    if sigma <= 0:
        sigma = max(1e-9, 1e-3 * abs(centre))
    values = winsorize(values, sigma)
    csum = np.concatenate(([0.0], np.cumsum(values)))
    csum2 = np.concatenate(([0.0], np.cumsum(values * values)))
    penalty = penalty_k * sigma * sigma * np.log(max(n, 2))
    found: list[tuple[int, int]] = []
    stack = [(0, n)]
    while stack:
        i, j = stack.pop()
        split, gain = _best_split(csum, csum2, i, j, min_size)
        if split < 0 or gain <= penalty:
            found.append((i, j))
            continue
        stack += [(i, split), (split, j)]
    return sorted(found)


def winsorize(values: Array, sigma: float) -> Array:
    """Lone spikes clipped to the local median +- 5 sigma (a 9-sample running median, so a
    level shift is kept while a one-sample spike is not)."""
    n = values.size
    if n < 9:
        return values
    padded = np.pad(values, 4, mode="edge")
    windows = np.lib.stride_tricks.sliding_window_view(padded, 9)
    local = np.median(windows, axis=1)
    return np.clip(values, local - 5 * sigma, local + 5 * sigma)


def rolling_spread(x: Array, width: int = 8) -> Array:
    """Robust spread (MAD x 1.4826) of `x` over a centred window of `width` samples."""
    n = x.size
    if n < width:
        return np.full(n, MAD_SCALE * mad(x))
    half = width // 2
    padded = np.pad(x, (half, width - half - 1), mode="edge")
    windows = np.lib.stride_tricks.sliding_window_view(padded, width)
    centre = np.nanmedian(windows, axis=1)
    return MAD_SCALE * np.nanmedian(np.abs(windows - centre[:, None]), axis=1)
