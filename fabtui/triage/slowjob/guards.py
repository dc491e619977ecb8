"""What a "healthy" verdict must not hide: a job that stopped stepping, and a fault on the job's
path that the step time has not shown yet.

A step-time series only says how long the steps took that happened. A job that hangs or died
(a link down longer than the IB retry window, a PFC watchdog cutting a NIC off, a dead leaf)
makes no more steps: its series just ends, and the steps before the end held their baseline.
Read alone that is "healthy", the worst answer for a job that is dead. Likewise an optic whose
receiver already loses codewords, or a link that went down, is a fault on the job's path even
while the steps have not slowed (go-back-N costs little until the loss grows). `stopped_at`
finds the first; `path_faults` the second, from the fabric series of the ports the job's ranks
reach. Limits: docs/thresholds.md section 8. No side effects.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from fabtui.triage.slowjob import words
from fabtui.triage.slowjob.frame import Array, Frame
from fabtui.triage.slowjob.reach import Reach

STOP_SAMPLES = 2
"""The job stopped when its step times end at least this many grid steps before the window
does, and at least 3 of its own sampling intervals (a trainer that logs every minute on a 15 s
grid is not stopped between two of its lines) [inference]."""
UNCORRECTABLE_AT = 1.0
"""Uncorrectable codewords per second that count as frames lost on the path (4 x the
moves floor of 0.25/s) [inference]."""
BER_AT = 1e-5
"""Pre-FEC BER at which the probe catalog calls a port critical (`nic.ethtool`, `switch.fec`,
docs/thresholds.md)."""
PAUSED_AT = 0.5
"""Share of a sample a port is held paused (or holds its peer paused) that is a storm, not
congestion [inference]."""
_SUSTAINED = 2
"""Samples a level reading must hold (one noisy sample is not a fault)."""


def stopped_at(frame: Frame, job: Array) -> float | None:
    """When the job's last step time ended, where it ends well before the window (see
    `STOP_SAMPLES`); None when it steps to the end, or never stepped."""
    seen = np.flatnonzero(np.isfinite(job))
    if seen.size == 0 or frame.t.size < 2:
        return None
    grid = float(frame.t[1] - frame.t[0])
    own = float(np.median(np.diff(frame.t[seen]))) if seen.size > 1 else grid
    last = float(frame.t[seen[-1]])
    gap = float(frame.t[-1]) - last
    return last if gap >= max(STOP_SAMPLES * grid, 3 * own) else None


def _first(t: Array, hit: npt.NDArray[np.bool_]) -> str:
    return words.clock(float(t[int(np.argmax(hit))]))


def path_faults(frame: Frame, reach: Reach) -> list[str]:
    """Faults the fabric series show on the ports the job's ranks reach, one sentence each
    (the port, what, from when): a link down, uncorrectable FEC, a pre-FEC BER past the
    catalog's critical limit, a port held paused most of a sample. Sorted by port."""
    found: list[str] = []
    t = frame.t
    for key in sorted(reach.ports):
        port = reach.ports[key]
        what: list[str] = []
        up = frame.series(key, "link_up")
        if up is not None and (down := np.isfinite(up) & (up < 0.5)).any():
            what.append(f"link down from {_first(t, down)} UTC ({int(down.sum())} of "
                        f"{int(np.isfinite(up).sum())} samples)")
        lost = frame.series(key, "fec_uncorrectable_per_s")
        if lost is not None and (hit := np.isfinite(lost) & (lost >= UNCORRECTABLE_AT)).any():
            what.append(f"FEC uncorrectable up to {words.value('x', float(np.nanmax(lost)))} "
                        f"from {_first(t, hit)} UTC")
        ber = frame.series(key, "pre_fec_ber")
        if ber is not None and \
                int((hit := np.isfinite(ber) & (ber >= BER_AT)).sum()) >= _SUSTAINED:
            what.append(f"pre-FEC BER up to {float(np.nanmax(ber)):.1e} (critical at "
                        f"{BER_AT:.0e}) from {_first(t, hit)} UTC")
        for metric, verb in (("pause_share_rx", "held paused"),
                             ("pause_share_tx", "holds its peer paused")):
            share = frame.series(key, metric)
            if share is not None and \
                    int((hit := np.isfinite(share) & (share >= PAUSED_AT)).sum()) >= _SUSTAINED:
                what.append(f"{verb} up to {float(np.nanmax(share)) * 100:.0f} % of the time "
                            f"from {_first(t, hit)} UTC")
        if what:
            found.append(f"{key} ({port.layer}): {'; '.join(what)}")
    return found


__all__ = ["path_faults", "stopped_at"]
