"""`Hanging`: text whose long lines wrap under themselves, never back to column 0.

A triage's evidence line (`  logs/job.log:1155  2: node003 ... NCCL WARN NET/IB : Got
completion ...`) or an evidence-chain link wrapped at the panel's edge and went on at the
panel's first column, where it read as a line of its own. Here each line's continuation is
indented past the line's own leading spaces (by `extra` more), the way a man page or `ls -l`
in a narrow pane keeps a paragraph's shape.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text


class Hanging:
    """Render `text` line by line; a line too long for the width wraps with its continuation
    lines indented by the line's leading spaces plus `extra` (at most half the width)."""

    def __init__(self, text: Text, extra: int = 2) -> None:
        self.text = text
        self.extra = extra

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(1, options.max_width)
        for line in self.text.split("\n", allow_blank=True):
            yield from hang(console, line, width, self.extra)


def hang(console: Console, line: Text, width: int, extra: int = 2) -> list[Text]:
    """`line` wrapped to `width`, its continuation lines indented (see `Hanging`)."""
    plain = line.plain
    lead = len(plain) - len(plain.lstrip(" "))
    indent = min(lead + extra, width // 2)
    first = line.wrap(console, width, overflow="fold")
    if len(first) <= 1:
        return [first[0] if first else Text()]
    head = first[0]
    taken = len(head.plain.rstrip())
    rest = line[taken:]
    rest = rest[len(rest.plain) - len(rest.plain.lstrip()):]
    shown = [head]
    for part in rest.wrap(console, width - indent, overflow="fold"):
        shown.append(Text(" " * indent) + part)
    return shown
