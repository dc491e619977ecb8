"""torchrun's failure reports: `failed (exitcode: N)` lines and the ChildFailedError report
(its `Failures:` and `Root Cause` entries: host, rank, exitcode, traceback), an event per child.
"""

from __future__ import annotations

import re

from fabtui.parsers.nccl_log._records import Event
from fabtui.parsers.nccl_log._state import (
    MESSAGE_MAX,
    ChildBlock,
    State,
    add_event,
    add_simple,
    int_group,
)
from fabtui.parsers.text import strip_launcher_prefix

_EXITCODE = re.compile(r"failed \(exitcode: (-?\d+)\)(?: local_rank: (\d+))?(?: \(pid: (\d+)\))?")
_BLOCK_FIELD = re.compile(r"^\s*(time|host|rank|exitcode|error_file|traceback)\s*:\s*(.*?)\s*$")
_BLOCK_ENTRY = re.compile(r"^\s*\[(\d+)\]:\s*$")


def exitcode_line(state: State, number: int, line: str) -> Event | None:
    match = _EXITCODE.search(line)
    if match is None:
        return None
    event = add_simple(state, number, line, "child_failed")
    if event is not None:
        event.status = int(match.group(1))
        event.local_rank = int_group(match, 2)
        event.pid = int_group(match, 3)
    return event


def child_failed_start(state: State, number: int, line: str) -> None:
    event = add_simple(state, number, line, "child_failed")
    if event is not None and event.exception is None and "ChildFailedError" in line:
        event.exception = "ChildFailedError"
    if event is not None:
        state.block = ChildBlock(event=event)


def child_block_line(state: State, block: ChildBlock, number: int, raw: str) -> bool:
    """A line of torchrun's failure report; True when consumed."""
    block.left -= 1
    _, line = strip_launcher_prefix(raw)
    text = line.strip()
    if block.left <= 0 or (text.startswith("=") and block.section == "root" and block.entry):
        state.block = None
        return bool(text.startswith("="))
    if text.startswith("Failures:"):
        block.section, block.entry = "failures", None
    elif text.startswith("Root Cause"):
        block.section, block.entry = "root", None
    elif text.startswith("[") and _BLOCK_ENTRY.match(text):
        block.entry = _block_entry(state, block, number)
    elif block.entry is not None and ":" in line and (found := _BLOCK_FIELD.match(line)):
        _block_field(block.entry, found.group(1), found.group(2))
    elif not (text.startswith(("=", "-")) or text.endswith("FAILED") or not text
              or "<NO_OTHER_FAILURES>" in text):
        return False
    return True


def _block_entry(state: State, block: ChildBlock, number: int) -> Event | None:
    if block.section == "root":
        return block.event
    if block.section != "failures":
        return None
    event = Event(type="child_failed", rank=None, host=None, seq=None, op=None,
                  timeout_ms=None, peer=None, status=None, line=number,
                  message=block.event.message, exception=block.event.exception)
    return event if add_event(state, event) else None


def _block_field(event: Event, name: str, value: str) -> None:
    if name == "host":
        event.host = value or None
    elif name == "rank":
        rank = re.match(r"(\d+)(?:\s*\(local_rank:\s*(\d+)\))?", value)
        if rank:
            event.rank, event.rank_source = int(rank.group(1)), "torchrun"
            event.local_rank = int_group(rank, 2)
    elif name == "exitcode":
        code = re.match(r"(-?\d+)(?:\s*\(pid:\s*(\d+)\))?", value)
        if code:
            event.status = int(code.group(1))
            event.pid = int_group(code, 2)
    elif name == "traceback" and value and "To enable traceback" not in value:
        event.message = f"{event.message}; {value}"[:MESSAGE_MAX]
