"""Errors a user can read: every problem with an input names the file and line it came from.

Bad input never reaches the user as a traceback. Readers collect every problem they can find and
raise one `InputError` carrying them all, so a user fixes a file in one pass, not one error per run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an input, located as precisely as the reader could."""

    source: str
    """The file the problem is in (as the user named it), or a label such as `--param`."""
    line: int | None
    """1-based line number, or None when the problem concerns the input as a whole."""
    message: str

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.source}: {self.message}"
        return f"{self.source}:{self.line}: {self.message}"


class InputError(Exception):
    """An input could not be read or is not valid; `problems` lists every reason found."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    @classmethod
    def single(cls, source: str, line: int | None, message: str) -> InputError:
        """Shorthand for an error with exactly one problem."""
        return cls([Problem(source, line, message)])


class RequestError(Exception):
    """A request that cannot be met (an unknown session, probe or step; a run that has already
    finished), explained in one line. Faces show it as is (the command line exits 2)."""


def one_line(exc: BaseException, limit: int = 160) -> str:
    """An unexpected exception as a face shows it: `KeyError: 'x'`, its type and the first
    line of its message (the type alone when the message is empty; cut at `limit`)."""
    lines = str(exc).strip().splitlines()
    message = lines[0].strip() if lines else ""
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text if len(text) <= limit else text[:limit - 1] + "…"


CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Characters a terminal acts on, or that make shown text differ from the text itself: the C0
and C1 controls, DEL, Unicode line and paragraph separators and bidirectional-text controls."""


def escaped(char: str) -> str:
    """`char` written as an escape a person can read: `\\n`, `\\x1b`, `\\u2028`."""
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x00": "\\x00"}
    if char in named:
        return named[char]
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def printable(text: str, limit: int | None = None) -> str:
    """Text from elsewhere (a server's answer, a device's output) made safe to show: every
    control character written as an escape (`\\x1b]0;...` sets no window title, `\\r` forges
    no line), and cut at `limit` characters, saying how much was left out."""
    if limit is not None and len(text) > limit:
        text = f"{text[:limit]}... ({len(text) - limit:,} more characters)"
    return CONTROL.sub(lambda m: escaped(m.group(0)), text)
