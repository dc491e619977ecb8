"""Does a series move at the same moments as an episode?

A series moves with an episode when its median inside the episode differs from its median
outside every episode by `MOVES_AT` noise levels, in the direction that hurts (pause up, receive
power down). The noise level is the sample-to-sample noise of the series outside the episodes
(`changepoints.noise_sigma`: a slow ramp before the episode, such as an ageing laser's light,
does not count as noise), but never below the metric's `FLOOR` (what a reading of that metric
can be trusted to: a counter flat at zero outside the episode would otherwise "move" on one
frame). Error ratios are compared in decades (log10). Comparing inside with outside, rather
than reading one level, is what ties an element to the episode: a port that pauses all day is
not the reason the job slowed at 03:10. No side effects.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fabtui.triage.slowjob.changepoints import noise_sigma
from fabtui.triage.slowjob.frame import Array

MOVES_AT = 4.0
"""Noise levels between inside and outside for a series to count as moving [inference: 4
sigma keeps a 240-sample window's false alarms near 1 in 30,000 series under normal noise]."""

DIRECTION: dict[str, int] = {
    "pause_share_rx": 1, "pause_share_tx": 1, "pause_rx_per_s": 1, "pause_tx_per_s": 1,
    "ecn_marked_per_s": 1, "cnp_per_s": 1, "out_of_sequence_per_s": 1,
    "fec_corrected_per_s": 1, "fec_uncorrectable_per_s": 1, "pre_fec_ber": 1,
    "rx_power_dbm": -1, "link_up": -1, "speed_gbps": -1, "util": 1,
    "gpu_sm_clock_mhz": -1, "gpu_throttle": 1, "gpu_util": -1, "xid": 1,
    "nvlink_errors_per_s": 1, "busbw": -1,
}
"""+1: the metric rising hurts; -1: falling hurts."""
FLOOR: dict[str, float] = {
    "pause_share_rx": 0.02, "pause_share_tx": 0.02, "pause_rx_per_s": 200.0,
    "pause_tx_per_s": 200.0, "ecn_marked_per_s": 1000.0, "cnp_per_s": 1000.0,
    "out_of_sequence_per_s": 5.0, "fec_corrected_per_s": 0.0, "fec_uncorrectable_per_s": 0.25,
    "pre_fec_ber": 0.25, "rx_power_dbm": 0.3, "link_up": 0.1, "speed_gbps": 1.0,
    "util": 0.02,
    "gpu_sm_clock_mhz": 30.0, "gpu_throttle": 0.1, "gpu_util": 0.03, "xid": 0.1,
    "nvlink_errors_per_s": 1.0,
}
"""The smallest noise level trusted per metric (in the metric's unit; decades for BER)."""
RELATIVE_FLOOR: dict[str, float] = {"fec_corrected_per_s": 0.1, "busbw": 0.01, "util": 0.02}
"""Metrics whose noise floor is also a share of their level outside (corrected codewords run
in the millions per second on a healthy link; busbw and utilisation scale with the job)."""
_LOG = frozenset({"pre_fec_ber"})


@dataclass(frozen=True)
class Move:
    """How a series behaved inside an episode against outside it."""

    metric: str
    before: float
    during: float
    z: float
    """Noise levels moved in the hurting direction (negative: it moved the other way)."""

    @property
    def moving(self) -> bool:
        """Moved at least `MOVES_AT` noise levels in the hurting direction."""
        return self.z >= MOVES_AT

    @property
    def relative(self) -> float:
        """during / before - 1 (0 when before is 0)."""
        return self.during / self.before - 1 if self.before else 0.0


def move(metric: str, x: Array, inside: npt.NDArray[np.bool_],
         outside: npt.NDArray[np.bool_]) -> Move | None:
    """`x` inside the episode against outside, or None when either side has no data."""
    values = np.log10(np.maximum(x, 1e-18)) if metric in _LOG else x
    a, b = values[inside], values[outside]
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if a.size == 0 or b.size == 0:
        return None
    before, during = float(np.median(b)), float(np.median(a))
    scale = max(noise_sigma(b), FLOOR.get(metric, 0.0),
                RELATIVE_FLOOR.get(metric, 0.0) * abs(before), 1e-12)
    z = DIRECTION.get(metric, 1) * (during - before) / scale
    if metric in _LOG:
        before, during = 10 ** before, 10 ** during
    return Move(metric, before, during, z)


def moves(metrics: dict[str, Array], inside: npt.NDArray[np.bool_],
          outside: npt.NDArray[np.bool_], wanted: frozenset[str] | None = None) -> list[Move]:
    """The metrics of one element that move with the episode, strongest first."""
    found = []
    for name, x in metrics.items():
        if name not in DIRECTION or (wanted is not None and name not in wanted):
            continue
        result = move(name, x, inside, outside)
        if result is not None and result.moving:
            found.append(result)
    return sorted(found, key=lambda m: -m.z)
