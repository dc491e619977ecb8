"""Reading an NCCL log's lines in batches, each line read before replayed from its tally.

Most lines of a big log repeat a line read before (every rank prints the same INFO lines, a
restarted job prints its log again), and reading such a line again only bumps counters. So each
batch is counted (`Counter`, in C), each distinct line is looked up once in the `Replay` tallies
of lines already read, and only the other lines are read in order, one by one (`_read_line`,
exactly as `read_lines` reads every line); the counted lines' tallies are then added times their
counts. While a torchrun report or an NCCL error's follow-up lines are open, every line goes
through `_read_line`, which may consume it. Each line is handed to its family: `_info`,
`_warn`, `_torch` (which hands torchrun's reports to `_torchrun`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import chain, compress, islice, pairwise, repeat
from itertools import count as numbers
from operator import itemgetter

from fabtui.parsers.nccl_log._info import channel_line, info_line
from fabtui.parsers.nccl_log._prefetch import Batch, Prefetcher
from fabtui.parsers.nccl_log._records import Event, moved
from fabtui.parsers.nccl_log._state import (
    INERT_MAX,
    INFO,
    PLAIN,
    Known,
    Replay,
    State,
    event_dropped,
    note_host,
    plain_prefix,
)
from fabtui.parsers.nccl_log._torch import OTHER_KEYS, nccl_followup, other_line
from fabtui.parsers.nccl_log._torchrun import child_block_line
from fabtui.parsers.nccl_log._warn import warn_line

_UNCOUNTED_RUN = 7
"""Batches read without counting after one that had few repeats (one in 8 is counted)."""
_REPLAY_MAX = 200000
_FRESH_REPLAY_MAX = 20000
"""Replays kept by `_read_fresh` at most: most lines it reads are never seen again (a clock in
each), and the few that repeat are met early."""
_SIEVE_MAX = 200000
"""Message texts the sieve knows at most (messages, not whole lines: a job's processes print
the same ones; see `_read_fresh`)."""
COUNTED = 0
"""The sieve's code of an INFO line that is only counted."""
HOST = 1
"""The sieve's code of an INFO line that is counted and notes its line's host."""
PER_HOST = 2
"""The sieve's code of an INFO line that is only counted once a line with the same message
was read on its host (`State.per_host`), and is read otherwise."""
_TALLY_BASE = 3
"""Codes from here name a NET connection's tally (`State.sieve_tallies`)."""
_REPLAY_LINE_MAX = 2000
"""Lines longer than this are never remembered: memory stays a few tens of MB at most."""


def read_batches(state: State, batches: Iterable[list[str]]) -> None:
    """Read the lines of `batches` (lists of consecutive lines) into `state`, numbered from 1."""
    base = 0
    pending: list[str] | None = None
    for batch in batches:
        if not batch:
            continue
        if pending is not None:
            _scan_batch(state, pending, base, batch[0])
            base += len(pending)
        pending = batch
    if pending is not None:
        _scan_batch(state, pending, base, "")


def read_prefetched(state: State, reader: Prefetcher) -> None:
    """Read the batches of a reader process (`_prefetch`) into `state`, numbered from 1, as
    `read_batches` reads the same lines; tell it, after each, what lets it send fewer lines."""
    known = state.learnt = Known([], [], [], [], [])
    state.plain = _Recorded(state.plain, known.plain)
    told_hosts = 0
    base = 0
    for batch in reader:
        if not batch.size:
            continue
        _scan_batch(state, batch, base, batch.after)
        base += batch.size
        if len(state.hosts) > told_hosts:  # the hosts noted since, from the end (no walk)
            known.hosts.extend(islice(reversed(state.hosts), len(state.hosts) - told_hosts))
            told_hosts = len(state.hosts)
        reader.learnt(known)


class _Recorded(set[str]):
    """A set that also appends each item added to a list (`State.plain` while a reader process
    is told the lines that change nothing)."""

    def __init__(self, items: set[str], added: list[str]) -> None:
        super().__init__(items)
        self.added = added

    def add(self, item: str) -> None:
        if item not in self:
            self.added.append(item)
        super().add(item)


def read_lines(state: State, lines: Iterable[str], number: int, after: str) -> None:
    """Read each of `lines` in order (numbered from `number` + 1; `after`: the line after the
    last), as `_read_line` does, without working out what reading each again would do."""
    info_lines = 0
    other_keys = OTHER_KEYS.search
    channel_cache, inert, plain = state.channel_cache, state.inert, state.plain
    # Each line with the one after it: a WARN may wrap onto the next.
    for line, following in pairwise(chain(lines, (after,))):
        number += 1
        if (state.block is not None or state.pending_nccl is not None) \
                and _offer(state, number, line):
            continue
        pos = line.find("NCCL INFO")
        if pos >= 0:
            info_lines += 1
            msg = line[pos + 10:].strip()
            if msg.startswith(("Channel ", "Ring ")):
                cached = channel_cache.get(msg)
                if cached is None or cached[1] is not None:
                    channel_line(state, msg, cached)
            else:
                notes_host = inert.get(msg)
                if notes_host is None:
                    info_line(state, number, line, pos, msg)
                elif notes_host:
                    note_host(state, line, pos)
        elif "NCCL WARN" in line:
            warn_line(state, number, line, following)
        elif line in plain:
            continue
        elif other_keys(line):
            other_line(state, number, line)
        elif len(plain) < INERT_MAX:
            plain.add(line)
    if info_lines:
        state.info_lines += info_lines
        state.evidence = True


def _scan_batch(state: State, batch: list[str] | Batch, base: int, after: str) -> None:
    """Read a batch of lines (numbered from `base` + 1; `after` is the line that follows the
    last): its lines, or a reader process's `Batch` of them."""
    if state.replay_broken:  # a value overwritten where no replay was looked at: forget them
        state.replay.clear()
        state.replay_broken = False
    if state.uncounted:
        state.uncounted -= 1
        _read_fresh(state, batch, base, after)
        return
    if not isinstance(batch, list) and batch.distinct * 4 > batch.size * 3:
        state.uncounted = _UNCOUNTED_RUN  # as below, counted by the reader process
        _read_fresh(state, batch, base, after)
        return
    lines = batch if isinstance(batch, list) else batch.lines()
    counts = Counter(lines)
    if len(counts) * 4 > len(lines) * 3:  # few lines repeat: counting would not pay
        state.uncounted = _UNCOUNTED_RUN  # nor, likely, for the next batches
        _read_fresh(state, batch, base, after)
        return
    replay = state.replay
    slow: set[str] = set()
    counted: list[tuple[str, Replay]] = []
    for line in counts:
        known = replay.get(line)
        if known is not None and known.event is not None:
            if len(state.events) < state.max_events:
                slow.add(line)  # its event is added again, in order
                continue
            known = replay[line] = known._replace(dropped=1, event=None, following=None)
        if known is None:
            known = _replay_before_reading(state, line)
            if known is None:
                slow.add(line)
                continue
            if len(replay) < _REPLAY_MAX and len(line) <= _REPLAY_LINE_MAX:
                replay[line] = known
        counted.append((line, known))
    if slow or state.block is not None or state.pending_nccl is not None:
        _read_in_order(state, lines, base, after, slow, counts)
    _add_replays(state, counts, counted)


def _read_fresh(state: State, batch: list[str] | Batch, base: int, after: str) -> None:
    """Read a batch of mostly distinct lines in order, as `read_lines` does (a big job's
    combined log: every process prints the same messages under its own `host:pid:tid` head,
    and its own clock).

    Two things read before are known without reading them again. An INFO line whose message
    is inert or a channel line already read: its effect (a count, a NET connection's tally,
    its host noted) depends only on its message, so the sieve maps the text after `NCCL INFO`
    to a code (`_learn`). A line that is neither INFO nor WARN and repeats exactly (PyTorch's
    messages carry no head): its `Replay`, as the counted path keeps it.

    The lines the sieve knows as only counted (most of a big job's INFO lines) are found for
    the whole batch at once, in C (`_not_counted`), and never visited one by one: only the
    others are. A sieve entry that says "only counted" never changes, so a line found so at
    the start of the batch is one still; a line whose message is learnt later in the batch is
    visited and looked up again. While a report is open every line is read (`_read_open`).
    """
    if not isinstance(batch, list) and not batch.sieved:
        batch = batch.lines()  # (the reader left it to be counted: not so, after all)
    sieve, replay, plain = state.sieve, state.replay, state.plain
    tallies, channel_use = state.sieve_tallies, state.channel_use
    host_read = state.host_tails
    lines: list[str] | None
    visit: Sequence[int]
    skipped: Sequence[int]
    if isinstance(batch, list):
        lines = batch
        visit = _not_counted(sieve, lines)
        visited = list(map(lines.__getitem__, visit))
        skipped = []
        size = len(lines)
    else:  # a reader process sieved it, and sent the lines to read with the text
        lines = None
        visit, visited, skipped, size = batch.visit, batch.visited, batch.plain, batch.size
    last = size - 1
    # Each line neither visited nor skipped (it changes nothing) is an INFO line, only counted.
    info = size - len(visit) - len(skipped)
    resume = 0  # lines before this index were read while a report was open
    opened: list[tuple[int, int]] = []  # the index ranges `_read_reported` read
    if state.block is not None or state.pending_nccl is not None:
        lines = _every_line(batch, lines)
        resume, taken = _read_reported(state, batch, lines, base, after, 0, visit, skipped,
                                       opened)
        info -= taken
    for index, line in zip(visit, visited, strict=True):
        if index < resume:
            continue
        # Only a line read may open a report (or close one): the test for one follows those.
        pos = line.find("NCCL INFO")
        if pos >= 0:
            tail = line[pos + 9:]
            code = sieve.get(tail)
            if code == COUNTED:
                info += 1
                continue
            if code is not None:
                if code >= _TALLY_BASE:
                    key, owner = tallies[code - _TALLY_BASE]
                    use = channel_use.get(key)
                    if use is None:
                        use = channel_use[key] = [0, set()]
                    use[0] += 1
                    if owner is not None:
                        use[1].add(owner)
                    info += 1
                    continue
                if code == HOST:
                    note_host(state, line, pos)
                    info += 1
                    continue
                host = plain_prefix(line[:pos]).host  # PER_HOST
                if host and (host, tail) in host_read:
                    info += 1
                    continue
                if host and len(host_read) < INERT_MAX:
                    host_read.add((host, tail))
            _read_line(state, base + index + 1, line, "")  # (only a WARN reads the next)
            if state.replay_broken:
                replay.clear()
                state.replay_broken = False
        elif "NCCL WARN" in line:
            if index == last:
                following = after
            elif lines is not None:
                following = lines[index + 1]
            else:  # the reader sent the line after each WARN line
                following = visited[bisect_left(visit, index + 1)]
            warn_line(state, base + index + 1, line, following)
            continue
        elif line in plain:
            continue
        else:
            known = replay.get(line)
            if known is not None and known.following is None:
                _add_replay(state, known, 1)
                if known.event is not None:
                    _add_copy(state, known.event, base + index + 1)
                continue
            known = _read_line(state, base + index + 1, line, "")  # (not a WARN line)
            if state.replay_broken:
                replay.clear()
                state.replay_broken = False
            elif known is not None and state.block is None and state.pending_nccl is None \
                    and len(replay) < _FRESH_REPLAY_MAX and len(line) <= _REPLAY_LINE_MAX:
                replay[line] = known
        if state.block is not None or state.pending_nccl is not None:
            lines = _every_line(batch, lines)
            resume, taken = _read_reported(state, batch, lines, base, after, index + 1, visit,
                                           skipped, opened)
            info -= taken
    if info:
        state.info_lines += info
        state.evidence = True
    if not isinstance(batch, list) and batch.tallied:
        _add_tallies(state, batch, opened)


def _add_tallies(state: State, batch: Batch, opened: list[tuple[int, int]]) -> None:
    """Add the NET connection tallies of the lines the reader process counted for a batch
    (`Batch.tallied`), but those `_read_reported` read itself (in `opened`)."""
    if opened:
        codes: Iterable[int] = (
            code for index, code in zip(batch.tallied, batch.tally_codes, strict=True)
            if not any(start <= index < stop for start, stop in opened))
    else:
        codes = batch.tally_codes
    channel_use, tallies = state.channel_use, state.sieve_tallies
    for code, count in Counter(codes).items():
        key, owner = tallies[code - _TALLY_BASE]
        use = channel_use.get(key)
        if use is None:
            use = channel_use[key] = [0, set()]
        use[0] += count
        if owner is not None:
            use[1].add(owner)


def _every_line(batch: list[str] | Batch, lines: list[str] | None) -> list[str]:
    """The lines of `batch`: `lines` if already split."""
    if lines is not None:
        return lines
    return batch if isinstance(batch, list) else batch.lines()


def _not_counted(sieve: dict[str, int], lines: list[str]) -> list[int]:
    """The indexes of the `lines` that the sieve does not know as only counted (`COUNTED`):
    the text after each line's first `NCCL INFO` (empty when it has none, which the sieve never
    holds) looked up in the sieve, all in C."""
    tails = map(itemgetter(2), map(str.partition, lines, repeat("NCCL INFO")))
    # `compress` keeps an index whose code is true: any but COUNTED (0), or unknown (True).
    return list(compress(range(len(lines)), map(sieve.get, tails, repeat(True))))


def _counted_between(visit: Sequence[int], skipped: Sequence[int], start: int, stop: int) \
        -> int:
    """How many lines of indexes `start` to `stop` (excluded) are in neither `visit` nor
    `skipped`."""
    return (stop - start) - (bisect_left(visit, stop) - bisect_left(visit, start)) \
        - (bisect_left(skipped, stop) - bisect_left(skipped, start))


def _read_reported(state: State, batch: list[str] | Batch, lines: list[str], base: int,
                   after: str, start: int, visit: Sequence[int], skipped: Sequence[int],
                   opened: list[tuple[int, int]]) -> tuple[int, int]:
    """Read the lines of `batch` from index `start` while a report is open (`_read_open`), and
    note the range read in `opened`; the index of the first line not read, and how many of
    the lines read are in neither `visit` nor `skipped` (they were read, not only counted).

    A torchrun report may take an INFO line as one of its own: in a reader process's batch
    that may be the line the reader counted on to note its host, keeping back the host's
    later lines (`_prefetch._host_noted`). After a report was offered one, the rest of the
    batch is read with the parse's own sieve, which keeps back no line for its host."""
    stop, offered = _read_open(state, lines, base, after, start)
    if offered and not isinstance(batch, list) and stop < len(lines):
        _read_fresh(state, lines[stop:], base + stop, after)
        stop = len(lines)
    opened.append((start, stop))
    return stop, _counted_between(visit, skipped, start, stop)


def _read_open(state: State, lines: list[str], base: int, after: str, start: int) \
        -> tuple[int, bool]:
    """Read `lines` one by one from index `start` while a torchrun report or an NCCL error's
    follow-up is open (each is offered to it first); the index of the first line not read,
    and whether a torchrun report was offered an INFO line (it may take it)."""
    last = len(lines) - 1
    offered = False
    for index in range(start, len(lines)):
        line = lines[index]
        if state.block is not None and not offered:
            offered = "NCCL INFO" in line
        _read_line(state, base + index + 1, line, lines[index + 1] if index < last else after)
        if state.replay_broken:
            state.replay.clear()
            state.replay_broken = False
        if state.block is None and state.pending_nccl is None:
            return index + 1, offered
    return len(lines), offered


def _learn(state: State, line: str, pos: int, msg: str) -> None:
    """Note in the sieve what reading again the INFO line `line` (its `NCCL INFO` at `pos`, `msg`
    its message), just read or looked at, would do, when its message tells it."""
    sieve = state.sieve
    if len(sieve) >= _SIEVE_MAX or len(line) > _REPLAY_LINE_MAX or len(line) <= pos + 9:
        return  # (an empty text would be every line without `NCCL INFO`: never learnt)
    if msg.startswith(("Channel ", "Ring ")):
        cached = state.channel_cache.get(msg)
        if cached is None:
            return  # the cache was full: every such line is read
        _, key, owner = cached
        if key is None:
            sieve[line[pos + 9:]] = COUNTED
            if state.learnt is not None:
                state.learnt.counted.append(line[pos + 9:])
            return
        code = state.sieve_codes.get((key, owner))
        if code is None:
            code = state.sieve_codes[(key, owner)] = _TALLY_BASE + len(state.sieve_tallies)
            state.sieve_tallies.append((key, owner))
        sieve[line[pos + 9:]] = code
        if state.learnt is not None:
            state.learnt.tallies.append((line[pos + 9:], code))
        return
    notes_host = state.inert.get(msg)
    if notes_host is not None:
        sieve[line[pos + 9:]] = HOST if notes_host else COUNTED
        if state.learnt is not None:
            (state.learnt.host_codes if notes_host else state.learnt.counted).append(
                line[pos + 9:])
    elif msg in state.per_host:
        sieve[line[pos + 9:]] = PER_HOST


def _read_in_order(state: State, lines: list[str], base: int, after: str, slow: set[str],
                   counts: Counter[str]) -> None:
    """Read the `slow` lines of a batch in order; lines met while a report or an NCCL error's
    follow-up is open are offered to it first. A counted line that is consumed so is taken off
    `counts`, and from a line whose reading would make a replay wrong on, the rest of the batch
    is read line by line (and taken off `counts`)."""
    # The indexes of the slow lines, found in C (a batch is ~10,000 lines).
    positions = list(compress(numbers(), map(slow.__contains__, lines))) if slow else []
    replay = state.replay
    at, count, end = 0, 0, len(lines)
    while at < end:
        if state.block is None and state.pending_nccl is None:
            while count < len(positions) and positions[count] < at:
                count += 1
            if count == len(positions):
                return
            at = positions[count]
        line = lines[at]
        number = base + at + 1
        following = lines[at + 1] if at + 1 < end else after
        if line not in slow:
            # A counted line while a report / an NCCL error is open: only that may read it.
            if _offer(state, number, line):
                counts[line] -= 1
            at += 1
            continue
        opened = state.block is not None or state.pending_nccl is not None
        known = None if opened else replay.get(line)
        if known is not None and known.following not in (None, following):
            known = None  # a WARN line read with another line after it
        if known is not None:  # read before: its tally (and event) now suffice
            _add_replay(state, known, 1)
            if known.event is not None:
                _add_copy(state, known.event, number)
        else:
            known = _read_line(state, number, line, following)
            if state.replay_broken:
                _read_rest(state, lines, base, after, at + 1, slow, counts)
                return
            if known is not None and not opened and state.block is None \
                    and state.pending_nccl is None and len(replay) < _REPLAY_MAX \
                    and len(line) <= _REPLAY_LINE_MAX:
                replay[line] = known
        at += 1


def _read_rest(state: State, lines: list[str], base: int, after: str, start: int,
               slow: set[str], counts: Counter[str]) -> None:
    """After a reading that replays could undo (a value overwritten): forget every replay and
    read the rest of the batch line by line."""
    state.replay.clear()
    state.replay_broken = False
    rest = lines[start:]
    counts.subtract(line for line in rest if line not in slow)
    for offset, line in enumerate(rest):
        index = start + offset
        following = lines[index + 1] if index + 1 < len(lines) else after
        _read_line(state, base + index + 1, line, following)
    state.replay.clear()
    state.replay_broken = False


def _add_replays(state: State, counts: Counter[str], counted: list[tuple[str, Replay]]) \
        -> None:
    """Add the tallies of the `counted` lines of a batch, each times its count."""
    info = 0
    for line, known in counted:
        count = counts[line]
        if count <= 0:
            continue
        if known is INFO:
            info += count
        elif known is not PLAIN:
            _add_replay(state, known, count)
    if info:
        state.info_lines += info
        state.evidence = True


def _add_replay(state: State, known: Replay, count: int) -> None:
    """What reading a line `count` more times does, as its `Replay` says."""
    if known.info:
        state.info_lines += count
        state.evidence = True
    if known.warn:
        state.warn_lines += count
    if known.dropped:
        state.dropped += count * known.dropped
        state.evidence = True
    if known.init:
        state.init_events += count
    if known.gdr:
        state.gdr_enabled += count
    if known.call is not None:
        state.calls[known.call] = state.calls.get(known.call, 0) + count
    if known.channel is not None:
        use = state.channel_use.get(known.channel)
        if use is None:
            use = state.channel_use[known.channel] = [0, set()]
        use[0] += count
        if known.owner is not None:
            use[1].add(known.owner)


def _add_copy(state: State, event: Event, number: int) -> None:
    """Add again the event a line read before added, now read at line `number`."""
    if not event_dropped(state):
        state.evidence = True
        state.events.append(moved(event, number))


def _replay_before_reading(state: State, line: str) -> Replay | None:
    """The tally of reading `line` (not read before) now, when the caches on messages tell it:
    an INFO message remembered as inert or a channel line already read, or a line that is
    neither INFO, WARN nor a candidate for anything else; None when it must be read."""
    pos = line.find("NCCL INFO")
    if pos >= 0:
        msg = line[pos + 10:].strip()
        if msg.startswith(("Channel ", "Ring ")):
            cached = state.channel_cache.get(msg)
            if cached is None:
                return None
            _learn(state, line, pos, msg)
            name, key, owner = cached
            return INFO if name is None or key is None else Replay(info=1, channel=key,
                                                                   owner=owner)
        notes_host = state.inert.get(msg)
        if notes_host is None:
            return None
        _learn(state, line, pos, msg)
        if notes_host:
            host = plain_prefix(line[:pos]).host
            if host and host not in state.hosts:
                return None
        return INFO
    if "NCCL WARN" in line:
        return None
    if line in state.plain or not OTHER_KEYS.search(line):
        return PLAIN
    return None


def _offer(state: State, number: int, line: str) -> bool:
    """An open torchrun report or NCCL error reads `line` first; True if it consumed it."""
    if state.block is not None and child_block_line(state, state.block, number, line):
        return True
    return state.pending_nccl is not None and nccl_followup(state, number, line)


def _read_line(state: State, number: int, line: str, following: str) -> Replay | None:
    """Read one line (`following`: the next, "" after the last); returns what reading the same
    line again would do (`Replay`), or None when it must be read again."""
    if (state.block is not None or state.pending_nccl is not None) \
            and _offer(state, number, line):
        return None
    pos = line.find("NCCL INFO")
    if pos >= 0:
        state.info_lines += 1
        state.evidence = True
        msg = line[pos + 10:].strip()
        if msg.startswith(("Channel ", "Ring ")):
            cached = state.channel_cache.get(msg)
            # Only a NET connection (a tally key) counts each time; a P2P/SHM line
            # noted its transport when first read.
            if cached is None or cached[1] is not None:
                channel_line(state, msg, cached)
            return _replay_before_reading(state, line)
        notes_host = state.inert.get(msg)
        if notes_host is None:
            known = info_line(state, number, line, pos, msg)
            _learn(state, line, pos, msg)
            return known
        _learn(state, line, pos, msg)
        if notes_host:
            note_host(state, line, pos)
        return INFO
    capped = len(state.events) >= state.max_events
    dropped = state.dropped
    if "NCCL WARN" in line:
        event = warn_line(state, number, line, following)
        if event is not None:
            return Replay(warn=1, event=event, following=following)
        warn = 1
    elif line in state.plain:
        return PLAIN
    elif OTHER_KEYS.search(line):
        event = other_line(state, number, line)
        if event is not None:
            return Replay(event=event)
        warn = 0
    else:
        if len(state.plain) < INERT_MAX:
            state.plain.add(line)
        return PLAIN
    # Past the events cap, reading a WARN or PyTorch line again only counts it (and the event
    # it would have been, if any); see `State.replay_broken` for the values it may overwrite.
    if capped and state.pending_terminate is None:
        return Replay(warn=warn, dropped=state.dropped - dropped)
    return None
