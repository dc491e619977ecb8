"""Collecting a command's output without letting it eat memory.

A runaway command (a debug log, `dmesg` on a sick host, a 50 MB dump) must not grow fabtui's memory
with it. `OutputCollector` keeps the first half of the cap and a rolling tail of the second half:
the head shows how a run started, the tail how it ended (where nccl-tests prints its summary).
Complete lines are handed to a callback as they arrive, so views can stream them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

DEFAULT_CAP = 4 * 1024 * 1024
"""Bytes of output kept per command: enough for any counter dump or test table."""

LineCallback = Callable[[str], None]


class OutputCollector:
    """Accumulates a byte stream: capped head + tail, total size, and line callbacks."""

    def __init__(self, cap: int = DEFAULT_CAP, on_line: LineCallback | None = None) -> None:
        self.head_cap = cap // 2
        self.tail_cap = cap - self.head_cap
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0
        self.on_line = on_line
        self._partial = bytearray()
        self._max_partial = max(cap, 1024)

    def feed(self, chunk: bytes) -> None:
        """Take the next chunk of output."""
        if not chunk:
            return
        self.total += len(chunk)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk_rest = chunk[room:]
        else:
            chunk_rest = chunk
        if chunk_rest:
            self.tail.append(bytes(chunk_rest))
            self.tail_size += len(chunk_rest)
            while self.tail_size > self.tail_cap:
                excess = self.tail_size - self.tail_cap
                first = self.tail[0]
                if len(first) <= excess:
                    self.tail.popleft()
                    self.tail_size -= len(first)
                else:
                    self.tail[0] = first[excess:]
                    self.tail_size -= excess
        if self.on_line is not None:
            self._emit_lines(chunk)

    def _emit_lines(self, chunk: bytes) -> None:
        assert self.on_line is not None
        self._partial += chunk
        if b"\n" not in chunk and len(self._partial) <= self._max_partial:
            return
        *complete, rest = self._partial.split(b"\n")
        for line in complete:
            self.on_line(line.decode("utf-8", errors="replace").rstrip("\r"))
        if len(rest) > self._max_partial:  # a line longer than the cap: hand it over in pieces
            self.on_line(bytes(rest).decode("utf-8", errors="replace"))
            rest = bytearray()
        self._partial = bytearray(rest)

    def finish(self) -> None:
        """Flush a last line without a newline to the callback."""
        if self.on_line is not None and self._partial:
            self.on_line(self._partial.decode("utf-8", errors="replace").rstrip("\r"))
        self._partial = bytearray()

    @property
    def truncated(self) -> bool:
        """True if bytes were dropped between head and tail."""
        return self.total > len(self.head) + self.tail_size

    def text(self) -> str:
        """The kept output; a marker line shows where and how much was dropped."""
        tail = b"".join(self.tail)
        if not self.truncated:
            return (bytes(self.head) + tail).decode("utf-8", errors="replace")
        # Trim the tail to start on a whole line so parsers do not see half a row.
        newline = tail.find(b"\n")
        if 0 <= newline < len(tail) - 1:
            tail = tail[newline + 1:]
        dropped = self.total - len(self.head) - len(tail)
        marker = f"\n[... fabtui: {dropped} bytes of output omitted ...]\n".encode()
        return (bytes(self.head) + marker + tail).decode("utf-8", errors="replace")
