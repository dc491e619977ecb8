"""A big NCCL log file read with a reader process (`_prefetch`) parses exactly as read alone.

`fabtui parse --as nccl-log` hands a big file's reading and sieving to a forked reader process
(issue 42: the parse then reads only the lines it must). Users rely on the same JSON either
way: these tests make every file "big", read it in small chunks (many batches, reports and
NCCL errors open across them, a WARN line last in a batch) and compare with every line read in
order, on the real samples, a big job's log built from them, and input built to break it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fabtui.cli.parse import _parse_streamed
from fabtui.errors import InputError
from fabtui.parsers import nccl_log
from fabtui.parsers.nccl_log import _prefetch, _reader
from fabtui.parsers.streaming import FileLines
from tests.support.fixture_inputs import FIXTURES
from tests.test_nccl_log_batches import SAMPLES, _as_processes, _dump, _log_lines, _variants


@pytest.fixture()
def prefetched(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every file is read by a reader process; the list gets one entry per reader started."""
    started: list[int] = []
    monkeypatch.setattr(_prefetch, "PREFETCH_MIN", 0)
    # pytest-xdist's worker runs a thread of its own; the reader only reads the file.
    monkeypatch.setattr(_prefetch, "_one_thread", lambda: True)
    start = _prefetch.Prefetcher.__init__

    def counting(self: _prefetch.Prefetcher, lines: FileLines, uncounted_run: int) -> None:
        start(self, lines, uncounted_run)
        started.append(self._pid)

    monkeypatch.setattr(_prefetch.Prefetcher, "__init__", counting)
    return started


def _parsed(path: Path, chunk: int) -> object:
    return _dump(nccl_log.parse_lines(FileLines(str(path), chunk)).assemble())


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem[:40])
def test_each_real_sample_reads_the_same_with_a_reader_process(
        prefetched: list[int], path: Path) -> None:
    expected = _dump(nccl_log.scan_each_line(FileLines(str(path))))
    for chunk in (256, 4096):
        assert _parsed(path, chunk) == expected
    assert len(prefetched) == 2


@pytest.mark.parametrize("variant", sorted(_variants()))
@pytest.mark.parametrize("chunk", [997, 65536])
def test_files_built_to_break_it_read_the_same(prefetched: list[int], tmp_path: Path,
                                               variant: str, chunk: int) -> None:
    path = tmp_path / "log.txt"
    path.write_bytes(_variants()[variant])
    expected = _dump(nccl_log.scan_each_line(FileLines(str(path), chunk)))
    assert expected is not None
    assert _parsed(path, chunk) == expected
    assert prefetched


@pytest.mark.parametrize("cap", [nccl_log.MAX_EVENTS, 300])
@pytest.mark.parametrize("chunk", [2000, 30000, 1 << 20])
@pytest.mark.parametrize("uncounted", [0, _reader._UNCOUNTED_RUN])
def test_a_big_jobs_log_reads_the_same(prefetched: list[int], monkeypatch: pytest.MonkeyPatch,
                                       tmp_path: Path, cap: int, chunk: int,
                                       uncounted: int) -> None:
    # Most lines are sieved by the reader (only counted, changing nothing, a host noted
    # already), after it was told so by the parse; the rest must read as in order.
    monkeypatch.setattr(_reader, "_UNCOUNTED_RUN", uncounted)
    monkeypatch.setattr(nccl_log, "MAX_EVENTS", cap)
    monkeypatch.setattr(nccl_log, "_INIT_EVENTS_MAX", min(cap, 256) // 5)
    path = tmp_path / "job.txt"
    path.write_text("\n".join(_as_processes(40) + _log_lines()), encoding="utf-8")
    expected = _dump(nccl_log.scan_each_line(FileLines(str(path))))
    assert expected is not None
    assert _parsed(path, chunk) == expected
    assert prefetched


@pytest.mark.parametrize("chunk", [400, 4096])
def test_a_line_after_a_warn_is_read_once_whatever_the_reader_knows_of_it(
        prefetched: list[int], tmp_path: Path, chunk: int) -> None:
    # The reader sends the line after each WARN line (a WARN may wrap onto it), even one it
    # would keep back: a known NET connection line (its tally), a line changing nothing, a
    # line only noting a known host. Each must count once, not twice nor never.
    channel = "NCCL INFO Channel 00/0 : 1[1] -> 8[0] [receive] via NET/IB/0/GDRDMA"
    lines = []
    for process in range(300):
        head = f"h{process % 7}:{100 + process}:{100 + process} [0]"
        lines += [f"{head} NCCL INFO NCCL version 2.18.1+cuda12.2", f"{head} {channel}",
                  "Traceback (most recent call last):",
                  f"{head} NCCL INFO cudaDriverVersion 12020"]
        if process % 3 == 0:
            warn = f"{head} misc/socket.cc:50 NCCL WARN socket closed {process}"
            lines += [warn, f"{head} {channel}", warn, "Traceback (most recent call last):",
                      warn, f"{head} NCCL INFO NCCL version 2.18.1+cuda12.2"]
    path = tmp_path / "warns.txt"
    path.write_text("\n".join(lines), encoding="utf-8")
    expected = _dump(nccl_log.scan_each_line(FileLines(str(path))))
    assert expected is not None
    assert _parsed(path, chunk) == expected
    assert prefetched


def test_the_reader_sends_fewer_lines_than_the_parse_alone_visits(
        prefetched: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # What makes the reader pay: told by the parse which messages are only counted, which
    # lines change nothing and which hosts are noted, it keeps most lines of a big job's log
    # from the parse's loop, fewer than the parse's own sieve lets through. (Measured over the
    # second half of the batches: the reader runs a few batches ahead of what it was told.)
    path = tmp_path / "job.txt"
    path.write_text("\n".join(_as_processes(40, ranks=False)), encoding="utf-8")
    reader: list[int] = []
    alone: list[int] = []
    scan, not_counted = _reader._scan_batch, _reader._not_counted

    def counting(state: object, batch: object, base: int, after: str) -> None:
        if isinstance(batch, _prefetch.Batch):
            reader.append(len(batch.visit))
        scan(state, batch, base, after)  # type: ignore[arg-type]

    def counting_alone(sieve: dict[str, int], lines: list[str]) -> list[int]:
        visit = not_counted(sieve, lines)
        alone.append(len(visit))
        return visit

    monkeypatch.setattr(_reader, "_UNCOUNTED_RUN", 1 << 30)  # every batch sieved, none counted
    monkeypatch.setattr(_reader, "_scan_batch", counting)
    monkeypatch.setattr(_reader, "_not_counted", counting_alone)
    with_reader = _parsed(path, 16384)
    monkeypatch.setattr(_prefetch, "PREFETCH_MIN", 1 << 40)
    assert _parsed(path, 16384) == with_reader
    assert len(reader) == len(alone) > 100
    half = len(reader) // 2
    assert sum(reader[half:]) < sum(alone[half:]) * 0.9, (sum(reader[half:]), sum(alone[half:]))


def test_the_reader_is_waited_for_even_when_the_parse_stops_early(prefetched: list[int],
                                                                  tmp_path: Path) -> None:
    path = tmp_path / "job.txt"
    path.write_text("\n".join(_as_processes(20)), encoding="utf-8")
    with _prefetch.Prefetcher(FileLines(str(path), 2000), 7) as reader:
        first = next(iter(reader))
        assert first.size and first.lines()[0]
    pid = prefetched[-1]
    with pytest.raises(ChildProcessError):  # reaped, not left a zombie
        os.waitpid(pid, os.WNOHANG)


def test_a_file_that_cannot_be_read_is_an_error_not_a_hang(prefetched: list[int],
                                                           tmp_path: Path) -> None:
    path = tmp_path / "gone.txt"
    path.write_text("x\n", encoding="utf-8")
    lines = FileLines(str(path))
    path.unlink()
    with pytest.raises(OSError, match=r"gone\.txt"):
        nccl_log.parse_lines(lines)


def test_small_files_threads_and_streams_are_read_in_the_parse_itself(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "log.txt"
    path.write_text("h:1:1 [0] NCCL INFO NCCL version 2.18.1\n", encoding="utf-8")
    monkeypatch.setattr(_prefetch, "_one_thread", lambda: True)
    assert not _prefetch.prefetch_usable(FileLines(str(path)))  # under PREFETCH_MIN
    monkeypatch.setattr(_prefetch, "PREFETCH_MIN", 0)
    assert _prefetch.prefetch_usable(FileLines(str(path)))
    assert not _prefetch.prefetch_usable(["h:1:1 [0] NCCL INFO NCCL version 2.18.1"])
    monkeypatch.setattr(_prefetch, "_one_thread", lambda: False)  # a fork copies no thread
    assert not _prefetch.prefetch_usable(FileLines(str(path)))


@pytest.mark.parametrize("chunk", [512, 4096])
def test_a_host_line_a_torchrun_report_takes_keeps_no_later_line_of_its_host_back(
        prefetched: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        chunk: int) -> None:
    # The reader keeps back a line that only notes its host when an earlier line of the batch
    # it sends notes it. An open torchrun report may take that earlier line as its own (here
    # one ending in FAILED): the host is then noted by the next line, as read in order, not
    # never (the reader was told the message notes a host: its pipe keeps it near the parse).
    monkeypatch.setattr(_prefetch, "_PIPE_SIZE", 4096)
    report = (FIXTURES / "nccl-log" / "minigpt4-issue237-torchrun-childfailederror-two-ranks.txt") \
        .read_text(encoding="utf-8").splitlines()
    version = "NCCL INFO NCCL version 2.18.1+cuda12.2 FAILED"
    filler = [f"f{i % 3}:{i}:{i} [0] NCCL INFO cudaDriverVersion 12020" for i in range(5000)]
    lines = [f"h0:9:9 [0] {version}", *filler, *report[:5], f"h1:1:1 [0] {version}",
             *report[5:], f"h1:2:2 [0] {version}", f"h2:3:3 [0] {version}", *filler[:50]]
    path = tmp_path / "report.txt"
    path.write_text("\n".join(lines), encoding="utf-8")
    expected = _dump(nccl_log.scan_each_line(FileLines(str(path))))
    assert isinstance(expected, dict) and {"h0", "h1", "h2"} <= set(expected["hosts"])
    assert _parsed(path, chunk) == expected
    assert prefetched


@pytest.mark.parametrize(("failure", "reason"), [
    (PermissionError(13, "Permission denied"), "Permission denied"),
    (SystemExit(3), "the NCCL log reader process ended without a word")])
def test_a_reader_that_fails_is_a_readable_error_naming_the_file(
        prefetched: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        failure: BaseException, reason: str) -> None:
    # `fabtui parse` says "FILE: cannot read: <why>" from the OSError's reason (`strerror`),
    # as for a file the parse reads itself: a reader that cannot read the file, or that ends
    # without a word (killed), must give one, not "cannot read: None".
    path = tmp_path / "job.txt"
    path.write_text("h:1:1 [0] NCCL INFO NCCL version 2.18.1\n" * 50, encoding="utf-8")

    def failing(*_: object) -> None:
        if isinstance(failure, SystemExit):
            os._exit(3)  # as a reader killed: nothing sent
        raise failure

    monkeypatch.setattr(_prefetch, "_read_ahead", failing)
    with pytest.raises(InputError) as raised:
        _parse_streamed(str(path), "nccl-log")
    assert str(raised.value) == f"{path}: cannot read: {reason}"
    assert prefetched


def test_a_fork_refused_reads_the_file_in_the_parse_itself(
        prefetched: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A login node's process limit (fork: EAGAIN) must not fail the parse, nor leak the pipes.
    path = tmp_path / "job.txt"
    path.write_text("\n".join(_as_processes(2)), encoding="utf-8")
    expected = _dump(nccl_log.scan_each_line(FileLines(str(path))))

    def refused() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refused)
    open_before = len(os.listdir("/proc/self/fd"))
    assert _parsed(path, 4096) == expected
    assert len(os.listdir("/proc/self/fd")) == open_before
    assert not prefetched
