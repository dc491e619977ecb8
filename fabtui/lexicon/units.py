"""What a typed query asks for, position by position: the alternatives a text must hold.

A glossary phrase is one unit, whatever the language it was typed in: `光模块` (two character
pairs) and `optic` both become "the concept ~optic, or these very words", so a case written in
the other language scores as one written in the user's words, but for a small bonus for the very
words (`LITERAL_WEIGHT`). Every other position is its word, and the parts of an identifier
(`node042` inside `node042:gpu3`) at a lower weight. Case search and `runbook find` both rank
with these units, so they agree on what a query means.
"""

from __future__ import annotations

from collections.abc import Sequence

from fabtui.lexicon.analysis import Token

CONCEPT_WEIGHT = 1.0
LITERAL_WEIGHT = 0.4
"""The words typed, inside a glossary phrase (shared by them: `光模块` is two character pairs): a
text that says them ranks a little above one that says the same thing in other words or the
other language, never far above it."""
PART_WEIGHT = 0.5
"""`node042` inside `node042:gpu3`."""

Alternatives = list[tuple[str, float]]


def _concept_groups(tokens: Sequence[Token]) -> list[tuple[int, int, list[str]]]:
    """(first, last position, concept terms) of the glossary phrases, overlapping ones merged."""
    spans = sorted((t.pos, t.pos + max(t.span, 1) - 1, t.text)
                   for t in tokens if t.text.startswith("~"))
    groups: list[tuple[int, int, list[str]]] = []
    for first, last, term in spans:
        if groups and first <= groups[-1][1]:
            start, end, terms = groups[-1]
            groups[-1] = (start, max(end, last), terms if term in terms else [*terms, term])
        else:
            groups.append((first, last, [term]))
    return groups


def units(tokens: Sequence[Token]) -> list[Alternatives]:
    """The alternatives (term, weight) of each unit of `tokens` (from `analyze`), in order."""
    by_pos: dict[int, Alternatives] = {}
    for tok in tokens:
        if tok.text.startswith("~"):
            continue
        alternatives = by_pos.setdefault(tok.pos, [])
        weight = 1.0 if not alternatives else PART_WEIGHT
        if all(term != tok.text for term, _ in alternatives):
            alternatives.append((tok.text, weight))
    grouped: dict[int, tuple[int, list[str]]] = {}
    for first, last, concepts in _concept_groups(tokens):
        grouped[first] = (last, concepts)
    out: list[Alternatives] = []
    positions = sorted(set(by_pos) | set(grouped))
    skip_to = -1
    for pos in positions:
        if pos <= skip_to:
            continue
        if pos in grouped:
            last, concepts = grouped[pos]
            unit: Alternatives = [(c, CONCEPT_WEIGHT) for c in concepts]
            words = list(dict.fromkeys(term for p in range(pos, last + 1)
                                       for term, _ in by_pos.get(p, ())))
            unit += [(term, LITERAL_WEIGHT / len(words)) for term in words]
            out.append(unit)
            skip_to = last
        else:
            out.append(by_pos[pos])
    return out


def literal(unit: Alternatives) -> str | None:
    """The first term of `unit` that is a typed word, not a concept."""
    return next((term for term, _ in unit if not term.startswith("~")), None)
