"""The counted scan of NCCL logs (`scan_batches`) reads exactly what reading every line does.

`fabtui parse --as nccl-log` and the hang triage read big logs a batch at a time and count lines
they have read before instead of reading them again (fabtui/parsers/nccl_log/). Users rely on
getting the same JSON as a line-by-line read: these tests compare the two on the real samples
and on input built to break the counting (lines cut by chunk boundaries, CRLF, no final newline,
bytes that are not UTF-8, reports and NCCL errors open across batches, values overwritten).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabtui.model.parsed.nccl_log import NcclLog
from fabtui.parsers import nccl_log
from fabtui.parsers.nccl_log import _reader
from fabtui.parsers.streaming import FileLines
from fabtui.parsers.text import split_lines
from tests.support.fixture_inputs import FIXTURES

SAMPLES = sorted((FIXTURES / "nccl-log").glob("*.txt"))

# Lines whose second reading differs from the first, or that only agree when read in order.
HAZARDS = """\
h1:10:11 [0] NCCL INFO comm 0xaa rank 0 nRanks 4 nNodes 2 localRanks 2 localRank 0 MNNVL 0
h1:10:11 [0] NCCL INFO comm 0xaa rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0 MNNVL 0
h1:10:11 [0] NCCL INFO comm 0xaa rank 0 nRanks 4 nNodes 2 localRanks 2 localRank 0 MNNVL 0
h1:10:11 [0] NCCL INFO Init START comm 0xbb rank 1 nranks 4 cudaDev 1 busId 1b000
h3:30:31 [2] NCCL INFO comm 0xdd rank 2 nRanks 4 nNodes 1 localRanks 4 localRank 2
h3:30:31 [2] NCCL INFO Init COMPLETE comm 0xdd rank 2 nranks 4 commId 0xee - Init COMPLETE
h3:30:31 [2] NCCL INFO comm 0xdd rank 2 nRanks 4 nNodes 1 localRanks 4 localRank 2
h1:10:11 [0] NCCL INFO Init COMPLETE comm 0xbb rank 1 nranks 4 commId 0xcc - Init COMPLETE
h1:10:11 [0] NCCL INFO Init START comm 0xbb rank 1 nranks 4 cudaDev 1 busId 1b000
[rank0]:[E1003 18:37:01.83 ProcessGroupNCCL.cpp:1] - [0] Timeout at collective: ALLREDUCE, #3
[rank0]:[E1003 18:37:01.83 ProcessGroupNCCL.cpp:1] - [0] Timeout at collective: BROADCAST, #3
[rank0]:[E1003 18:37:01.83 ProcessGroupNCCL.cpp:1] - [0] Timeout at collective: ALLREDUCE, #3
h2:20:21 [3] net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<3> with status=12
vendor err 129 (Recv) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_3
h2:20:21 [3] NCCL INFO Channel 00/0 : 1[1] -> 8[0] [receive] via NET/IB/0/GDRDMA
h2:20:21 [3] NCCL INFO Channel 00/0 : 1[1] -> 8[0] [receive] via NET/IB/0/GDRDMA
RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1275, internal error, NCCL version 2.14.3
ncclInternalError: Internal check failed.
Last error:
h2:20:21 [3] NCCL INFO Channel 00/0 : 1[1] -> 8[0] [receive] via NET/IB/0/GDRDMA
"""


def _log_lines() -> list[str]:
    """Every sample, three times, the hazards between the rounds: the second and third rounds
    are all lines read before."""
    text = "".join(path.read_text(encoding="utf-8", errors="replace") + "\n"
                   for path in SAMPLES)
    return split_lines(HAZARDS + text + HAZARDS + text + text + HAZARDS)


def _batches(lines: list[str], size: int) -> Iterator[list[str]]:
    return (lines[start:start + size] for start in range(0, len(lines), size))


def _dump(result: NcclLog | None) -> object:
    return None if result is None else result.model_dump(mode="json")


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem[:40])
def test_each_real_sample_reads_the_same_counted_or_line_by_line(path: Path) -> None:
    lines = split_lines(path.read_text(encoding="utf-8", errors="replace"))
    expected = _dump(nccl_log.scan_each_line(lines))
    for size in (1, 5, 4096):
        assert _dump(nccl_log.scan_batches(_batches(lines, size))) == expected


@pytest.mark.parametrize("cap", [nccl_log.MAX_EVENTS, 300, 25])
@pytest.mark.parametrize("size", [1, 7, 333, 4096])
@pytest.mark.parametrize("uncounted", [0, _reader._UNCOUNTED_RUN])
def test_repeated_samples_and_hazards_read_the_same(monkeypatch: pytest.MonkeyPatch, cap: int,
                                                    size: int, uncounted: int) -> None:
    # Small caps put most of the log past the events cap (WARN and PyTorch lines then replay
    # too), and past the init_complete sample. With no run of uncounted batches after a batch
    # of distinct lines, every batch is counted (and its lines read before replayed).
    monkeypatch.setattr(_reader, "_UNCOUNTED_RUN", uncounted)
    monkeypatch.setattr(nccl_log, "MAX_EVENTS", cap)
    monkeypatch.setattr(nccl_log, "_INIT_EVENTS_MAX", min(cap, 256) // 5)
    lines = _log_lines()
    expected = nccl_log.scan_each_line(lines)
    assert expected is not None and expected.events
    counted = nccl_log.scan_batches(_batches(lines, size))
    assert _dump(counted) == _dump(expected)
    assert counted is not None and NcclLog.model_validate(_dump(counted)) == counted


def _variants() -> dict[str, bytes]:
    body = "\n".join(_log_lines()).encode()
    bad = body.replace(b"NCCL INFO Channel 01", b"NCCL INFO Channel \xff\xfe01", 40) \
        .replace(b"Watchdog caught", b"Watchdog\xe2\x82 caught", 3)
    return {"lf": body + b"\n", "crlf": body.replace(b"\n", b"\r\n") + b"\r\n",
            "no-final-newline": body.rstrip(b"\n"), "not-utf8": bad,
            "cr-and-bom": b"\xef\xbb\xbf" + body.replace(b"\n", b"\r")}


@pytest.mark.parametrize("variant", sorted(_variants()))
@pytest.mark.parametrize("chunk", [997, 65536])
def test_files_read_in_chunks_read_the_same(tmp_path: Path, variant: str, chunk: int) -> None:
    path = tmp_path / "log.txt"
    path.write_bytes(_variants()[variant])
    lines = FileLines(str(path), chunk)
    expected = _dump(nccl_log.scan_each_line(lines))
    assert expected is not None
    assert _dump(nccl_log.scan_batches(lines.batches())) == expected
    # `scan` (what the triage and nccl-tests call) and `fabtui parse` read through the same.
    assert _dump(nccl_log.scan(lines)) == expected
    assert _dump(nccl_log.parse_lines(lines).head) == expected


def test_a_broken_replay_is_read_again_line_by_line() -> None:
    # The second topology line overwrites what the first set: the third must set it back, as
    # reading it does, though it was read (and counted as replayable) before.
    lines = split_lines(HAZARDS * 3)
    result = nccl_log.scan_batches(_batches(lines, 4096))
    assert result is not None
    init = next(e for e in result.events if e.type == "init_complete" and e.host == "h1")
    assert (init.n_nodes, init.local_ranks) == (2, 2)
    assert _dump(result) == _dump(nccl_log.scan_each_line(lines))


def _as_processes(copies: int, *, ranks: bool = True) -> list[str]:
    """The real samples as `copies` processes of a big job printed them (the benchmark's own
    input, `benchmarks/parse_scale.py`): each its own host (one per 8 processes), pid, tid and
    clock, so most lines are distinct but their messages repeat; with `ranks`, each copy also
    other ranks of a 1,024-rank job (its own rank numbers, peers and comm pointers)."""
    spec = importlib.util.spec_from_file_location(
        "parse_scale", Path(__file__).resolve().parent.parent / "benchmarks" / "parse_scale.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    text = "".join(path.read_text(encoding="utf-8", errors="replace") + "\n"
                   for path in SAMPLES).encode()
    job = b"".join(bench.as_another_process(text, copy, ranks=ranks) for copy in range(copies))
    return split_lines(HAZARDS + job.decode() + HAZARDS)


@pytest.mark.parametrize("cap", [nccl_log.MAX_EVENTS, 300])
@pytest.mark.parametrize("size", [7, 333, 4096])
@pytest.mark.parametrize("uncounted", [0, _reader._UNCOUNTED_RUN])
def test_a_big_jobs_distinct_heads_read_the_same(monkeypatch: pytest.MonkeyPatch, cap: int,
                                                 size: int, uncounted: int) -> None:
    # Every process prints the same messages under its own head: the sieve passes the INFO
    # lines it knows by their message, per host where the host matters (NET/IB : Using, the
    # Bootstrap interface), and PyTorch lines without a head replay; past the cap a WARN line
    # is only counted. All of it must read as every line read in order does.
    monkeypatch.setattr(_reader, "_UNCOUNTED_RUN", uncounted)
    monkeypatch.setattr(nccl_log, "MAX_EVENTS", cap)
    monkeypatch.setattr(nccl_log, "_INIT_EVENTS_MAX", min(cap, 256) // 5)
    lines = _as_processes(20)
    expected = nccl_log.scan_each_line(lines)
    assert expected is not None and len(expected.hosts) >= 3 and expected.info_lines
    counted = nccl_log.scan_batches(_batches(lines, size))
    assert _dump(counted) == _dump(expected)


def test_the_sieve_passes_most_lines_of_a_big_jobs_log(monkeypatch: pytest.MonkeyPatch) -> None:
    # What makes a big job's log cheap to read: after the first processes, most INFO lines
    # are known by their message (the sieve) and are not read again one by one.
    # Only with heads changed: with each copy's own ranks and comm pointers (issue 42's input)
    # the sieve passes about half of them (8,747 of 19,604 read one by one), for the parser
    # work of issue 42 to take up.
    lines = _as_processes(20, ranks=False)
    read: list[str] = []
    read_line = _reader._read_line

    def counting(state: object, number: int, line: str, following: str) -> object:
        read.append(line)
        return read_line(state, number, line, following)  # type: ignore[arg-type]

    monkeypatch.setattr(_reader, "_read_line", counting)
    nccl_log.scan_batches(_batches(lines, 4096))
    info = sum(1 for line in lines if "NCCL INFO" in line)
    assert sum(1 for line in read if "NCCL INFO" in line) < info / 4


@pytest.mark.parametrize("size", [5, 7, 64])
def test_lines_only_counted_are_read_while_a_report_is_open(size: int) -> None:
    # A big job's batches are read without visiting the INFO lines the sieve knows as only
    # counted; but while a torchrun report is open every line is read (each may end it), and
    # such a line must then be counted once, not twice nor never, across batch boundaries.
    report = (FIXTURES / "nccl-log" / "minigpt4-issue237-torchrun-childfailederror-two-ranks.txt"
              ).read_text(encoding="utf-8").splitlines()
    processes = iter(range(10000))

    def info() -> str:  # another process's line of a message read before: only counted
        return f"h{next(processes)}:1:1 [0] NCCL INFO Using network IB"

    lines = [info() for _ in range(40)]
    for line in report:
        lines += [line, info(), info()]
    lines += [info() for _ in range(40)] + report[:5] + [info() for _ in range(40)]
    expected = nccl_log.scan_each_line(lines)
    assert expected is not None and expected.info_lines == sum("NCCL INFO" in x for x in lines)
    assert "child_failed" in [e.type for e in expected.events]  # the report was read
    assert _dump(nccl_log.scan_batches(_batches(lines, size))) == _dump(expected)
