"""What a live status source yields, and the protocol it implements: typed updates, so no
update is smuggled through a pseudo-probe (the status model takes them, the poller drives the
source)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from fabtui.model.probe import ProbeResult


@dataclass(frozen=True)
class Results:
    """A probe result (measured, or the error of a device that did not answer), fresh for
    `stale_after` seconds."""

    result: ProbeResult
    stale_after: float


@dataclass(frozen=True)
class Quiet:
    """Elements (`keys`, of `device`) a source found below every limit of `probes` at `at`
    (epoch seconds) without reading their values: each is ok for those probes, fresh for
    `stale_after`."""

    device: str
    keys: tuple[str, ...]
    probes: tuple[str, ...]
    at: float
    stale_after: float


@dataclass(frozen=True)
class NotJudged:
    """Elements a source has series of but has not judged yet (Prometheus's first sieve,
    spread over the first refreshes): shown as not judged, never ok, until a verdict comes.
    Each replaces the last (empty: none left); `why` says why, for a detail panel."""

    keys: frozenset[str]
    why: str = ""


@dataclass(frozen=True)
class History:
    """The past of some sparklines: element key -> history name -> values, oldest first."""

    series: Mapping[str, Mapping[str, Sequence[float]]]


@dataclass(frozen=True)
class SourceFailed:
    """The source could not read this round (why, in one line): the poller shows it, as it
    shows a poll that raised."""

    reason: str


StatusUpdate = Results | Quiet | NotJudged | History | SourceFailed
"""What a status source yields: typed, so no update is smuggled through a pseudo-probe."""


class StatusSource(Protocol):
    """Where live results come from: one poll yields each update (`StatusUpdate`) as it
    arrives. The probe poller (`workspace/probesource.py`) is one; the Prometheus reader
    (`workspace/promsource.py`) is another.

    The contract on failure: a poll that raises (any `Exception`), or yields `SourceFailed`,
    is a failed round. The updates it yielded before stay; the poller shows the user why (a
    `PollState.FAILED` snapshot, in the app's header and a notification) and polls again after
    a back-off. A source need not catch its own failures to be safe, and should not hide them:
    a target that did not answer is a result with its error, a source that cannot read at all
    raises or says `SourceFailed`."""

    def poll(self) -> AsyncGenerator[StatusUpdate, None]:
        """One poll round's updates, as they come (raises: the round failed)."""
        ...
