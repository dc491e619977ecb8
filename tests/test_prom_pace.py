"""The sieve's budget paced by the refreshes' measured times (`fabtui.prom.pace`): a slow
refresh shrinks the next one's sieve, fast ones that used it grow it back to the most, the
floor holds, and a refresh meeting a busy Prometheus (a slow first round) sieves less at once.
The seconds are passed in: nothing here sleeps or reads a clock."""

from __future__ import annotations

import pytest

from fabtui.prom import pace
from fabtui.prom.catalog import Element
from fabtui.prom.pace import FAST_S, FLOOR, GROW, START_SHARE, TARGET_S, Pace
from fabtui.prom.resieve import SieveMemory

MOST = 8000
"""A most well above `FLOOR` (1,000), so that the pacing shows between them."""


def test_the_first_refresh_sieves_half_the_most_and_fast_ones_grow_it_to_the_most() -> None:
    paced = Pace()
    budgets = []
    for _ in range(5):
        budgets.append(paced.budget(MOST, 0.1))
        paced.after(0.4, budgets[-1])  # fast, the budget used up
    assert budgets[0] == round(START_SHARE * MOST) < MOST
    assert budgets == sorted(budgets) and budgets[-1] == MOST
    assert budgets[1] == GROW * budgets[0]  # at most GROW a refresh
    paced.after(0.4, MOST)
    assert paced.budget(MOST, 0.1) == MOST  # never over the most


def test_a_slow_refresh_shrinks_the_next_in_proportion_and_never_under_the_floor() -> None:
    paced = Pace(share=1.0)
    assert paced.budget(MOST, 0.1) == MOST
    paced.after(2 * TARGET_S, MOST)  # twice the target: half the budget
    assert paced.budget(MOST, 0.1) == MOST // 2
    paced.after(1.25 * TARGET_S, MOST // 2)
    assert paced.budget(MOST, 0.1) == round(MOST / 2 / 1.25)
    for _ in range(10):  # Prometheus stays slow: the floor, devices still judged
        paced.after(10 * TARGET_S, paced.last)
        assert paced.budget(MOST, 0.1) == FLOOR
    paced.after(0.5 * TARGET_S, FLOOR)  # fast again: back up from the floor at once
    assert paced.budget(MOST, 0.1) == round(GROW * FLOOR)


def test_a_refresh_near_the_target_keeps_the_budget() -> None:
    """Between `FAST_S` and the target a refresh neither shrinks nor grows the budget: a
    margin for refreshes that vary by what they sieve and the machine's load."""
    paced = Pace(share=0.5)
    before = paced.budget(MOST, 0.1)
    for seconds in (FAST_S * TARGET_S + 0.01, TARGET_S):
        paced.after(seconds, before)
        assert paced.budget(MOST, 0.1) == before
    paced.after(0.9 * FAST_S * TARGET_S, before)  # a tenth under: a ninth more
    assert paced.budget(MOST, 0.1) == round(before / 0.9)


def test_one_very_slow_refresh_shrinks_to_a_quarter_at_most() -> None:
    paced = Pace(share=1.0)
    paced.budget(MOST, 0.1)
    paced.after(30.0, MOST)
    assert paced.budget(MOST, 0.1) == MOST // 4


def test_a_fast_refresh_that_sieved_little_is_no_evidence() -> None:
    """After the first sieve a quiet refresh sieves almost nothing: its speed does not grow
    the budget (what a full budget costs was not measured)."""
    paced = Pace(share=0.5)
    before = paced.budget(MOST, 0.1)
    paced.after(0.3, 10)
    assert paced.budget(MOST, 0.1) == before


def test_a_busy_first_round_scales_this_refreshs_sieve_down() -> None:
    """The device clocks and the presence are asked before the sieve: when they took most of
    the target, Prometheus is busy now and this refresh sieves less (the floor at the
    target); a usual first round leaves the budget whole."""
    paced = Pace(share=1.0, measured=True)
    assert paced.budget(MOST, 0.3 * TARGET_S) == MOST
    assert paced.budget(MOST, 0.75 * TARGET_S) == MOST // 2
    assert paced.budget(MOST, 1.5 * TARGET_S) == FLOOR
    assert paced.share == 1.0  # the next refresh is paced by the times, not by this


def test_a_most_under_the_floor_is_the_budget() -> None:
    """A source allowed fewer elements than the floor (tests spread the demo's first sieve
    over refreshes so) keeps that budget whatever the times."""
    paced = Pace()
    for seconds in (0.1, 5.0, 0.1):
        assert paced.budget(100, 0.0) == 100
        paced.after(seconds, 100)


@pytest.mark.parametrize("slow", [False, True])
def test_slow_refreshes_spread_the_first_sieve_over_more_refreshes_each_sieving_less(
        slow: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """`SieveMemory` planned by the paced budget, 300 devices of 10 elements never sieved:
    while every refresh takes 3 s, each sieves about the floor (never more than the floor and
    one device); at 0.4 s the budget grows to the most; every device is sieved either way."""
    monkeypatch.setattr(pace, "FLOOR", 50)
    devices = {f"node{i:03d}": 10.0 for i in range(300)}
    times: dict[Element, dict[str, float]] = {"nic": devices}
    sizes: dict[tuple[str, Element], int] = {(d, "nic"): 10 for d in devices}
    memory, paced = SieveMemory(budget=400), Pace()
    sieved: list[int] = []
    while not sieved or memory.unsieved_kinds:
        memory.budget = paced.budget(400, 0.1)
        plan = memory.plan({"nic"}, times, sizes)
        chosen = plan["nic"] or set()
        memory.clocks.setdefault("nic", {}).update({d: 10.0 for d in chosen})
        sieved.append(memory.spent)
        paced.after(3.0 if slow else 0.4, memory.spent)
        assert len(sieved) < 100
    assert sum(sieved) == 3000
    if slow:
        # 200, then a third of it, then the floor (50: five devices) to the end
        assert sieved[:2] == [200, 70] and all(s == 50 for s in sieved[2:-1])
    else:
        assert sieved[:3] == [200, 250, 320] and max(sieved) == 400  # GROW a refresh


def test_a_first_refresh_already_past_the_target_leaves_the_sieve_to_the_next() -> None:
    """The first refresh reads every device's presence before its sieve: when that alone
    took the target, its budget is 0 (one device sieved: the first sieve starts with the
    next refresh); a later refresh as busy keeps the floor, so devices still get judged."""
    paced = Pace()
    assert paced.budget(MOST, 1.3 * TARGET_S) == 0
    paced.after(1.8 * TARGET_S, 24)
    assert paced.budget(MOST, 1.3 * TARGET_S) == FLOOR
    assert Pace().budget(MOST, 0.9 * TARGET_S) == FLOOR  # under the target: the floor
