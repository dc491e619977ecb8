"""What each switch operating system's CLI looks like to a program driving it.

Per flavor: how its prompt ends a reply, what turns paging off, what its pager prompts look like,
and how it says "I did not understand that". These are observed vendor behaviours:

- SONiC and Cumulus/NVUE log in to bash; `show ...` / `nv show ...` are programs that page
  through `$PAGER` (click / less), so paging is turned off in the environment.
- Arista EOS and Cisco NX-OS print `host>` / `host#` prompts, page with ` --More-- `, and take
  `terminal length 0`.
- NVIDIA Onyx (MLNX-OS) prints `host [cluster: role] >` prompts and takes
  `no cli session paging enable`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# `user@host...$ `: one word character each side of `@` accepts the same lines as `+` would (the
# rest is absorbed by `[^\r\n]*`) without its quadratic backtracking over a long line.
_BASH_PROMPT = rb"(?m)^[^\r\n]*[\w.-]@[\w.-][^\r\n]*[$#] ?\Z"
_ERRORS_BASH = (rb"command not found", rb"^Error: .*", rb"^Usage: .*", rb"No such command")


@dataclass(frozen=True)
class CliFlavor:
    """How to drive one switch OS's CLI."""

    name: str
    prompt: re.Pattern[bytes]
    """Matches the prompt at the very end of what the switch has sent so far; it is searched
    for only in the last line's final bytes, so it must match within one line."""
    paging_off: tuple[str, ...]
    """Commands sent once after login so replies never stop for a pager."""
    errors: tuple[re.Pattern[bytes], ...]
    """Lines by which the CLI rejects a command."""


MORE = re.compile(rb"(?:--\s?More\s?--|<--- More --->|\(END\)|--More--\s*\(\d+%\)|"
                  rb"Press any key to continue|lines \d+-\d+(?:/\d+)?(?: \(END\))?)\s*\Z")
"""Pager prompts, answered with a space (or `q` for less's `(END)`)."""


def _compile(*patterns: bytes) -> tuple[re.Pattern[bytes], ...]:
    return tuple(re.compile(p, re.M) for p in patterns)


FLAVORS: dict[str, CliFlavor] = {
    "sonic": CliFlavor(
        "sonic", re.compile(_BASH_PROMPT),
        ("export PAGER=cat SYSTEMD_PAGER= TERMINAL_PAGER=cat LESS=-FRX COLUMNS=250",),
        _compile(*_ERRORS_BASH)),
    "nvue": CliFlavor(
        "nvue", re.compile(_BASH_PROMPT),
        ("export PAGER=cat NVUE_PAGER=cat LESS=-FRX COLUMNS=250",),
        _compile(*_ERRORS_BASH, rb"^Error: .*", rb"is not one of")),
    "eos": CliFlavor(
        "eos", re.compile(rb"(?m)^[\w.\-()/]+[>#] ?\Z"),
        ("terminal length 0", "terminal width 32767"),
        _compile(rb"^% Invalid input.*", rb"^% Incomplete command.*",
                 rb"^% Ambiguous command.*", rb"^% Unrecognized command.*")),
    "nxos": CliFlavor(
        "nxos", re.compile(rb"(?m)^[\w.\-()/]+[>#] ?\Z"),
        ("terminal length 0", "terminal width 511"),
        _compile(rb"^% Invalid command.*", rb"^% Incomplete command.*",
                 rb"^% Invalid parameter.*", rb"Syntax error while parsing.*",
                 rb"^% Permission denied.*")),
    "onyx": CliFlavor(
        "onyx", re.compile(rb"(?m)^[\w.\-]+(?: \[[^\]\r\n]*\])? ?(?:\([\w-]+\) ?)?[>#] ?\Z"),
        ("no cli session paging enable",),
        _compile(rb"^% Unrecognized command.*", rb"^% Incomplete command.*",
                 rb"^% Invalid.*", rb"^% Ambiguous.*")),
    "linux": CliFlavor(
        "linux", re.compile(rb"(?m)^[^\r\n]*[$#] ?\Z"),
        ("export PAGER=cat SYSTEMD_PAGER= LESS=-FRX",),
        _compile(rb"command not found", rb"No such file or directory")),
}


def flavor(name: str) -> CliFlavor:
    """The flavor called `name`; ValueError lists the known ones."""
    try:
        return FLAVORS[name]
    except KeyError:
        raise ValueError(f"unknown CLI flavor {name!r}; known: {', '.join(FLAVORS)}") from None
