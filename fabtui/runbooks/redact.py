"""Secrets out of everything a session stores: known secret values and secret-looking text."""

from __future__ import annotations

import re
from typing import Any

MASK = "***"
PATTERNS = (
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
    re.compile(r"(?i)\b((?:pass(?:word|wd)?|pwd|secret|token|api[_-]?key|access[_-]?key|"
               r"auth)\s*[:=]\s*)(\"[^\"]*\"|'[^']*'|\S+)"),
    re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/-]+=*"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\b(gh[pousr]_)[A-Za-z0-9]{20,}\b"),
)
"""Text that looks like a credential wherever it appears (the key word is kept)."""
_TRIGGER_WORDS = ("pass", "pwd", "secret", "token", "key", "auth", "bearer", "akia", "-----begin")
"""The literals `may_look_secret` looks for (with the GitHub token prefixes)."""
_GITHUB_PREFIX = re.compile(r"gh[pousr]_")


def may_look_secret(value: str) -> bool:
    """False when no pattern of `PATTERNS` can match `value`: it holds none of the literals
    they need, compared case-folded (every character the patterns' case-insensitive matching
    takes for one of these letters folds to it; a test checks the whole of Unicode). Most
    text is let through after these substring searches instead of one regex pass per pattern.
    Masking only puts `***` between pieces of the text, so it never makes a new literal."""
    folded = value.casefold()
    # Spelled out, not any() over _TRIGGER_WORDS: this runs on every string a session stores.
    return ("pass" in folded or "pwd" in folded or "secret" in folded or "token" in folded or
            "key" in folded or "auth" in folded or "bearer" in folded or "akia" in folded or
            "-----begin" in folded or _GITHUB_PREFIX.search(folded) is not None)


_MEMO_LENGTH = 256
_MEMO_SIZE = 16384


class Redactor:
    """Replaces secret values and secret-looking text with `***`."""

    def __init__(self, *values: str, patterns: tuple[re.Pattern[str], ...] = PATTERNS,
                 extra: tuple[str, ...] = ()) -> None:
        self._values: set[str] = set()
        self._longest_first: list[str] = []
        self._memo: dict[str, str] = {}
        """Short texts already masked (the same port names, verdicts and keys recur in every
        record of a session), forgotten when a secret is added."""
        self.patterns = patterns + tuple(re.compile(p) for p in extra)
        """Built-in patterns, then the configured ones (`redact` in the config file)."""
        self._filtered = len(patterns) if patterns is PATTERNS else 0
        """How many of the first patterns `may_look_secret` stands for (the built-in ones)."""
        self.add(*values)

    def add(self, *values: str) -> None:
        """Remember more secret values (empty and very short ones are ignored)."""
        new = {v for v in values if v and len(v) >= 3} - self._values
        if new:
            self._values |= new
            self._memo.clear()
            # A longer secret first: one that holds a shorter one is masked whole.
            self._longest_first = sorted(self._values, key=len, reverse=True)

    def text(self, value: str) -> str:
        """`value` with every secret masked."""
        if len(value) <= _MEMO_LENGTH:
            known = self._memo.get(value)
            if known is None:
                if len(self._memo) >= _MEMO_SIZE:
                    self._memo.clear()
                known = self._memo[value] = self._masked(value)
            return known
        return self._masked(value)

    def _masked(self, value: str) -> str:
        for secret in self._longest_first:
            if secret in value:
                value = value.replace(secret, MASK)
        patterns = self.patterns
        if self._filtered and not may_look_secret(value):
            patterns = patterns[self._filtered:]  # the configured ones always run
        for pattern in patterns:
            value = pattern.sub(_keep_key_word, value)
        return value

    def scrub(self, data: Any) -> Any:
        """A copy of `data` (dicts, lists, strings, numbers) with every secret masked."""
        kind = type(data)  # the plain types first, without isinstance's subclass checks
        if kind is dict:
            return {k: self.scrub(v) for k, v in data.items()}
        if kind is str:
            return self.text(data)
        if kind is list:
            return [self.scrub(v) for v in data]
        if kind is bool or data is None:
            return data
        if kind is int or kind is float:
            return MASK if self._values and str(data) in self._values else data
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, dict):
            return {k: self.scrub(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.scrub(v) for v in data]
        if isinstance(data, int | float) and not isinstance(data, bool) and \
                str(data) in self._values:
            return MASK  # a secret input of type int (a PIN) is a secret too
        return data


def _keep_key_word(match: re.Match[str]) -> str:
    """The mask, after the key word the pattern keeps (its first group), if any."""
    return (match.group(1) if match.groups() and match.group(1) else "") + MASK
