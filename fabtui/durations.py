"""Durations as people write them in scenarios and runbook tests: `90`, `90s`, `15m`, `1h30m`.

Its own module so that readers of such files (the runbook linter, the simulator's scenarios)
share one parser without the linter importing the simulator.
"""

from __future__ import annotations

import re
from typing import Any

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*$")
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|min|m|h)")
_FACTORS = {"ms": 0.001, "s": 1.0, None: 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_duration(value: Any) -> Any:
    """`90`, `"90s"`, `"15m"`, `"1h"`, `"1h30m"`, `"10m20s"` -> seconds; anything that is not
    text is left for pydantic to judge. Raises ValueError for text that is not a duration."""
    if isinstance(value, bool) or not isinstance(value, str):
        return value
    match = _DURATION.match(value)
    if match is not None:
        return float(match.group(1)) * _FACTORS[match.group(2)]
    compact = value.replace(" ", "")
    parts = _PART.findall(compact)
    if parts and "".join(n + u for n, u in parts) == compact:
        return sum(float(number) * _FACTORS[unit] for number, unit in parts)
    raise ValueError(f"{value!r} is not a duration (e.g. 90, 90s, 15m, 1h30m)")
