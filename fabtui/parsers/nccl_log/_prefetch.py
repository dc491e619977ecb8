"""A second process that reads a big NCCL log file ahead of the parse and sieves its lines.

Reading a big job's combined log costs the parse two kinds of work: per line, in C (reading the
file, decoding, splitting it into lines, looking each line's message up in the sieve of
messages only counted), and per line that must be read, in Python. The first kind is a third
of the time and needs nothing but the sieve, which only grows and whose "only counted" entries
never change. So a forked reader process does it for the next batches while the parse reads
the current one: it sends each batch as its text (split by the parse only where it needs every
line), the indexes of the lines its copy of what the parse knows does not let it keep back,
and those lines. It keeps back the INFO lines only counted, those that only note a host
already noted, the lines that change nothing (`State.plain`), and NET connection lines whose
tally it knows (sent as their index and tally code, added by the parse); where the parse
will count a batch's distinct lines to choose how to read it, it counts them. The parse tells
it, after each batch, what it learnt (`Known`), so the reader's copy follows it; a copy
behind the parse only sends a few more lines, which the parse then reads as it always did
(see `_reader._read_fresh`).

Used only where it is safe and pays: a regular file of at least `PREFETCH_MIN` bytes, on Linux
(fork), from a process running one thread (a fork copies no other thread: a lock another
thread held would stay locked in the child). Memory: the reader holds one batch and its sieve
copy; the pipe between holds at most a few batches, as the reader waits while the parse is
behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pickle
import select
import signal
import struct
import sys
import threading
from array import array
from collections.abc import Iterator
from itertools import compress, repeat
from operator import itemgetter, not_
from typing import Any, BinaryIO, NamedTuple

from fabtui.parsers.nccl_log._state import Known, plain_prefix
from fabtui.parsers.streaming import FileLines, text_batches

PREFETCH_MIN = 32 * 1024 * 1024
"""Files smaller than this are read in the parse's own process (a fork costs ~10 ms)."""
_FRAME_MAX = 4096
"""Bytes of a sieve update at most (POSIX `PIPE_BUF`: such a write is never split)."""
_HEAD = struct.Struct("<I")
_BATCH_HEAD = struct.Struct("<qQQQQQQq")
"""A batch's line count (or `_DONE`, `_FAILED`), the sizes of its parts in bytes, then its
count of distinct lines (`Batch.distinct`)."""
_DONE = -1
_FAILED = -2
_PIPE_SIZE = 1 << 20


class Batch(NamedTuple):
    """One batch of consecutive lines as the reader sends it."""

    size: int
    """How many lines it has."""
    text: memoryview
    """Its lines joined by newlines, in UTF-8 (split by `lines` only where every line is
    needed)."""
    visit: array[int]
    """Indexes of the lines the reader's sieve does not know as only counted, in order, and of
    each line after a WARN line (a WARN may wrap onto it)."""
    visited: list[str]
    """The lines at those indexes."""
    plain: array[int]
    """Indexes of lines the reader knows change nothing (`State.plain`), not sent."""
    tallied: array[int]
    """Indexes of the NET connection lines the reader knows the tally of, not sent..."""
    tally_codes: array[int]
    """... and their tally codes (`_reader._TALLY_BASE` on), which the parse adds."""
    after: str
    """The line after its last (the next batch's first), "" after the file's last."""
    distinct: int
    """How many of its lines are distinct, where the parse will ask; else -1."""


    @property
    def sieved(self) -> bool:
        """Whether the reader sieved it: not where the parse counts it (few distinct lines: it
        reads them from its tallies then), which the reader leaves to the parse."""
        return self.distinct < 0 or self.distinct * 4 > self.size * 3

    def lines(self) -> list[str]:
        """Every line of the batch."""
        return str(self.text, "utf-8").split("\n")


def prefetch_usable(lines: object) -> bool:
    """Whether `lines` can be read by a reader process (see the module's docstring)."""
    if not isinstance(lines, FileLines) or not sys.platform.startswith("linux"):
        return False
    if not _one_thread():
        return False
    try:
        return os.path.getsize(lines.path) >= PREFETCH_MIN
    except OSError:
        return False  # the parse's own read reports it


def _one_thread() -> bool:
    return threading.active_count() == 1


class Prefetcher:
    """The reader process of one file: iterate for its batches; `learnt` sends it sieve
    entries. Always `close` it (it is a context manager)."""

    def __init__(self, lines: FileLines, uncounted_run: int) -> None:
        """Start the reader. Raises OSError where no pipe or process can be had (a process
        limit: the caller reads the file itself), leaving no pipe open."""
        pipes: list[int] = []
        try:
            pipes.extend(os.pipe())
            pipes.extend(os.pipe())
            batch_read, batch_write, update_read, update_write = pipes
            _widen(batch_write)
            # Nothing buffered may be written twice: the reader ends with `os._exit`, which
            # flushes nothing, but a buffer copied into it could be flushed by an error on the
            # way.
            sys.stdout.flush()
            sys.stderr.flush()
            self._pid = os.fork()
        except OSError:
            for fd in pipes:
                os.close(fd)
            raise
        if self._pid == 0:  # the reader
            status = 0
            try:
                # The parse's own handlers are not the reader's: a signal ends it.
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                os.close(batch_read)
                os.close(update_write)
                _reader_main(lines.path, lines.chunk, batch_write, update_read, uncounted_run)
            except BaseException:  # it ends here whatever happens
                status = 1
            finally:
                os._exit(status)
        os.close(batch_write)
        os.close(update_read)
        os.set_blocking(update_write, False)
        self._update_write = update_write
        self._receive = open(batch_read, "rb", buffering=_PIPE_SIZE)  # noqa: SIM115
        self._unsent: list[bytes] = []
        self._closed = False
        self._path = lines.path

    def __enter__(self) -> Prefetcher:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Batch]:
        receive = self._receive
        while True:
            head = receive.read(_BATCH_HEAD.size)
            if len(head) < _BATCH_HEAD.size:
                raise self._ended()
            size, text_size, visit_size, visited_size, after_size, plain_size, tally_size, \
                distinct = _BATCH_HEAD.unpack(head)
            total = text_size + visit_size + visited_size + after_size + plain_size \
                + 2 * tally_size
            body = receive.read(total)
            if len(body) < total:
                raise self._ended()
            if size == _DONE:
                return
            if size == _FAILED:  # its error number and reason (`_reader_main`)
                code, _, reason = body.decode("utf-8", "replace").partition("\n")
                raise OSError(int(code), reason, self._path)
            view = memoryview(body)
            at = text_size
            indexes = array("I")
            indexes.frombytes(view[at:at + visit_size])
            at += visit_size
            visited = str(view[at:at + visited_size], "utf-8").split("\n") if visit_size else []
            at += visited_size
            after = str(view[at:at + after_size], "utf-8")
            at += after_size
            plain = array("I")
            plain.frombytes(view[at:at + plain_size])
            at += plain_size
            tallied, tally_codes = array("I"), array("I")
            tallied.frombytes(view[at:at + tally_size])
            tally_codes.frombytes(view[at + tally_size:at + 2 * tally_size])
            yield Batch(size, view[:text_size], indexes, visited, plain, tallied, tally_codes,
                        after, distinct)

    def _ended(self) -> OSError:
        """The error of a reader that ended before the end of the file, sending nothing more
        (killed, say). Its `strerror` is what `fabtui parse` shows."""
        return OSError(errno.EIO, "the NCCL log reader process ended without a word",
                       self._path)

    def learnt(self, known: Known) -> None:
        """Send the reader what the parse learnt since the last call (`Known`), and empty it.
        Never waits: what the pipe cannot take now is sent with the next call."""
        lists: tuple[list[Any], ...] = tuple(known)
        for kind, items in enumerate(lists):
            if items:
                self._unsent.extend(_frames(kind, items))
                items.clear()
        while self._unsent:
            try:
                os.write(self._update_write, self._unsent[0])
            except BlockingIOError:
                return
            except OSError:  # the reader has ended: nothing more to tell it
                self._unsent.clear()
                return
            del self._unsent[0]

    def close(self) -> None:
        """Stop the reader (if still running), wait for it to end and free the pipes."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._pid, signal.SIGTERM)  # (it may be waiting to write the next batch)
        os.waitpid(self._pid, 0)
        self._receive.close()
        os.close(self._update_write)


_COUNTED, _HOST_CODE, _HOSTS, _PLAIN, _TALLIES = range(5)


def _frames(kind: int, items: list[Any]) -> Iterator[bytes]:
    """`items` as frames of at most `_FRAME_MAX` bytes (a length, then the pickled kind and
    items)."""
    group: list[Any] = []
    size = 64
    for item in items:
        if _size(item) > _FRAME_MAX - 64:
            continue  # never told the reader: its lines are only sent to the parse
        if size + _size(item) > _FRAME_MAX and group:
            yield _frame(kind, group)
            group, size = [], 64
        group.append(item)
        size += _size(item)
    if group:
        yield _frame(kind, group)


def _size(item: str | tuple[str, int]) -> int:
    """Bytes an item may take pickled, at most."""
    return len(item) * 4 + 16 if isinstance(item, str) else len(item[0]) * 4 + 32


def _frame(kind: int, items: list[Any]) -> bytes:
    body = pickle.dumps((kind, items), protocol=pickle.HIGHEST_PROTOCOL)
    return _HEAD.pack(len(body)) + body


def _reader_main(path: str, chunk: int, batches: int, updates: int, uncounted_run: int) \
        -> None:
    """The reader process: send each batch of `path`, then the end (or an error's text)."""
    with open(batches, "wb", buffering=_PIPE_SIZE) as send:
        try:
            _read_ahead(path, chunk, send, updates, uncounted_run)
            _write(send, _DONE)
        except BaseException as error:  # reported to the parse, which raises it
            # As an OSError of the parse's own read: its number and reason (`strerror`, which
            # `fabtui parse` shows), the parse adding the path.
            if isinstance(error, OSError) and error.strerror:
                code, reason = error.errno or errno.EIO, error.strerror
            else:
                code, reason = errno.EIO, f"the NCCL log reader process failed: {error!r}"
            text = f"{code}\n{reason}".encode()
            _write(send, _FAILED, text=text)


class _Copy(NamedTuple):
    """The reader's copy of what the parse knows (see `Known`)."""

    sieve: dict[str, int]
    hosts: set[str]
    plain: set[str]


def _read_ahead(path: str, chunk: int, send: BinaryIO, updates: int, uncounted_run: int) \
        -> None:
    known = _Copy({}, set(), set())
    buffered = b""
    pending: tuple[str, list[str]] | None = None
    uncounted = 0
    distinct = -1
    with open(path, "rb") as handle:
        for text, lines in text_batches(handle, chunk):
            if not lines:
                continue
            buffered = _take_updates(updates, buffered, known)
            if pending is not None:
                _send(send, pending, known, lines[0], distinct)
            pending = text, lines
            # Where the parse will count a batch's distinct lines to choose how to read it
            # (`_reader._scan_batch`, mirrored here), they are counted here instead.
            if uncounted:
                uncounted -= 1
                distinct = -1
            else:
                distinct = len(set(lines))
                if distinct * 4 > len(lines) * 3:
                    uncounted = uncounted_run
    if pending is not None:
        _send(send, pending, known, "", distinct)


def _send(send: BinaryIO, batch: tuple[str, list[str]], known: _Copy, after: str,
          distinct: int) -> None:
    """Send one batch (its text and lines): its head (`_BATCH_HEAD`), its text, the indexes to
    visit, those lines, the line after and the indexes of lines that change nothing (see
    `Batch`). Learns the hosts of the lines it sends that note one (see `_host_noted`)."""
    whole, lines = batch
    if distinct >= 0 and distinct * 4 <= len(lines) * 3:  # the parse counts it (`sieved`)
        _write(send, len(lines), distinct, text=whole.encode("utf-8", "surrogatepass"),
               after=after.encode("utf-8", "surrogatepass"))
        return
    tails = list(map(itemgetter(2), map(str.partition, lines, repeat("NCCL INFO"))))
    codes = list(map(known.sieve.get, tails, repeat(_UNKNOWN)))
    visit = list(compress(range(len(lines)), codes))  # all but those only counted (0)
    visited = list(map(lines.__getitem__, visit))
    # A line the parse found changes nothing (`State.plain`: neither INFO nor WARN, so with
    # no text after `NCCL INFO`; only those are looked up).
    plain: list[int] = []
    if known.plain:
        others = list(compress(visit, map(not_, map(tails.__getitem__, visit))))
        plain = list(compress(others, map(known.plain.__contains__,
                                          map(lines.__getitem__, others))))
    # A NET connection line whose tally the reader knows is counted: the parse adds its tally.
    tallied = list(compress(visit, map(_TALLY_FROM.__le__, map(codes.__getitem__, visit))))
    hosts, sent_hosts = known.hosts, set[str]()
    noted = [index for index in compress(visit, map(_HOST_CODE_OF.__eq__,
                                                     map(codes.__getitem__, visit)))
             if _host_noted(lines[index], hosts, sent_hosts)]
    if plain or noted or tallied:
        visit = sorted(set(visit).difference(plain, noted, tallied))
        visited = list(map(lines.__getitem__, visit))
    # The line after a WARN line is sent too: the parse reads a WARN with the line after it.
    warns = [index + 1 for index in compress(visit, map(str.__contains__, visited,
                                                         repeat("NCCL WARN")))
             if index + 1 < len(lines)]
    if warns:  # (then read by the parse, so neither skipped nor tallied here)
        visit = sorted(set(visit).union(warns))
        plain = sorted(set(plain).difference(warns))
        tallied = sorted(set(tallied).difference(warns))
        visited = list(map(lines.__getitem__, visit))
    _write(send, len(lines), distinct, text=whole.encode("utf-8", "surrogatepass"),
           visit=array("I", visit).tobytes(),
           visited="\n".join(visited).encode("utf-8", "surrogatepass"),
           after=after.encode("utf-8", "surrogatepass"), plain=array("I", plain).tobytes(),
           tallied=array("I", tallied).tobytes(),
           tally_codes=array("I", map(codes.__getitem__, tallied)).tobytes())


def _write(send: BinaryIO, size: int, distinct: int = 0, *, text: bytes = b"",
           visit: bytes = b"", visited: bytes = b"", after: bytes = b"", plain: bytes = b"",
           tallied: bytes = b"", tally_codes: bytes = b"") -> None:
    """Write one message: its head (`_BATCH_HEAD`, the sizes taken from the parts), then the
    parts in that order (`Prefetcher.__iter__` reads them so; the tally codes are as long as
    the tallied indexes)."""
    send.write(_BATCH_HEAD.pack(size, len(text), len(visit), len(visited), len(after),
                                len(plain), len(tallied), distinct))
    for part in (text, visit, visited, after, plain, tallied, tally_codes):
        send.write(part)
    send.flush()


_UNKNOWN = 2
_TALLY_FROM = 3
"""`_reader._TALLY_BASE`: sieve codes from here name a NET connection's tally."""
_HOST_CODE_OF = 1
"""`_reader.HOST`: the sieve's code of a line that only notes its host."""


def _host_noted(line: str, hosts: set[str], sent: set[str]) -> bool:
    """Whether the parse has noted the host of `line` (which only notes its host) by the time
    it reaches it: it had when last told (`hosts`), or an earlier line of this batch sent
    notes it (`sent`, to which this adds the host: the parse reads the lines in order).

    Only the parse adds to `hosts`: a line sent may not note its host after all (an open
    torchrun report may take it as one of its own lines, `_reader._read_fresh` then reads the
    rest of that batch with its own sieve), so what a batch sent is forgotten after it."""
    host = plain_prefix(line[:line.find("NCCL INFO")]).host
    if not host or host in hosts or host in sent:
        return True
    sent.add(host)
    return False


def _widen(fd: int) -> None:
    """Give the pipe `_PIPE_SIZE` bytes where Linux allows (a batch then passes in one go)."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_SIZE)
    except OSError:
        pass  # the default 64 KiB: slower, as correct


def _take_updates(fd: int, buffered: bytes, known: _Copy) -> bytes:
    """Add to `known` what the parse sent (without waiting); the bytes of a frame not all
    read yet are returned to be completed by the next call."""
    while select.select([fd], [], [], 0)[0]:
        data = os.read(fd, 1 << 16)
        if not data:
            break
        buffered += data
    while len(buffered) >= _HEAD.size:
        (length,) = _HEAD.unpack_from(buffered)
        if len(buffered) < _HEAD.size + length:
            break
        kind, items = pickle.loads(buffered[_HEAD.size:_HEAD.size + length])
        if kind == _COUNTED:
            known.sieve.update(dict.fromkeys(items, 0))
        elif kind == _HOST_CODE:
            for item in items:
                known.sieve.setdefault(item, _HOST_CODE_OF)
        elif kind == _HOSTS:
            known.hosts.update(items)
        elif kind == _PLAIN:
            known.plain.update(items)
        else:
            known.sieve.update(items)
        buffered = buffered[_HEAD.size + length:]
    return buffered
