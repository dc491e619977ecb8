"""Fuzzing every parser: random and mutated input never raises anything but ParseError.

Parsers are called directly (not through the registry, which would turn a crash into a
ParseError and hide the bug).
"""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabtui.parsers import registry
from fabtui.parsers.errors import ParseError
from tests.support.fixture_inputs import samples

KINDS = sorted(registry.parsers())
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _check(kind: str, text: str) -> None:
    module = registry.get(kind).module
    score = module.detect(text)
    assert 0.0 <= score <= 1.0
    with contextlib.suppress(ParseError):
        module.parse(text)


@st.composite
def mutated(draw: st.DrawFn, kind: str) -> str:
    lines = draw(st.sampled_from(samples(kind))).split("\n")
    for _ in range(draw(st.integers(1, 6))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["drop", "dup", "cut", "garble", "swap", "truncate"]))
        if action == "drop":
            del lines[i]
        elif action == "dup":
            lines.insert(i, lines[i])
        elif action == "cut":
            lines[i] = lines[i][: draw(st.integers(0, max(len(lines[i]), 0)))]
        elif action == "garble":
            lines[i] = draw(st.text(max_size=40))
        elif action == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines = lines[:i]
    return "\n".join(lines)


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(text=st.text(max_size=500))
def test_random_text(kind: str, text: str) -> None:
    _check(kind, text)


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(data=st.data())
def test_mutated_fixtures(kind: str, data: st.DataObject) -> None:
    _check(kind, data.draw(mutated(kind)))
