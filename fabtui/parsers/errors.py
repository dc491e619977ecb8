"""The one exception a parser may raise."""

from __future__ import annotations


class ParseError(Exception):
    """Input that a parser cannot read, located at the line where reading failed.

    `kind` is the output kind the input looked like (the parser's own kind, or the best guess of
    detection); `line` is 1-based in the text handed to the parser, or None for the input as a
    whole (e.g. empty input).
    """

    def __init__(self, kind: str | None, line: int | None, message: str) -> None:
        self.kind = kind
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        looked = f" (input looked like {self.kind})" if self.kind else ""
        return f"{where}{self.message}{looked}"
