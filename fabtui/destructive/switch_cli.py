"""What takes something down on a switch whose CLI is Cisco-like (Arista EOS, Cisco NX-OS,
NVIDIA Onyx): the lines of one session, judged in order, as the switch reads them.

These CLIs take any unique prefix of a keyword (`conf t`, `shut`, `rel`), so keywords are
matched as prefixes with the shortest form each CLI accepts. In configuration mode (after
`configure`), every line changes the switch unless it is listed as safe: leaving the mode, naming
the interface to work on, a `show`, a description (a label), or bringing an interface back up
(`no shutdown`: the end of a repair, which takes nothing down). `bash …` (EOS) and `run bash …`
(NX-OS) run a Linux command: the caller judges it as one (`LineVerdict.shell`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass


def _is(word: str, full: str, shortest: int) -> bool:
    return shortest <= len(word) <= len(full) and full.startswith(word)


@dataclass(frozen=True)
class LineVerdict:
    """One CLI line that is destructive (`why`), or that runs a Linux command (`shell`)."""

    line: str
    why: str | None = None
    shell: str | None = None


_SAFE_IN_CONFIG = ("exit", "end", "show", "interface", "do", "terminal", "description", "!")


def judge_lines(lines: Iterable[str]) -> Iterator[LineVerdict]:
    """Each destructive line of a Cisco-like CLI session (see the module's doc)."""
    config = False
    for line in lines:
        words = line.lower().split()
        if not words or words[0].startswith(("!", "#")):
            continue
        if words[0] == "do" and len(words) > 1:
            words = words[1:]  # an exec command typed in configuration mode
        head = words[0]
        second = words[1] if len(words) > 1 else ""
        if _is(head, "configure", 4):
            if _is(second, "replace", 3):
                yield LineVerdict(line, "replaces the running configuration")
            config = True
            continue
        if head == "end":
            config = False
            continue
        verdict = _exec_form(line, words)
        if verdict is not None:
            yield verdict
            continue
        if config and not _safe_in_config(words):
            shuts = any(_is(w, "shutdown", 4) for w in words[1:]) and "no" not in words[:1]
            yield LineVerdict(line, "shuts an interface down" if shuts
                              else "changes the switch's running configuration")


def _exec_form(line: str, words: list[str]) -> LineVerdict | None:
    head = words[0]
    second = words[1] if len(words) > 1 else ""
    if _is(head, "reload", 3):
        return LineVerdict(line, "reloads (reboots) the switch")
    if _is(head, "shutdown", 4):
        return LineVerdict(line, "shuts an interface or the switch down")
    if (head == "write" and _is(second, "erase", 2)) or _is(head, "erase", 3):
        return LineVerdict(line, "erases the saved configuration")
    if head in ("delete", "format", "install", "rollback", "boot") or \
            (head == "image" and second in ("install", "boot", "delete")):
        return LineVerdict(line, f"{head}: changes what the switch boots or deletes files")
    if head == "reset" or (head == "hw-module" and "reset" in words):
        return LineVerdict(line, "resets the switch or a module")
    if head == "copy" and len(words) > 2 and _is(words[-1], "running-config", 3):
        return LineVerdict(line, "replaces the running configuration")
    if head == "clear" and any(w in ("bgp", "ospf", "isis", "lldp", "arp-cache", "mlag")
                               for w in words[1:3]):
        return LineVerdict(line, "resets routing or neighbour sessions")
    if head == "bash":
        return LineVerdict(line, shell=line.split(None, 1)[1] if len(words) > 1 else "")
    if head == "run" and second == "bash":
        return LineVerdict(line, shell=line.split(None, 2)[2] if len(words) > 2 else "")
    return None


def _safe_in_config(words: list[str]) -> bool:
    head = words[0]
    if _is(head, "interface", 2):  # choosing the interface; Onyx also takes a change after it
        return len(words) <= 3 and any(c.isdigit() for c in words[-1])
    if any(_is(head, safe, 2) or head == safe for safe in _SAFE_IN_CONFIG):
        return True
    return head == "no" and len(words) > 1 and _is(words[1], "shutdown", 4)
