"""The redactor masks every secret value and secret-looking text, however it is spelled.

Most text is let through by a cheap check for the literals the built-in patterns need
(`may_look_secret`); these tests hold it to never letting through what a pattern would mask.
"""

from __future__ import annotations

import re
import sys

import pytest

from fabtui.runbooks.redact import _TRIGGER_WORDS, PATTERNS, Redactor, may_look_secret

EVERY_CHARACTER = "".join(map(chr, range(sys.maxunicode + 1)))
CASELESS = ("pass", "pwd", "secret", "token", "key", "auth", "bearer")
"""The trigger words of the case-insensitive patterns (AKIA, the private key's BEGIN and the
GitHub prefixes are matched as written: for them folding is only looser)."""


def test_the_caseless_words_are_triggers() -> None:
    assert set(CASELESS) <= set(_TRIGGER_WORDS)


@pytest.mark.parametrize("letter", sorted(set("".join(CASELESS))))
def test_every_character_a_pattern_takes_for_a_trigger_letter_folds_to_it(letter: str) -> None:
    taken = set(re.findall(f"(?i){re.escape(letter)}", EVERY_CHARACTER))
    assert letter in taken
    assert {c for c in taken if c.casefold() != letter.casefold()} == set()


@pytest.mark.parametrize(("text", "masked"), [
    ("PaSſword: hunter2 rest", "PaSſword: *** rest"),  # a long s, which (?i) takes for s
    ("api_\u212aey=abc123", "api_\u212aey=***"),  # the Kelvin sign, taken for k
    ("TOKEN = 'two words'", "TOKEN = ***"),
    ("Authorization: Bearer eyJabc.def==", "Authorization: Bearer ***"),
    ("bearer eyJabc.def==", "bearer ***"),
    ("id AKIAABCDEFGHIJKLMNOP end", "id *** end"),
    ("ghp_" + "a" * 24, "ghp_***"),
    ("x -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- y", "x *** y"),
])
def test_secret_looking_text_is_masked_however_it_is_cased(text: str, masked: str) -> None:
    assert may_look_secret(text)
    assert Redactor().text(text) == masked


def test_text_without_any_trigger_is_unchanged_and_configured_patterns_always_run() -> None:
    plain = "node001 mlx5_0 port 1 state ACTIVE rate 400 Gb/sec"
    assert not may_look_secret(plain)
    assert Redactor().text(plain) == plain
    assert Redactor(extra=(r"tenant-\d+",)).text(f"{plain} tenant-42") == f"{plain} ***"
    custom = Redactor(patterns=(re.compile(r"ACTIVE"),))
    assert custom.text(plain) == plain.replace("ACTIVE", "***")
    assert not [p for p in PATTERNS if p.search(plain)]


def test_a_secret_holding_a_shorter_one_is_masked_whole_whenever_it_was_added() -> None:
    redactor = Redactor("abc")
    redactor.add("xxabcxx")
    assert redactor.text("a xxabcxx b abc") == "a *** b ***"
    assert redactor.scrub({"k": ["xxabcxx", 17], "n": 1234}) == {"k": ["***", 17], "n": 1234}
    assert redactor.text("pin 1234") == "pin 1234"
    redactor.add("1234")  # what was let through before is masked from now on
    assert redactor.scrub({"n": 1234}) == {"n": "***"}
    assert redactor.text("pin 1234") == "pin ***"
