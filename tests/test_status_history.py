"""The sparklines' values the live status keeps: bounded per series in count and in bytes (a
`--mode full` read of a big fabric keeps ~40,000 series per 128 nodes), and never changed
under a snapshot already taken."""

from __future__ import annotations

import tracemalloc

from fabtui.model.verdict import Verdict
from fabtui.views.fabricmap import FabricMap
from fabtui.views.status import HISTORY, FabricStatus, PollState
from tests.support.tui_support import NOW, result, workspace

NICS = [f"node00{n}:mlx5_{i}" for n in range(1, 9) for i in range(8)]
COUNTERS = [f"rate.counter{i}" for i in range(10)]


def refresh(status: FabricStatus, round_no: int) -> None:
    for nic in NICS:
        status.apply(result("nic.ethtool", nic, [(nic, name, round_no + i * 0.001, Verdict.OK)
                                                 for i, name in enumerate(COUNTERS)]), 20)


def test_a_full_history_costs_under_a_kilobyte_a_series() -> None:
    """640 series at 60 values each: held under 850 bytes a series (a deque of float objects
    and its frozen tuple took ~2.5 KB; arrays grown by append, over-allocated, 895 bytes), and
    no more after 40 refreshes beyond full."""
    status = FabricStatus(FabricMap.build(workspace().graph()), clock=lambda: NOW)
    refresh(status, 0)
    status.snapshot(1, PollState.WAITING)
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for round_no in range(1, HISTORY):
            refresh(status, round_no)
        status.snapshot(2, PollState.WAITING)
        full = tracemalloc.take_snapshot()
        for round_no in range(HISTORY, HISTORY + 40):
            refresh(status, round_no)
        status.snapshot(3, PollState.WAITING)
        later = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    series = len(NICS) * len(COUNTERS)
    grown = sum(d.size_diff for d in full.compare_to(before, "filename"))
    assert grown / series < 850, f"{grown / series:.0f} bytes a series"
    after_full = sum(d.size_diff for d in later.compare_to(full, "filename"))
    assert after_full / series < 64, f"{after_full / series:.0f} bytes a series after full"


def test_a_snapshot_keeps_its_values_while_updates_arrive() -> None:
    status = FabricStatus(FabricMap.build(workspace().graph()), clock=lambda: NOW)
    for round_no in range(HISTORY + 5):
        refresh(status, round_no)
    taken = status.snapshot(1, PollState.WAITING).states[NICS[0]].history[COUNTERS[0]]
    copy = list(taken)
    refresh(status, 1000)
    assert list(taken) == copy and len(copy) == HISTORY and copy[-1] == HISTORY + 4
    latest = status.snapshot(2, PollState.WAITING).states[NICS[0]].history[COUNTERS[0]]
    assert list(latest) == [*copy[1:], 1000.0]
