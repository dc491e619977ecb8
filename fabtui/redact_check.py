"""Is a site's `redact` pattern fit to run over everything a session stores?

Every journal line, case and log goes through the configured patterns (`Redactor`), so a bad one
does not fail where it is written, it fails later and everywhere: an invalid pattern stops the
first run, one that matches empty text puts `***` between every character, one that matches
ordinary words masks the whole journal, and one with nested quantifiers (`(\\w+)+`) can backtrack
for minutes on a single long line. The config refuses such patterns when it is read.

Backtracking is judged by the pattern's shape (a repeat inside an unbounded repeat, or an
unbounded repeat inside a repeat; an alternation inside a repeat whose branches can match the same
text or nothing, like `(a|aa)+` or `(a|a?)+`), since Python cannot interrupt a regex running
in-process; a timed probe over sample lines then catches what is merely slow.
"""

from __future__ import annotations

import importlib
import re
import time
from typing import Any

_SAMPLES = (
    "Ethernet0  up  400G  9216  rx_ok 1234567  rx_err 0  tx_drop 12",
    "node003:12345:12401 [2] NCCL INFO Channel 00/08 : 0 1 2 3 4 5 6 7",
    "ib_write_bw 65536 5000 393.21 392.87 0.749400 on mlx5_0 port 1 to node004",
    "the optic on leaf-g00-r3 Ethernet12 was replaced and the link came back up",
)
"""Ordinary output a redaction pattern must leave mostly alone."""
_MAX_MASKED = 0.5
"""Largest share of a sample line a pattern may mask."""
_MAX_PROBE_S = 0.05
"""A pattern slower than this over the samples would slow every stored line."""
_UNBOUNDED = 1_000
"""A repeat allowing more than this many is treated as unbounded."""
_MANY = 4
r"""A repeat allowing more than this many multiplies the ways an ambiguous alternation inside
it can match past what a line can afford (`(a|a?){16}b`: 25 s on 24 characters); four keeps
the usual dotted-quad pattern, `((25[0-5]|2[0-4]\d|1?\d?\d)\.){3}`."""
_REPEATS = ("MAX_REPEAT", "MIN_REPEAT")
# Characters a branch's first set is tried on: Latin, Greek and Cyrillic letters, digits of
# other scripts, a line separator, an ideograph (what character classes and flags tell apart).
_ALPHABET = "".join(map(chr, range(0x250))) + "\u0394\u0436\u0663\u2028\u4e2d\U0001d7d8"
_EVERY = frozenset(_ALPHABET)


def redact_problem(pattern: str) -> str | None:
    """Why `pattern` cannot be a redaction pattern (one line), or None when it can."""
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        return f"is not a valid regular expression: {exc}"
    if compiled.search("") is not None:
        return "matches empty text: it would mask between every character; make it match " \
               "at least one character"
    if _nested_repeat(pattern):
        return "risks catastrophic backtracking (a repeat inside a repeat, like `(\\w+)+`): " \
               "bound or flatten the inner repeat"
    if _ambiguous_alternation(pattern):
        return "risks catastrophic backtracking (an alternation inside a repeat whose " \
               "branches can match the same text or nothing, like `(a|aa)+` or `(a|a?)+`): " \
               "make the branches start differently, or the group atomic `(?>...)`"
    started = time.perf_counter()
    for sample in _SAMPLES:
        spans = [m.span() for m in compiled.finditer(sample)]
        if any(start == end for start, end in spans):
            return "matches empty text (a lookaround alone?): it would insert masks; make it " \
                   "match at least one character"
        masked = sum(end - start for start, end in spans)
        if masked > _MAX_MASKED * len(sample):
            return f"would mask most of ordinary output ({masked} of {len(sample)} characters " \
                   f"of {sample!r}); match only the secret's own format"
    if time.perf_counter() - started > _MAX_PROBE_S:
        return "is too slow to run over every stored line; simplify it"
    return None


def _nested_repeat(pattern: str) -> bool:
    """True when the parsed pattern has a repeat that can backtrack exponentially."""
    # The regex parser is private but stable since 3.11 (`sre_parse` before); no stubs exist.
    parser: Any = importlib.import_module("re._parser")
    return _walk(parser.parse(pattern), outer_repeats=False, outer_unbounded=False)


def _walk(items: Any, *, outer_repeats: bool, outer_unbounded: bool) -> bool:
    for op, arg in items:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT"):
            _low, high, body = arg
            repeats, unbounded = high > 1, high > _UNBOUNDED
            if (outer_unbounded and repeats) or (outer_repeats and unbounded):
                return True
            if _walk(body, outer_repeats=outer_repeats or repeats,
                     outer_unbounded=outer_unbounded or unbounded):
                return True
            continue
        # POSSESSIVE_REPEAT and ATOMIC_GROUP never backtrack into themselves: safe as written.
        parts = [arg[-1]] if name == "SUBPATTERN" else list(arg[1]) if name == "BRANCH" \
            else [arg[1]] if name in ("ASSERT", "ASSERT_NOT") \
            else [part for part in arg[1:] if part is not None] if name == "GROUPREF_EXISTS" \
            else []
        if any(_walk(part, outer_repeats=outer_repeats, outer_unbounded=outer_unbounded)
               for part in parts):
            return True
    return False


def _ambiguous_alternation(pattern: str) -> bool:
    """True when a repeat of more than `_MANY` holds an alternation two of whose branches can
    start with the same character, or one of which can match nothing: each repetition may then
    go either way, and a failing match tries every combination."""
    parser: Any = importlib.import_module("re._parser")
    compiler: Any = importlib.import_module("re._compiler")
    parsed = parser.parse(pattern)
    state = parsed.state
    known: dict[str, frozenset[str]] = {}

    def characters(item: Any) -> frozenset[str]:
        """The characters of `_ALPHABET` one single-character item matches."""
        key = repr(item)
        if key not in known:
            try:
                alone = compiler.compile(parser.SubPattern(state, [item]), state.flags)
                known[key] = frozenset(c for c in _ALPHABET if alone.fullmatch(c))
            except Exception:  # an item that will not stand alone: assume it takes any
                known[key] = _EVERY
        return known[key]

    def first(items: Any) -> tuple[frozenset[str], bool]:
        """(characters a match of `items` can start with, whether it can match nothing)."""
        found: frozenset[str] = frozenset()
        for item in items:
            starts, empty = first_of(item)
            found |= starts
            if not empty:
                return found, False
        return found, True

    def first_of(item: Any) -> tuple[frozenset[str], bool]:
        op, arg = item
        name = str(op)
        if name in ("LITERAL", "NOT_LITERAL", "ANY", "IN"):
            return characters(item), False
        if name == "SUBPATTERN":
            return first(arg[-1])
        if name == "ATOMIC_GROUP":
            return first(arg)
        if name == "BRANCH":
            parts = [first(branch) for branch in arg[1]]
            return frozenset().union(*(p[0] for p in parts)), any(p[1] for p in parts)
        if name in (*_REPEATS, "POSSESSIVE_REPEAT"):
            starts, empty = first(arg[2])
            return starts, empty or arg[0] == 0
        if name in ("AT", "ASSERT", "ASSERT_NOT"):
            return frozenset(), True
        return _EVERY, True  # a group reference, or anything else: assume the worst

    def clash(branches: list[Any]) -> bool:
        seen: frozenset[str] = frozenset()
        for starts, empty in map(first, branches):
            if empty or seen & starts:
                return True
            seen |= starts
        return False

    def walk(items: Any, many: bool) -> bool:
        for op, arg in items:
            name = str(op)
            if name in _REPEATS:
                if walk(arg[2], many or arg[1] > _MANY):
                    return True
                continue
            if name == "BRANCH" and many and clash(arg[1]):
                return True
            # POSSESSIVE_REPEAT and ATOMIC_GROUP never backtrack into themselves: safe as written.
            parts = [arg[-1]] if name == "SUBPATTERN" else list(arg[1]) if name == "BRANCH" \
                else [arg[1]] if name in ("ASSERT", "ASSERT_NOT") \
                else [part for part in arg[1:] if part is not None] \
                if name == "GROUPREF_EXISTS" else []
            if any(walk(part, many) for part in parts):
                return True
        return False

    return walk(parsed, False)
