"""How the chain writes numbers, times and moves: one place, so every hop reads alike.
No side effects."""

from __future__ import annotations

import time
from collections.abc import Iterable

from fabtui.topology.ranks import compact_ranges
from fabtui.triage.slowjob.moves import Move

_LABEL = {
    "pause_share_rx": "held paused", "pause_share_tx": "holds its peer paused",
    "pause_rx_per_s": "pause frames in", "pause_tx_per_s": "pause frames out",
    "ecn_marked_per_s": "ECN marks", "cnp_per_s": "CNPs", "out_of_sequence_per_s":
    "out-of-sequence packets", "fec_corrected_per_s": "FEC corrected",
    "fec_uncorrectable_per_s": "FEC uncorrectable", "pre_fec_ber": "pre-FEC BER",
    "rx_power_dbm": "receive power", "link_up": "link", "speed_gbps": "speed", "util": "load",
    "gpu_sm_clock_mhz": "SM clock", "gpu_throttle": "throttled", "gpu_util": "GPU busy",
    "xid": "Xid events", "nvlink_errors_per_s": "NVLink errors", "busbw": "busbw",
}


def clock(t: float) -> str:
    """`03:10` (UTC) for a Unix time."""
    return time.strftime("%H:%M", time.gmtime(t))


def second(t: float) -> str:
    """`03:10:45` (UTC) for a Unix time."""
    return time.strftime("%H:%M:%S", time.gmtime(t))


def pct(share: float) -> str:
    """`+17 %`, `-26 %`."""
    return f"{share * 100:+.0f} %"


def value(metric: str, x: float) -> str:
    """A reading in its metric's unit."""
    if metric in ("pause_share_rx", "pause_share_tx", "util", "gpu_util", "gpu_throttle"):
        return f"{x * 100:.0f} %"
    if metric == "pre_fec_ber":
        return f"{x:.1e}"
    if metric == "rx_power_dbm":
        return f"{x:.1f} dBm"
    if metric == "gpu_sm_clock_mhz":
        return f"{x:.0f} MHz"
    if metric == "speed_gbps":
        return f"{x:.0f} Gb/s"
    if metric == "link_up":
        return "up" if x >= 0.5 else "down"
    if metric == "busbw":
        return f"{x:.1f} GB/s"
    if abs(x) >= 1e5:
        return f"{x:.2e}/s"
    return f"{x:.0f}/s" if abs(x) >= 10 else f"{x:.1f}/s"


def moved(m: Move) -> str:
    """`FEC uncorrectable 0.0/s -> 35/s`."""
    return f"{_LABEL.get(m.metric, m.metric)} {value(m.metric, m.before)} -> " \
           f"{value(m.metric, m.during)}"


def ranks(numbers: Iterable[int]) -> str:
    """`rank 5` or `ranks 24-31`."""
    items = sorted(set(numbers))
    return f"rank{'s' if len(items) > 1 else ''} {compact_ranges(items)}"


def listing(items: list[str], most: int = 4) -> str:
    """`a, b, c and 5 more`."""
    if len(items) <= most:
        return ", ".join(items)
    return ", ".join(items[:most]) + f" and {len(items) - most} more"


def first(lines: list[str], most: int, what: str,
          names: list[str] | None = None) -> list[str]:
    """The first `most` evidence lines, then one saying how many `what` were left out (and
    which, given their `names`): a chain shows a few, never passes the rest off as absent."""
    if len(lines) <= most:
        return lines
    which = f": {', '.join(names[most:])}" if names else ""
    return [*lines[:most], f"... and {len(lines) - most} more {what}{which}"]


def moves_of(found: list[Move], most: int) -> str:
    """`FEC uncorrectable 0.0/s -> 35/s, ...` for the first `most`, then `+N more`."""
    text = ", ".join(moved(m) for m in found[:most])
    return text + (f" (+{len(found) - most} more)" if len(found) > most else "")
