"""What every face of the case library shows the same way: why a case matched, the search
filters typed beside a query, a case's sections in the format's order, a one-paragraph summary,
and the inputs a case pre-fills in a runbook it references.

Plain functions over plain data (no terminal, no click): the command line and the app call these
so that `fabtui cases search` and the Cases screen cannot disagree.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from fabtui.cases.components import component_kind
from fabtui.cases.markdown import SECTIONS
from fabtui.model.case import Case, CaseStatus, Severity
from fabtui.model.element import device_of
from fabtui.model.runbook import InputType, Runbook

FILTER_KEYS = ("component", "rail", "node", "tag", "severity", "status", "since", "until")
"""The filters `CaseLibrary.search` takes, by the name typed (`rail:3`, `since:2026-03-02`)."""

_FILTER = re.compile(rf"^({'|'.join(FILTER_KEYS)}):(.*)$")
_KEYED = re.compile(r"^([A-Za-z]+):([^:]*)$")


def _misspelled_filter(word: str) -> str | None:
    """`rial:5` -> `rail`: the filter a `word:value` looks like a typo of (None: it does not
    look like a filter, e.g. `node003:mlx5_5` or `leaf-g00-r3:Ethernet16`)."""
    import difflib

    found = _KEYED.match(word)
    if found is None or found.group(1).lower() in FILTER_KEYS:
        return None
    close = difflib.get_close_matches(found.group(1).lower(), FILTER_KEYS, n=1, cutoff=0.7)
    return close[0] if close else None


def why(matched: Mapping[str, list[str]]) -> str:
    """`symptom: pfc, pause; tags: pfc-storm`: the fields a case matched on, with its words."""
    return "; ".join(f"{field}: {', '.join(terms)}" for field, terms in matched.items())


def iso_date(value: str) -> str:
    """`value` checked to be an ISO date (`2026-03-02`). Raises ValueError saying what is
    expected."""
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            return date.fromisoformat(value).isoformat()
    except ValueError:
        pass
    raise ValueError(f"{value!r}: expected a date like 2026-03-02")


def check_filter(key: str, value: str) -> Any:
    """The value of filter `key` as `CaseLibrary.search` takes it. Raises ValueError."""
    if key == "rail":
        if not value.isdigit() or not 0 <= int(value) <= 255:
            raise ValueError(f"rail:{value}: expected a rail number 0-255")
        return int(value)
    if key == "severity" and value not in {s.value for s in Severity}:
        raise ValueError(f"severity:{value}: expected one of "
                         f"{', '.join(s.value for s in Severity)}")
    if key == "status" and value not in {s.value for s in CaseStatus}:
        raise ValueError(f"status:{value}: expected one of "
                         f"{', '.join(s.value for s in CaseStatus)}")
    if key in ("since", "until"):
        try:
            return iso_date(value)
        except ValueError as exc:
            raise ValueError(f"{key}:{exc}") from None
    return value


@dataclass(frozen=True)
class TypedQuery:
    """A query line split into the words searched and the filters typed beside them."""

    text: str
    filters: dict[str, Any]
    error: str | None = None
    """The first filter that is wrong (the others still apply), None when all are fine."""


def split_filters(line: str) -> TypedQuery:
    """`pfc storm rail:3 status:resolved` -> the words and {rail: 3, status: "resolved"}.

    Never raises: a wrong filter (a bad value, or a misspelled name such as `rial:5`) is left
    out and named in `error`; a filter still being typed (`rail:`) is left out silently.
    Quotes group a phrase as the query language reads them."""
    try:
        words = shlex.split(line, posix=False)
    except ValueError:
        words = line.split()
    kept: list[str] = []
    filters: dict[str, Any] = {}
    error: str | None = None
    for word in words:
        found = _FILTER.match(word)
        if found is None:
            meant = _misspelled_filter(word)
            if meant is None:
                kept.append(word)
            else:  # a filter typed wrong is named, not searched as words
                value = word.split(":", 1)[1]
                error = error or (f"unknown filter {word.split(':', 1)[0]}:; did you mean "
                                  f"{meant}:{value}?")
            continue
        key, value = found.group(1), found.group(2).strip('"')
        if not value:
            continue
        try:
            filters[key] = check_filter(key, value)
        except ValueError as exc:
            error = error or str(exc)
    return TypedQuery(" ".join(kept), filters, error)


_PREFIXABLE = re.compile(r"[A-Za-z0-9_.-]{3,}")


def as_you_type(text: str) -> str:
    """`text` as searched while it is being typed: the last word, when it is still being
    typed (no space after it) and is three or more Latin letters or digits, also matches as a
    prefix (`pfc sto` finds storm; two letters would expand to too many words to answer a
    keystroke in time). Chinese is matched by character pairs and needs none."""
    if not text or text[-1].isspace():
        return text
    head, _, last = text.rpartition(" ")
    if last in ("AND", "OR", "NOT") or not _PREFIXABLE.fullmatch(last.lstrip("-+")):
        return text
    return f"{head} {last}*" if head else f"{last}*"


def sections(case: Case) -> list[tuple[str, str]]:
    """The case's prose sections that hold text, (heading, text), in the order an export
    writes them, then the sections the format does not name. Tables (evidence, timeline,
    tuning, action items) are the case's own lists; their notes come as sections here."""
    out: list[tuple[str, str]] = []
    notes = {"environment": case.environment_notes, "evidence": case.evidence_notes,
             "timeline": case.timeline_notes, "tuning": case.tuning_notes,
             "action_items": case.action_notes}
    for section in SECTIONS:
        text = notes[section.key] if section.key in notes else getattr(case, section.key)
        if isinstance(text, str) and text.strip():
            out.append((section.heading, text.strip()))
    out += [(heading, text.strip()) for heading, text in case.sections.items() if text.strip()]
    return out


def summary(case: Case) -> str:
    """Four lines: id, status, class and title; components; error codes; how much evidence."""
    return (f"{case.id} ({case.status.value}, {case.symptom_class.value}): {case.title}\n"
            f"  components: {', '.join(case.components) or '-'}\n"
            f"  error codes: {', '.join(case.error_codes) or '-'}\n"
            f"  evidence rows: {len(case.evidence)}, timeline entries: {len(case.timeline)}")


_KINDS = {InputType.NODE: ("node",), InputType.NIC: ("nic",), InputType.PORT: ("port",),
          InputType.SWITCH: ("leaf", "spine", "switch")}


def runbook_inputs(case: Case, book: Runbook) -> dict[str, str]:
    """The runbook's fabric inputs (node, NIC, switch, port) the case names a component for:
    the first component of that kind (a node also from a NIC's or GPU's host). The runbook
    still checks each value against the fabric before anything runs."""
    by_kind: dict[str, str] = {}
    for component in case.components:
        kind = component_kind(component)
        by_kind.setdefault(kind, component)
        if kind in ("nic", "gpu", "rank"):
            by_kind.setdefault("node", device_of(component))
        if kind == "port":
            device = device_of(component)
            by_kind.setdefault(component_kind(device), device)
    inputs: dict[str, str] = {}
    for spec in book.meta.inputs:
        if spec.secret:
            continue
        for kind in _KINDS.get(spec.type, ()):
            if kind in by_kind:
                inputs[spec.name] = by_kind[kind]
                break
    return inputs
