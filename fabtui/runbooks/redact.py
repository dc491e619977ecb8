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


class Redactor:
    """Replaces secret values and secret-looking text with `***`."""

    def __init__(self, *values: str, patterns: tuple[re.Pattern[str], ...] = PATTERNS,
                 extra: tuple[str, ...] = ()) -> None:
        self._values: set[str] = set()
        self.patterns = patterns + tuple(re.compile(p) for p in extra)
        """Built-in patterns, then the configured ones (`redact` in the config file)."""
        self.add(*values)

    def add(self, *values: str) -> None:
        """Remember more secret values (empty and very short ones are ignored)."""
        self._values |= {v for v in values if v and len(v) >= 3}

    def text(self, value: str) -> str:
        """`value` with every secret masked."""
        for secret in sorted(self._values, key=len, reverse=True):
            value = value.replace(secret, MASK)
        for pattern in self.patterns:
            value = pattern.sub(lambda m: (m.group(1) if m.groups() and m.group(1) else "")
                                + MASK, value)
        return value

    def scrub(self, data: Any) -> Any:
        """A copy of `data` (dicts, lists, strings, numbers) with every secret masked."""
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
