"""`fabtui triage nccl` on a big hung job: 1,024 ranks x 1 MB of logs each, time and peak memory.

Target (issue 13, 2-core machine): 1 GB triaged in <= 15 s with peak RSS <= 500 MB.
Each rank's log repeats the real NCCL / PyTorch log samples (tests/fixtures/nccl-log/*.txt)
with the rank ids of their prefixes and messages set to that rank's, then ends the way a hung
job does: rank 517 (in a smaller job, one in the middle) never arrives at sequence number 90001
(its dump-signal line says so) while every other rank's watchdog times out there.
Printed beside it, as the floor: `grep -c` of the same key patterns over the same files.
The triage must name that rank, else the row says WRONG ANSWER.
The CPU seconds are printed too: on a machine shared with other work they are the steadier
figure; with two workers the wall time on an idle 2-core machine is about half of them.
Never fails on timing or memory.

    python benchmarks/triage_scale.py            # 256, 512, 1,024 ranks x 1 MB, RSS per rank
    python benchmarks/triage_scale.py --smoke    # 256, 512, 1,024 ranks x 16 KB (CI)

The growth line gives the exponent of the wall time and of the CPU seconds (steadier on a shared
machine) from the smallest job to the largest, and of the CPU seconds each doubling adds (the
process's fixed costs cancel out: what the smoke's small jobs need): about 1 when the triage is
linear in the logs, 2 for a quadratic term. The smoke's jobs are many ranks with small logs, so
that a cost growing with ranks times lines shows in it (the scan of every event for each watchdog
line did: CPU exponent 1.6 at 256-1,024 ranks x 1 MB).
    python benchmarks/triage_scale.py --verbatim # the old input: repetitions byte for byte
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import sys
import tempfile
from pathlib import Path

from parse_scale import _CLOCK, as_another_process, run  # the same measured child process

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "nccl-log"
MB = 1024 * 1024
CULPRIT = 517
SEQ = 90001


def _sample_lines() -> list[str]:
    lines: list[str] = []
    for path in sorted(FIXTURES.glob("*.txt")):
        lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
    return lines


_RANK_TAG = re.compile(r"\[rank\d+\]")
_RANK_MSG = re.compile(r"\[(PG [^\]]*?)?Rank \d+\]")
_INIT = re.compile(r"rank \d+ nranks \d+", re.IGNORECASE)


def culprit_of(ranks: int) -> int:
    """The rank that never arrives: 517, or one in the middle of a smaller job."""
    return CULPRIT if ranks > CULPRIT else ranks // 2 + 5


def _later(match: re.Match[bytes], seconds: int) -> bytes:
    total = (int(match[1]) * 3600 + int(match[2]) * 60 + int(match[3]) + seconds) % 86400
    return b"%02d:%02d:%02d" % (total // 3600, total // 60 % 60, total % 60)


def rank_text(lines: list[str], rank: int, ranks: int, size: int, *, distinct: bool = True) \
        -> str:
    """One rank's log: the samples with this rank's ids, repeated to `size`, then the hang.
    `distinct` (the default) gives each repetition its own clock and each rank its own heads,
    as a real job prints them; without it the repetitions are byte for byte (the old input)."""
    own = "\n".join(_INIT.sub(f"rank {rank} nranks {ranks}",
                              _RANK_MSG.sub(lambda m: f"[{m.group(1) or ''}Rank {rank}]",
                                            _RANK_TAG.sub(f"[rank{rank}]", line)))
                    for line in lines) + "\n"
    if distinct:
        # Another process for each rank (its host, pid, tid), and the clock moving on in each
        # repetition: a real rank's log repeats its wording, never its heads and times.
        # (its rank numbers kept: `rank_text` has set them to this rank's already)
        mine = as_another_process(own.encode(), rank, ranks=False).decode()
        parts, length, copy = [], 0, 0
        while length < size:
            part = _CLOCK.sub(functools.partial(_later, seconds=copy),
                              mine.encode()).decode() if copy else mine
            parts.append(part)
            length += len(part)
            copy += 1
        body = "".join(parts)[:size]
        body = body[:body.rfind("\n") + 1] or body
    else:
        body = own * max(1, size // len(own))
        body += own[:max(0, size - len(body))]
    if rank == culprit_of(ranks):
        tail = (f"[rank{rank}]:[E1003 18:37:02.833575187 ProcessGroupNCCL.cpp:1394] [PG 0 "
                f"(default_pg) Rank {rank}] Received a dump signal due to a collective timeout "
                f"from rank 0 and we will try our best to dump the debug info. Last enqueued "
                f"NCCL work: {SEQ - 1}, last completed NCCL work: {SEQ - 1}.\n")
    else:
        tail = (f"[rank{rank}]:[E1003 18:37:01.832146912 ProcessGroupNCCL.cpp:607] [Rank {rank}] "
                f"Watchdog caught collective operation timeout: WorkNCCL(SeqNum={SEQ}, "
                f"OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800017 "
                f"milliseconds before timing out.\n"
                f"[rank{rank}]:[E1003 18:37:01.833575187 ProcessGroupNCCL.cpp:1664] [PG 0 "
                f"(default_pg) Rank {rank}] Exception (either an error or timeout) detected by "
                f"watchdog at work: {SEQ}, last enqueued NCCL work: {SEQ}, last completed NCCL "
                f"work: {SEQ - 1}.\n")
    return body + tail



def measure_job(lines: list[str], ranks: int, size: int, distinct: bool) \
        -> tuple[float, float, float]:
    """Build the job's logs, print grep's and the triage's row; (seconds, peak RSS in MB, CPU
    seconds)."""
    with tempfile.TemporaryDirectory() as folder:
        logs = Path(folder) / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        for rank in range(ranks):
            (logs / f"rank{rank}.log").write_text(rank_text(lines, rank, ranks, size,
                                                            distinct=distinct))
        total = sum(p.stat().st_size for p in logs.iterdir()) / MB
        from fabtui.triage.ingest import KEY_PATTERNS

        grep = ["grep", "-r", "-c", "-F", *[a for key in KEY_PATTERNS for a in ("-e", key)],
                str(logs)]
        grep_s, _, _, grep_out, _ = run(grep)
        hits = sum(int(line.rsplit(b":", 1)[1]) for line in grep_out.splitlines())
        argv = [sys.executable, "-m", "fabtui", "triage", "nccl", "--json", str(logs)]
        seconds, rss, status, output, cpu = run(argv)
    try:
        report = json.loads(output)
        named = [s["rank"] for s in report["suspects"]]
    except (ValueError, KeyError):
        named = []
    right = named[:1] == [culprit_of(ranks)]
    # The target is for 1 MB a rank: a smoke's small logs are mostly the process's fixed costs.
    target = "" if size < MB else \
        "ok" if seconds <= 15 * ranks / 1024 * size / MB and rss <= 500 else "OVER TARGET"
    print(f"  grep -c of the {len(KEY_PATTERNS)} key patterns  {grep_s:7.2f} s   {hits} "
          "matching lines")
    print(f"triage {ranks:5d} ranks, {total:4.0f} MB (exit {status})  {seconds:7.2f} s   "
          f"CPU {cpu:6.2f} s   RSS {rss:6.0f} MB (limit 500)   "
          f"{total / max(seconds, 1e-9):4.0f} MB/s   ratio to grep "
          f"{seconds / max(grep_s, 1e-9):5.1f}x   {target}"
          f"{'' if right else f'   WRONG ANSWER: suspects {named[:5]}'}")
    return seconds, rss, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="256-1,024 ranks x 16 KB (CI)")
    parser.add_argument("--ranks", type=int, default=1024, help="the largest job")
    parser.add_argument("--size", type=int, default=MB, help="bytes of log per rank")
    parser.add_argument("--verbatim", action="store_true",
                        help="repeat each rank's samples byte for byte (the old input)")
    args = parser.parse_args()
    ranks, size = (1024, 16 * 1024) if args.smoke else (args.ranks, args.size)
    lines = _sample_lines()
    print(f"{os.cpu_count()} CPUs; up to {ranks} ranks x {size // 1024} KB built from "
          f"{len(lines)} lines of tests/fixtures/nccl-log samples, "
          f"{'repeated verbatim' if args.verbatim else 'each rank its own heads and clock'}")
    sizes = [ranks // 4, ranks // 2, ranks]
    figures = [measure_job(lines, count, size, not args.verbatim) for count in sizes]
    (small_s, small_rss, small_cpu), (_, _, middle_cpu), (big_s, big_rss, big_cpu) = figures
    per_rank = (big_rss - small_rss) / (sizes[2] - sizes[0])
    import math

    def exponent(small: float, big: float) -> float:
        return math.log(max(big, 1e-9) / max(small, 1e-9)) / math.log(sizes[2] / sizes[0])

    print(f"  growth: {per_rank:.3f} MB of RSS per added rank "
          f"({per_rank * 1024:.0f} MB per 1,024 ranks); exponent of the time "
          f"{exponent(small_s, big_s):.2f}, of the CPU seconds {exponent(small_cpu, big_cpu):.2f}, "
          f"of the CPU seconds a doubling adds "
          f"{2 * exponent(middle_cpu - small_cpu, big_cpu - middle_cpu):.2f} (1 = linear)")


if __name__ == "__main__":
    main()
