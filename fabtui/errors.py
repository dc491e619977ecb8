"""Errors a user can read: every problem with an input names the file and line it came from.

Bad input never reaches the user as a traceback. Readers collect every problem they can find and
raise one `InputError` carrying them all, so a user fixes a file in one pass, not one error per run.
"""

from __future__ import annotations

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
