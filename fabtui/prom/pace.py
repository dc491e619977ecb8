"""How many elements a refresh sieves: a budget paced by how long the recent refreshes took.

Sieving raw series, a refresh sieves at most a budget of elements (`fabtui.prom.resieve`): the
devices scraped since their last sieve, those never sieved, a kind's periodic re-sieve. What
that costs Prometheus depends on what else it does meanwhile, which fabtui cannot see: a
sieve of 2,000 NIC elements costs it ~1 CPU-s on a quiet machine, but beside the ingestion of a
scrape of 835,584 series (1,024 nodes; the exporters on the same 2 cores) the same sieve made
the slowest refresh, 2.9 s (`benchmarks/prom_refresh.py`, docs/prometheus.md). A fixed budget
either leaves those refreshes over 2 s (2,000) or spreads the first sieve over twice the
refreshes whatever the load (1,000: every device judged by refresh 52 instead of 31).

So the budget follows the measured time of refreshes (`Pace`), against a target well under the
2 s goal (`TARGET_S`): a refresh slower than the target shrinks the next one's budget in
proportion (at least to a quarter in one step), a fast one (`FAST_S`) that used its budget
grows it back toward the most (at most by `GROW` a refresh; a refresh that had little to sieve
is no evidence and changes nothing). And within a refresh, the time its first round took (the
device clocks and the presence, asked before the sieve: how busy Prometheus is right now)
scales what that refresh sieves, so a refresh that meets a busy Prometheus sieves less at once
instead of one refresh later. Never under `FLOOR` elements (nor over the most the source
allows): devices still get judged while Prometheus is slow. At the shipped most the budget
moves between 1,000 and 2,000: the first sieve takes the refreshes of 2,000 while they are
fast, of 1,000 only while they are slow.

No I/O and no clock: the source passes the seconds it measured, so the pacing is
deterministic to test.
"""

from __future__ import annotations

from dataclasses import dataclass

TARGET_S = 1.0
"""The refresh time the budget steers to: half the 2 s goal, leaving room for what the budget
does not govern (the device clocks, the full read of the elements named, fabtui's own
0.25-0.45 CPU-s, and a scrape ingested meanwhile, which made refreshes sieving 11 devices take
2.1 s at a load of 2-3 on 2 cores)."""

FLOOR = 1000
"""Elements a refresh sieves at least (or the most the source allows, if smaller): half
Prometheus's CPU of the shipped most (2,000; fixed at 1,000 the slowest refresh was 1.05 s at
a quiet moment), and the first sieve of 40,960 elements done within ~80 refreshes however slow
they are (the devices scraped since taking half the budget at most meanwhile,
`fabtui.prom.resieve`). At 500 with both benchmark runs at once (load 6-9) the devices
scraped since, 40,960 elements a minute, took it all: some devices never judged in 101
refreshes."""

START_SHARE = 0.5
"""The first refresh's budget, as a share of the most: it also reads every device's presence
(40,960 series at 1,024 nodes, 0.66 s of a 1.13 s first refresh at 2,000), and nothing was
measured yet. Fast refreshes grow it to the most within four more."""

GROW = 1.25
"""A fast refresh that used its budget grows the next one's by at most this factor (in
proportion to how far under `FAST_S` it was). With 1.5 and no margin under the target, the
budget went 1,000 -> 1,500 -> 2,000 in the first four refreshes at a load of 3.6 and the next
refresh took 2.62 s (`benchmarks/prom_refresh.py`)."""

FAST_S = 0.75
"""A refresh is fast (evidence for a larger budget) under this share of `TARGET_S`: between it
and the target the budget stays, a margin for the refreshes that vary by what they sieve
(a switch's ports cost Prometheus more than a node's elements) and by the machine's load."""

USED = 0.5
"""A fast refresh is evidence for a larger budget only when it sieved at least this share of
its budget (otherwise its speed says nothing about what a full budget costs: after the first
sieve, a quiet refresh sieves almost nothing)."""

SHRINK = 0.25
"""A slow refresh shrinks the next one's budget to no less than this share of it in one
step (it is taken in proportion: target / seconds)."""

BUSY_FROM = 0.5
"""Within a refresh: a first round that took more than this share of `TARGET_S` scales the
sieve down in proportion to the time left to the target (the floor at the target itself)."""


@dataclass
class Pace:
    """See the module docstring: the share of the most a refresh sieves, adapted refresh
    after refresh."""

    share: float = START_SHARE
    """The budget of the next refresh, as a share of the most (0-1]."""
    target_s: float = TARGET_S
    last: int = 0
    """The budget the last `budget` call gave (what `after` judges a refresh's use by)."""
    measured: bool = False
    """Whether a refresh was measured (`after`) yet."""
    least: float = 0.0
    """The floor's share of the most the last `budget` call had: the share shrinks no lower
    (below it the floor decides anyway, and growing back would take longer)."""

    def budget(self, most: int, elapsed_s: float) -> int:
        """This refresh's budget, in elements: the paced share of `most`, scaled down where
        the refresh has already spent `elapsed_s` (its first round) past `BUSY_FROM` of the
        target; never under `FLOOR` (or `most`, if smaller) nor over `most`. Except the first
        refresh (none measured yet) past the target already: 0 (`fabtui.prom.resieve` then
        sieves one device, the first sieve starting with the next refresh). Its first round
        read every device's presence (40,960 series at 1,024 nodes), which beside a scrape's
        ingestion took 1.3 s, and the refresh 2.2-2.5 s with a sieve of 1,000 elements and
        the full read of what it named after it."""
        if not self.measured and elapsed_s >= self.target_s:
            self.last = 0
            return 0
        busy_from = BUSY_FROM * self.target_s
        left = 1.0 if elapsed_s <= busy_from else \
            max(0.0, (self.target_s - elapsed_s) / (self.target_s - busy_from))
        floor = min(FLOOR, most)
        self.least = floor / most if most > 0 else 0.0
        self.last = max(floor, min(most, round(self.share * most * left)))
        return self.last

    def after(self, seconds: float, sieved: int) -> None:
        """Adapt to a refresh that took `seconds` and sieved `sieved` elements of the last
        `budget`: slower than the target, the share shrinks in proportion (at least to
        `SHRINK` of it); fast (`FAST_S`), and the budget mostly used (`USED`), it grows in
        proportion (at most by `GROW`, up to 1); else it stays."""
        self.measured = True
        if seconds > self.target_s:
            self.share = max(self.least, self.share * max(SHRINK, self.target_s / seconds))
        elif sieved >= USED * self.last and 0 < seconds < FAST_S * self.target_s:
            self.share = min(1.0, self.share * min(GROW, FAST_S * self.target_s / seconds))
