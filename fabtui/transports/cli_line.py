"""What one line sent to an interactive CLI session may hold.

A switch CLI is a terminal: whatever arrives is typed. A newline or carriage return ends the line
and runs it (on SONiC and Cumulus the CLI is bash, so `x\\nsudo reboot` is two commands); a tab
asks for completion, ESC and the other C0/C1 controls and DEL edit the line or drive the
terminal. Quoting cannot help, because the terminal acts on these characters before any shell
parses the quotes. So a line sent to a session holds none of them, and values that would bring
them in are refused before anything is sent. Unicode line and paragraph separators and
bidirectional-text controls are refused too: they are no line break to the terminal, but they
make the line shown to the operator differ from the line sent.

`MAX_LINE` bytes per line: the longest line a Linux terminal delivers in canonical mode (its line
buffer is 4096 bytes including the newline). CLIs that read through readline take longer lines,
but no switch command needs more than a few hundred bytes; a longer value is a mistake or an
attack, refused with a clear reason instead of being typed into the switch for minutes.
"""

from __future__ import annotations

from fabtui.errors import CONTROL, escaped, printable

__all__ = ["CONTROL", "MAX_LINE", "control_problem", "escaped", "length_problem", "line_problem",
           "visible"]

MAX_LINE = 4095
"""Bytes (UTF-8) one line sent to a CLI session may have, not counting the line end."""

_NAMES = {"\n": "a newline", "\r": "a carriage return", "\x00": "a NUL", "\t": "a tab",
          "\x1b": "an escape (ESC)", "\x7f": "a DEL", "\x85": "a next-line (NEL)",
          "\u2028": "a Unicode line separator", "\u2029": "a Unicode paragraph separator"}


def control_problem(text: str) -> str | None:
    """Why `text` cannot go into a CLI line (its first control character), or None.

    The text itself is not repeated: it may be a secret.
    """
    match = CONTROL.search(text)
    if match is None:
        return None
    char = match.group(0)
    name = _NAMES.get(char) or ("a bidirectional-text control" if ord(char) > 0x9f
                                else "a control character")
    return f"holds {name} ({escaped(char)}) at character {match.start() + 1}"


def length_problem(text: str, limit: int = MAX_LINE) -> str | None:
    """Why `text` is too long for a CLI line, or None."""
    size = len(text.encode("utf-8", errors="replace"))
    if size <= limit:
        return None
    return f"is {size:,} bytes long; a line sent to a switch CLI may be at most {limit:,}"


def line_problem(line: str) -> str | None:
    """Why `line` cannot be sent to a CLI session as one line, or None."""
    return control_problem(line) or length_problem(line)


def visible(text: str) -> str:
    """`text` with every control character written as an escape, for showing it to a person."""
    return printable(text)
