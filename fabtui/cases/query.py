"""What a typed query asks for, as index terms: the forgiving query language of case search.

`plan(text)` never fails. It reads `"a phrase"`, `a AND b`, `a OR b`, `NOT a` / `-a` and
`prefix*`; anything else (unbalanced quotes, stray or doubled operators, parentheses) is read as
plain words. Words typed side by side are analyzed together, so `rail 3` is `rail-3` and
`Xid 79` is `xid-79`. No search engine is imported here: any engine can evaluate a `Plan`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabtui.lexicon.analysis import analyze
from fabtui.lexicon.units import literal, units

_QUERY_TOKEN = re.compile(r'"[^"]*"|\S+')
_OPERATORS = {"AND", "OR", "NOT"}


@dataclass
class Unit:
    """One word (or phrase) of the query: a document matches it when it holds any of the
    alternatives (term, weight), or a term starting with `prefix`, and, for a phrase, when
    `phrase` occurs in that order."""

    alternatives: list[tuple[str, float]]
    prefix: str | None = None
    phrase: list[str] | None = None

    def key(self) -> tuple[object, ...]:
        return (tuple(self.alternatives), self.prefix, tuple(self.phrase or ()))


@dataclass
class Plan:
    """`groups`: a document matches when it matches every unit of some group (conjunctive) or
    any unit at all (ranked, the default). `terms`/`prefixes` are what may be highlighted."""

    groups: list[list[Unit]]
    conjunctive: bool
    excluded: list[Unit] = field(default_factory=list)
    terms: set[str] = field(default_factory=set)
    prefixes: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not any(self.groups)


@dataclass
class _Item:
    text: str
    phrase: bool = False
    negated: bool = False
    prefix: bool = False


def _parse(query: str) -> tuple[list[list[_Item]], bool, list[_Item]]:
    if query.count('"') % 2:
        query = query.replace('"', " ")
    query = query.replace("(", " ").replace(")", " ")
    raw = _QUERY_TOKEN.findall(query)
    conjunctive = "AND" in raw
    groups: list[list[_Item]] = [[]]
    negated: list[_Item] = []
    negate_next = False
    after_operator = False
    for word in raw:
        if word in _OPERATORS:
            after_operator = True
            if word == "NOT":
                negate_next = True
            elif word == "OR" and conjunctive and groups[-1]:
                groups.append([])
            continue
        item = _Item(word)
        if word.startswith('"'):
            item = _Item(word.strip('"'), phrase=True)
        elif word.startswith("-") and len(word) > 1:
            item = _Item(word[1:], negated=True)
        elif word.startswith("+") and len(word) > 1:
            item = _Item(word[1:])
        if item.text.endswith("*") and not item.phrase:
            item.text = item.text.rstrip("*")
            item.prefix = True
        if not item.text.strip(" *+-"):
            continue
        if negate_next:
            item.negated, negate_next = True, False
        target = negated if item.negated else groups[-1]
        previous = target[-1] if target else None
        if (previous is not None and not item.negated and not after_operator
                and not (previous.phrase or previous.prefix or item.phrase)):
            previous.text += " " + item.text
            previous.prefix = item.prefix
        else:
            target.append(item)
        after_operator = False
    return [g for g in groups if g], conjunctive, negated


def _units(item: _Item, plan: Plan, record: bool = True) -> list[Unit]:
    tokens = analyze(item.text)
    if record:
        plan.terms.update(t.text for t in tokens)
    positions = units(tokens)
    if not positions:
        return []
    first: dict[int, str] = {}  # a phrase is the words typed, in order, not what they mean
    for tok in tokens:
        if not tok.text.startswith("~"):
            first.setdefault(tok.pos, tok.text)
    if item.phrase and len(first) > 1:
        words = [first[p] for p in sorted(first)]
        return [Unit([(w, 1.0) for w in words], phrase=words)]
    found = [Unit(alts) for alts in positions]
    if item.prefix:
        last = found[-1]
        last.prefix = literal(last.alternatives) or last.alternatives[0][0]
        if record:
            plan.prefixes.append(last.prefix)
    return found


def plan(text: str) -> Plan:
    """The units `text` asks for (see the module docstring for the syntax)."""
    groups, conjunctive, negated = _parse(text)
    result = Plan([], conjunctive)
    for group in groups:
        units = [u for item in group for u in _units(item, result)]
        if units:
            result.groups.append(units)
    if not conjunctive and len(result.groups) > 1:
        result.groups = [[u for g in result.groups for u in g]]
    for item in negated:
        item.negated = False
        for unit in _units(item, result, record=False):
            # Excluding a word excludes that word, not everything that means the same.
            unit.alternatives = [(t, w) for t, w in unit.alternatives if not t.startswith("~")]
            if unit.alternatives:
                result.excluded.append(unit)
    return result
