"""The communicator layer: which communicators slowed with the episode, and which ranks arrived
late at them.

A communicator's busbw at a sample is the median over the ranks that reported it (NCCL Inspector
writes one record per rank). It **drops** with the episode when that median moves (`moves.move`,
metric `busbw`) and falls by `DROP_AT` or more.

**Arrival**: Inspector times a collective on each rank from that rank's launch to its end, so a
rank that arrives late measures it short and reports a busbw above its peers', who waited for it
(the same reading as NVRx's and NCCL profiler's "who arrived last"). A rank is **late** when its
busbw over the communicator's median rises with the episode by `LATE_AT` or more (`MOVES_AT`
noise levels too), in a communicator where fewer than `LATE_SHARE` of the ranks do (when most
ranks "arrive late", the median is no longer the on-time reference). No side effects.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fabtui.triage.slowjob.frame import CommFrame, Frame
from fabtui.triage.slowjob.moves import MOVES_AT, Move, move

DROP_AT = 0.03
"""A communicator whose busbw falls 3 % or more with the episode slowed with it [inference: above
the ~1 % run-to-run spread of nccl-tests busbw, `sim` noise and published runs alike]."""
LATE_AT = 0.10
"""A rank whose busbw rises 10 % above its peers' with the episode arrived late [inference]."""
LATE_SHARE = 0.4


@dataclass(frozen=True)
class CommMove:
    """A communicator's busbw in the episode against outside it."""

    comm: CommFrame
    move: Move

    @property
    def name(self) -> str:
        """The communicator's label (`dp-r3`), else its id."""
        return self.comm.info.label or self.comm.info.id

    @property
    def dropped(self) -> bool:
        """It slowed with the episode."""
        return self.move.moving and self.move.relative <= -DROP_AT


@dataclass(frozen=True)
class Late:
    """A rank that arrived late at a communicator's collectives during the episode."""

    rank: int
    comm: str
    ahead: float
    """Its busbw over its peers' median, during the episode (1.6: 60 % above)."""


def _median_rows(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    with np.errstate(all="ignore"):
        out = np.full(x.shape[1], np.nan)
        finite = np.isfinite(x).any(axis=0)
        if finite.any():
            out[finite] = np.nanmedian(x[:, finite], axis=0)
    return out


def comm_moves(frame: Frame, inside: npt.NDArray[np.bool_],
               outside: npt.NDArray[np.bool_]) -> list[CommMove]:
    """Every communicator with busbw on both sides of the episode, most dropped first."""
    found = []
    for comm in frame.comms:
        result = move("busbw", _median_rows(comm.busbw), inside, outside)
        if result is not None:
            found.append(CommMove(comm, result))
    return sorted(found, key=lambda c: -c.move.z)


def late_ranks(frame: Frame, inside: npt.NDArray[np.bool_],
               outside: npt.NDArray[np.bool_]) -> list[Late]:
    """Ranks that arrived late during the episode, per communicator (see the module)."""
    found: list[Late] = []
    for comm in frame.comms:
        if comm.ranks.size < 3:
            continue
        median = _median_rows(comm.busbw)
        with np.errstate(all="ignore"):
            ratio = comm.busbw / median[None, :]
        a = np.nanmedian(ratio[:, inside], axis=1) if inside.any() else None
        b = np.nanmedian(ratio[:, outside], axis=1) if outside.any() else None
        if a is None or b is None:
            continue
        spread = np.nanmedian(np.abs(ratio[:, outside] - b[:, None]), axis=1) * 1.4826
        scale = np.maximum(spread, 0.02)
        late = np.flatnonzero(((a - b) >= LATE_AT) & ((a - b) / scale >= MOVES_AT))
        if 0 < late.size < LATE_SHARE * comm.ranks.size:
            found += [Late(int(comm.ranks[i]), comm.info.id, float(a[i])) for i in late]
    return found
