"""Prometheus recording rules for the sieve and the clocks (`mode = "recorded"`).

At cluster scale most of a refresh is Prometheus evaluating the sieve: every mapped metric's
query over every series of every element (~800k at 1,024 nodes), ~40 queries each second. A
site that records them evaluates each once per rule interval instead, and a refresh then reads
the results: one selector for every sieve's series (only the elements near a limit) and one per
element kind for the devices' clocks. `fabtui prom rules` prints the rule file for the configured
fabric, mapping and thresholds (docs/prometheus.md: load it with `rule_files`, re-generate it
when the catalog's thresholds or the label mapping change).

Pure functions: names and YAML text, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

PREFIX = "fabtui:"
SIEVE = f"{PREFIX}sieve:"
CLOCK = f"{PREFIX}clock:"
DEVICE_CLOCK = f"{PREFIX}device_clock:"
GROUP = "fabtui"


def sieve_name(key: str) -> str:
    """The recorded series of a mapping key's sieve (`ethtool.rx_prio3_pause` ->
    `fabtui:sieve:ethtool:rx_prio3_pause`; a colon is valid in a recorded metric name)."""
    return SIEVE + key.replace(".", ":")


def clock_name(element: str) -> str:
    """The recorded series of an element kind's clock (`fabtui:clock:nic`)."""
    return CLOCK + element


def device_clock_name(element: str) -> str:
    """The recorded series of an element kind's devices' clocks, one per scrape target
    (`fabtui:device_clock:nic`): what a refresh dates devices by, read as a plain selector
    (aggregating the per-element clock each refresh was most of Prometheus's work for one)."""
    return DEVICE_CLOCK + element


def every_sieve() -> str:
    """The one selector a refresh reads every recorded sieve's series with."""
    return f'{{__name__=~"{SIEVE}.+"}}'


def rules_document(sieves: Mapping[str, str], clocks: Mapping[str, str],
                   interval: str | None,
                   device_clocks: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The rule file as data: one group, a record per sieve, per clock and per device clock
    (after the clocks they aggregate: a group's rules run in order, each seeing the ones
    before it at the same evaluation)."""
    group: dict[str, Any] = {"name": GROUP}
    if interval:
        group["interval"] = interval
    group["rules"] = [*({"record": sieve_name(k), "expr": q} for k, q in sieves.items()),
                      *({"record": clock_name(e), "expr": q} for e, q in clocks.items()),
                      *({"record": device_clock_name(e), "expr": q}
                        for e, q in (device_clocks or {}).items())]
    return {"groups": [group]}


def rules_yaml(sieves: Mapping[str, str], clocks: Mapping[str, str], interval: str | None,
               device_clocks: Mapping[str, str] | None = None) -> str:
    """The rule file in YAML. Expressions are written as JSON strings (valid YAML double-quoted
    scalars), so any PromQL is quoted by construction."""
    group = rules_document(sieves, clocks, interval, device_clocks)["groups"][0]
    lines = ["groups:", f"  - name: {group['name']}"]
    if "interval" in group:
        lines.append(f"    interval: {group['interval']}")
    lines.append("    rules:")
    for rule in group["rules"]:
        lines += [f"      - record: {rule['record']}", f"        expr: {json.dumps(rule['expr'])}"]
    return "\n".join(lines) + "\n"
