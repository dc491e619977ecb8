"""The criteria rows of a report, each decided by one reading.

A row groups the readings of one metric of one probe (every port, lane, GPU it was read on)
and is decided by its worst reading: the value shown, the limits shown and the verdict are
that one reading's, so a row cannot say `-1.32 dBm … FAIL` because another lane read `-inf`.
The limits are the ones applied to the reading (recorded with it, or the catalog rule whose
source it names); limits that would not give the recorded verdict are never shown as numbers
(the rule is said in words instead).

A reading on a link that is down, or on a lane with no light, measures nothing: a BER of
`1.5e-254` there is no pass. Such readings are shown as what they are (`link down`), and
fail. Pure: reads block records, writes nothing.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from fabtui.model.probe import Threshold
from fabtui.model.report import Bound, Criterion, judged_by
from fabtui.model.verdict import Verdict
from fabtui.reports.evidence import BlockRecord
from fabtui.reports.rules import Rule, rule_for

BAD = (Verdict.WARN, Verdict.FAIL, Verdict.ERROR, Verdict.ABORTED, Verdict.CANCELLED)
_STATE_METRICS = ("state", "port.state", "port.physical_state")
_PHYSICAL = ("state_down", "optic_")
"""What says the link is down, and the module's identity: every other number read on a link
that is down (a BER, a counter, a rate, even the module's temperature) is not a pass."""


@dataclass
class Reading:
    """One metric of one probe block, as the report judges it."""

    probe: str
    metric: dict[str, Any]
    block: BlockRecord
    value: float | str | None
    verdict: Verdict
    down: str | None = None
    """Why this reading measured nothing (`link down: state Disable`), if so."""

    @property
    def name(self) -> str:
        return str(self.metric.get("name", ""))

    @property
    def component(self) -> str:
        return str(self.metric.get("component") or "")

    @property
    def unit(self) -> str:
        return str(self.metric.get("unit") or "")


def port_of(component: str) -> str:
    """A lane's port (`leaf:Ethernet16/lane2` -> `leaf:Ethernet16`); others unchanged."""
    head, _, tail = component.rpartition("/")
    return head if head and tail.startswith("lane") else component


def is_dark(value: object) -> bool:
    """A power reading of `-inf` dBm: no light (loss of signal)."""
    if isinstance(value, str):
        return value.strip().lower() in ("-inf", "-infinity")
    return isinstance(value, float) and math.isinf(value) and value < 0


def number(value: object) -> float | None:
    """A finite reading as a float; None for text, booleans, `-inf` and nothing."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def verdict_of(value: object) -> Verdict:
    try:
        return Verdict(str(value))
    except ValueError:
        return Verdict.OK


def down_parts(block: BlockRecord) -> tuple[dict[str, str], dict[str, str]]:
    """Ports whose link this block read as down, and lanes it read dark: component -> why."""
    ports: dict[str, str] = {}
    lanes: dict[str, str] = {}
    for metric in block.metrics():
        name, value = str(metric.get("name", "")), metric.get("value")
        component = str(metric.get("component") or "")
        if name == "state_down" and value:
            ports.setdefault(port_of(component), "link down")
        elif name in _STATE_METRICS and verdict_of(metric.get("verdict")) in BAD:
            ports.setdefault(port_of(component), f"link down ({name} {value})")
        elif name == "rx_power_dbm" and is_dark(value):
            lanes[component] = "no light on this lane"
    return ports, lanes


def _all_lanes_dark(block: BlockRecord) -> list[str]:
    """The ports whose every lane's receive power this block read as `-inf` (no light)."""
    lit: dict[str, bool] = {}
    for metric in block.metrics():
        if metric.get("name") == "rx_power_dbm":
            port = port_of(str(metric.get("component") or ""))
            lit[port] = lit.get(port, False) or not is_dark(metric.get("value"))
    return [port for port, any_lit in lit.items() if not any_lit]


def readings(blocks: Iterable[BlockRecord]) -> list[Reading]:
    """Every metric of the probe blocks, a reading on a down link or a dark lane marked as
    measuring nothing (and failing).

    A port read down or dark by one block of a step is down for every block of that step: the
    blocks of one step are read together, and a counter probe that reads no state (FEC
    counters on a dark port read 0) must not pass a port its sibling block found dark."""
    probed = [(block, *down_parts(block)) for block in blocks if block.probe]
    down_in_step: dict[str | None, dict[str, str]] = {}
    for block, ports, _ in probed:
        step_ports = down_in_step.setdefault(block.step, {})
        for port, reason in ports.items():
            step_ports.setdefault(port, reason)
        for port in _all_lanes_dark(block):
            step_ports.setdefault(port, "no light on any lane")
    found = []
    for block, ports, lanes in probed:
        probe = str(block.probe)
        for port, reason in down_in_step.get(block.step, {}).items():
            ports.setdefault(port, reason)
        for metric in block.metrics():
            value = metric.get("value")
            value = value if isinstance(value, (int, float, str)) or value is None \
                else str(value)
            reading = Reading(probe=probe, metric=metric, block=block,
                              value=value, verdict=verdict_of(metric.get("verdict")))
            component = reading.component
            why = lanes.get(component) or ports.get(port_of(component))
            if why and number(value) is not None and reading.verdict not in BAD and \
                    not reading.name.startswith(_PHYSICAL):
                reading.down, reading.value, reading.verdict = why, why, Verdict.FAIL
            found.append(reading)
    return found


def criteria(session: str, judged: Sequence[Reading],
             thresholds: Mapping[str, Sequence[Threshold]],
             before: Sequence[Reading] = ()) -> list[Criterion]:
    """One row per catalog threshold the readings were judged against, and one per metric an
    evaluator judged not ok; `before` (a repair's readings before it) fills each row's
    `before` column."""
    groups: dict[tuple[str, str], list[Reading]] = {}
    catalog: dict[tuple[str, str], Threshold | None] = {}
    for reading in [*judged, *before]:
        rules = thresholds.get(reading.probe, ())
        rule = next((r for r in rules if fnmatch.fnmatchcase(reading.name, r.metric)), None)
        key = (reading.probe, rule.metric if rule else reading.name)
        catalog[key] = rule
        groups.setdefault(key, [])
    for reading in judged:
        rules = thresholds.get(reading.probe, ())
        rule = next((r for r in rules if fnmatch.fnmatchcase(reading.name, r.metric)), None)
        groups[(reading.probe, rule.metric if rule else reading.name)].append(reading)
    earlier: dict[tuple[str, str], list[Reading]] = {}
    for reading in before:
        rules = thresholds.get(reading.probe, ())
        rule = next((r for r in rules if fnmatch.fnmatchcase(reading.name, r.metric)), None)
        earlier.setdefault((reading.probe, rule.metric if rule else reading.name),
                           []).append(reading)
    rows = []
    for key, found in groups.items():
        rule = catalog[key]
        was = earlier.get(key, [])
        if not found:
            if any(r.verdict in BAD for r in was):
                rows.append(_not_reread(session, key, was, thresholds))
            continue
        judged_here = any(r.verdict in BAD and not r.down for r in [*found, *was]) or \
            (rule_for(*key) is not None and any(r.down for r in found))
        if rule is None and not judged_here:
            continue  # a reading no rule judges (a rate, a count): not a criterion
        if rule is not None and not any(_judgeable(r) for r in found):
            continue
        rows.append(_row(session, key, found, was, rule, thresholds))
    return rows


def _judgeable(reading: Reading) -> bool:
    return number(reading.value) is not None or reading.verdict in BAD


def _row(session: str, key: tuple[str, str], found: Sequence[Reading],
         was: Sequence[Reading], rule: Threshold | None,
         thresholds: Mapping[str, Sequence[Threshold]]) -> Criterion:
    probe, name = key
    words = rule_for(probe, found[0].name)
    deciding = worst(found, rule, words)
    bounds = bounds_for(deciding, thresholds.get(probe, ()), words)
    unit = deciding.unit or (rule.unit if rule else "")
    not_ok = sum(r.verdict in BAD for r in found)
    count = f"worst of {len(found)}" + (f", {not_ok} not ok" if not_ok else "") \
        if len(found) > 1 else ""
    measured = f"{show(deciding.value, unit)} on {deciding.component}" + \
        (f" ({count})" if count else "")
    prior = worst(was, rule, words) if was else None
    return Criterion(
        name=f"{probe} {name}", requirement=requirement(bounds, unit, rule, words, deciding),
        measured=measured, verdict=deciding.verdict,
        source=deciding.block.source(session),
        reference=_reference(deciding, rule, words),
        value=deciding.value, unit=unit, component=deciding.component, bounds=bounds,
        readings=len(found), not_ok=not_ok,
        before=(f"{show(prior.value, prior.unit or unit)} on {prior.component} "
                f"({prior.verdict.value})") if prior is not None else None)


def _not_reread(session: str, key: tuple[str, str], was: Sequence[Reading],
                thresholds: Mapping[str, Sequence[Threshold]]) -> Criterion:
    """A criterion that failed before the repair and was not read after it: said, not passed."""
    probe, name = key
    words = rule_for(probe, was[0].name)
    prior = worst(was, None, words)
    unit = prior.unit
    return Criterion(
        name=f"{probe} {name}", requirement=requirement([], unit, None, words, prior),
        measured="not read after the repair", verdict=Verdict.SKIPPED,
        source=prior.block.source(session), reference=_reference(prior, None, words),
        value=None, unit=unit, component=prior.component, readings=0,
        before=f"{show(prior.value, unit)} on {prior.component} ({prior.verdict.value})")


def worst(found: Sequence[Reading], rule: Threshold | None, words: Rule | None) -> Reading:
    """The reading that decides: the worst verdict, then the value furthest on the bad side."""
    direction = rule.direction if rule else (words.direction if words else None)

    def badness(reading: Reading) -> tuple[int, float]:
        value = number(reading.value)
        if value is None:
            far = math.inf if reading.verdict in BAD else -math.inf
        else:
            far = value if direction == "above" else -value if direction == "below" else 0.0
        return reading.verdict.rank, far

    return max(found, key=badness)


def bounds_for(reading: Reading, rules: Sequence[Threshold], words: Rule | None
               ) -> list[Bound]:
    """The limits applied to `reading`, worst first; empty when no limit recorded or known
    gives its verdict (the row then says the rule in words)."""
    value = number(reading.value)
    if value is None or reading.down:
        return []
    source = reading.metric.get("source")
    limit = number(reading.metric.get("limit"))
    candidates: list[list[Bound]] = [module_bounds(reading)]
    for rule in rules:
        if fnmatch.fnmatchcase(reading.name, rule.metric) and \
                (source is None or source == rule.source):
            candidates.append(catalog_bounds(rule))
    if words is not None and words.bounds:
        candidates.append(list(words.bounds))
    if limit is not None:
        if reading.verdict in (Verdict.WARN, Verdict.FAIL):
            op: Literal["<", ">", ">="] = "<" if value < limit else ">" if value > limit \
                else ">="
            candidates.append([Bound(verdict=reading.verdict, op=op, limit=limit)])
        elif words is not None and words.direction is not None:
            candidates.append([Bound(verdict=words.level,
                                     op="<" if words.direction == "below" else ">",
                                     limit=limit)])
    for bounds in candidates:
        if bounds and judged_by(bounds, value) is reading.verdict:
            return bounds
    return []


_MODULE_LIMITS: dict[str, tuple[str, str, bool]] = {
    "tx_bias_ma": ("tx_bias", "ma", True), "temperature_c": ("temperature", "c", False)}
"""Metric -> (the module's threshold name, its unit suffix, whether its low limits count): the
metrics the optics evaluator judges against the module's own thresholds alone
(probes/evaluators/_optics.py `lane_metrics`: bias low and high, temperature high)."""


def module_bounds(reading: Reading) -> list[Bound]:
    """The module's own alarm and warning thresholds `reading` was judged against, as its DOM
    printed them in the same reading (switch DOM: per port), worst first; empty when the
    reading holds none (the row then says the rule in words)."""
    known = _MODULE_LIMITS.get(reading.name)
    if known is None:
        return []
    what, unit, low = known
    port = port_of(reading.component).rpartition(":")[2]
    interface = (reading.block.parsed.get("interfaces") or {}).get(port)
    limits = interface.get("thresholds") if isinstance(interface, dict) else None
    if not isinstance(limits, dict):
        return []
    bounds = []
    for verdict, level in ((Verdict.FAIL, "alarm"), (Verdict.WARN, "warning")):
        for side, op in (("low", "<"), ("high", ">")):
            value = number(limits.get(f"{what}_{side}_{level}_{unit}"))
            if value is not None and (low or side == "high"):
                bounds.append(Bound(verdict=verdict, op=op, limit=value))
    return bounds


def catalog_bounds(rule: Threshold) -> list[Bound]:
    """A catalog threshold as limits (`judge` in fabtui/probes/evaluate.py: `above` is bad
    from the limit on, `below` under it)."""
    op: Literal["<", ">="] = ">=" if rule.direction == "above" else "<"
    return [Bound(verdict=verdict, op=op, limit=limit) for verdict, limit in
            ((Verdict.FAIL, rule.fail), (Verdict.WARN, rule.warn)) if limit is not None]


def requirement(bounds: Sequence[Bound], unit: str, rule: Threshold | None,
                words: Rule | None, reading: Reading) -> str:
    """The threshold in numbers (`FAIL if >= 100; WARN if >= 1`) and, for a rule that is not
    only numbers, in words."""
    parts = []
    if bounds:
        parts.append("; ".join(f"{b.verdict.value.upper()} if {b.op} {fmt(b.limit)}"
                               f"{' ' + unit if unit else ''}" for b in bounds))
    if words is not None and (not bounds or words.always):
        parts.append(words.text)
    elif not bounds:
        parts.append(f"judged by the {reading.probe} evaluator (docs/thresholds.md section 2)")
    if reading.down:
        parts.append("a reading on a link that is down or a lane with no light measures "
                     "nothing and fails")
    window = f" over {rule.window}" if rule is not None and rule.window else ""
    return ", ".join(parts) + window


def _reference(reading: Reading, rule: Threshold | None, words: Rule | None) -> str | None:
    source = reading.metric.get("source")
    if isinstance(source, str) and source:
        return source
    if rule is not None:
        return rule.source
    if words is not None:
        return words.source
    return DOWN_SOURCE if reading.down else None


DOWN_SOURCE = ("[inference] a counter, a rate or a BER read on a link that is down, or on a lane "
               "with no light, measures no traffic")


def show(value: object, unit: str = "") -> str:
    """A reading as a customer reads it: `-inf` as no light, numbers to 3-4 digits."""
    if is_dark(value):
        return f"no light (-inf{' ' + unit if unit else ''})"
    if isinstance(value, float):
        text = fmt(value)
    elif value is None:
        return "not read"
    else:
        text = str(value)
    return f"{text} {unit}".rstrip() if number(value) is not None else text


def fmt(value: float) -> str:
    if value and (abs(value) < 1e-2 or abs(value) >= 1e7):
        return f"{value:.3g}"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


__all__ = ["BAD", "Reading", "bounds_for", "criteria", "down_parts", "fmt", "is_dark",
           "number", "port_of", "readings", "requirement", "show", "worst"]
