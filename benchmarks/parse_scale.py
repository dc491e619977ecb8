"""`fabtui parse` on large inputs built from the real samples: time and peak memory.

Targets (issue "Speed", 2-core CI machine):
  - 100 MB of NCCL log text, `fabtui parse --as nccl-log`      <= 15x `grep -c NCCL`, RSS <= 300 MB
  - any parser: peak RSS <= 3x the input + 100 MB (here: `ethtool -S` and nccl-tests output)
The inputs are built from the shipped samples (tests/fixtures/<kind>/*.txt) as a big job would
print them: each repetition of an NCCL log is other ranks of a 1,024-rank job (their own
host, pid, tid, clock, rank numbers and peers, comm pointers; nranks 1,024; a new commId each
restart, as in a real combined log of a 1,000-rank job: `as_another_process`), each copy of
an `ethtool -S` capture names its counters apart (the table and the output grow). The three big
kinds run at three sizes and their growth is judged (below); the old byte-for-byte
repetition is printed beside the NCCL rows, for comparison.
Each figure is printed beside its reference from this run (`grep -c`, a bare Python read of
the file, the input size) and the ratio. The NCCL log's time ratio is judged from 100 MB, the
size its goal is set for: below, the fixed cost of a run (process start and imports, ~0.1 CPU
s, printed first) is most of a ratio against a `grep -c` of milliseconds, and the row says
it is not judged. What every size judges is memory and growth: the growth line of each big
kind judges the exponent of what each step adds (CPU seconds; the fixed cost cancels out),
which a quadratic term pushes above 1. From 32 MB the NCCL log parse forks a reader process
(fabtui/parsers/nccl_log/_prefetch.py) that reads and sieves ahead while it parses: its CPU
seconds and RSS are added to the parse's (the RSS summed over both, sampled every 20 ms).
Never fails on timing or memory.

fabtui runs with its bytecode compiled beforehand, as an installed package has it (pip
compiles on install): where PYTHONDONTWRITEBYTECODE is set, every run would otherwise compile
the ~3,600 source lines a parse imports again (~0.1 s on a 2-core machine, in each figure).
The bytecode goes to the scratch folder (PYTHONPYCACHEPREFIX), never into the checkout;
--no-bytecode measures the old way. On a shared machine, --repeat N gives medians.

    python benchmarks/parse_scale.py            # 100 MB NCCL log and ethtool, 50 MB nccl-tests
    python benchmarks/parse_scale.py --big      # the NCCL log up to 1 GB
    python benchmarks/parse_scale.py --smoke    # CI: the NCCL log at 1, 2, 4 prints of the job
                                                # (8, 15, 31 MB), 8 MB each other big kind,
                                                # 1 MB the others
    python benchmarks/parse_scale.py --kind nccl-log --repeat 7   # one row, medians of 7
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
MB = 1024 * 1024


# The head of an NCCL line (an optional srun task tag and [date time], then host:pid:tid)
# and a clock time: what another process, another node or a restart changes in a job's log.
_NCCL_HEAD = re.compile(rb"^((?:\d+: )?(?:\[[^\]\n]*\] )?)([A-Za-z][A-Za-z0-9._-]*):(\d+):(\d+)",
                        re.MULTILINE)
_CLOCK = re.compile(rb"\b(\d\d):(\d\d):(\d\d)\b")

WORLD = 1024
"""The ranks of the job the built log comes from: every rank number is taken modulo this."""
SPAN = 16
"""Ranks one copy of the samples may carry (the widest sample has ranks 0-15): copy `c` holds
ranks 16c..16c+15 of the job, so 64 copies print all 1,024 ranks once, and the next copy is
the job restarted (new commId, new commHash), as a real log of a restarting job has it."""

# Every shape of a rank number in the samples (tests/fixtures/nccl-log/*.txt), each a group
# `_renumbered` shifts: `rank N` (init, comm topology, `from rank N`), torch's `[rankN]:`,
# `Rank N` (`[Rank N]`, `[PG ... Rank N]`, Gloo's `Rank N is connected`), the peers of
# channel lines `a[d] -> b[e]` (the bracket is the GPU, kept), the old `Ring c : a -> b`,
# the tree lines `[c] x/y/z->r->p` (-1, no peer, kept) and the ring order `Channel c/n : a b`.
_RANK = re.compile(rb"(?<!-)\brank (\d+)|^(\d+): |\[rank(\d+)\]|\bRank (\d+)"
                   rb"|(?<![\d\[])(\d+)\[\d+\] -> (\d+)\[\d+\]|\bRing \d+ : (\d+) -> (\d+)",
                   re.MULTILINE)
_TREE = re.compile(rb"\[\d+\] (-?\d+)/(-?\d+)/(-?\d+)->(-?\d+)->(-?\d+)")
_RING_ORDER = re.compile(rb"(NCCL INFO Channel \d+/\d+ :)((?: +\d+)+)$", re.MULTILINE)
_NRANKS = re.compile(rb"\b(n[Rr]anks) \d+")
_NNODES = re.compile(rb"\bnNodes \d+ localRanks (\d+)")
_COMM_PTR = re.compile(rb"\bcomm 0x([0-9a-fA-F]+)")
_COMM_ID = re.compile(rb"\b(commId|commHash) (0x)?([0-9a-fA-F]+)")


def _hex(digits: bytes, mixed: int) -> bytes:
    """`digits` (hex) XOR `mixed`, printed at their own width (no pointer grows a digit)."""
    width = len(digits)
    return b"%0*x" % (width, (int(digits, 16) ^ mixed) & ((1 << 4 * width) - 1))


def as_another_process(sample: bytes, copy: int, *, ranks: bool = True) -> bytes:
    """`sample` as the `copy`-th process of a 1,024-rank job printed it.

    Each copy is other processes: its own host (one node per 8 copies), pid, tid and clock,
    its own ranks (each rank number, peers included, plus 16 per copy, modulo 1,024; the
    srun task tag with them), every communicator of `WORLD` ranks and `WORLD / localRanks`
    nodes, and its own comm pointers; the commId/commHash change when the job restarts (each
    64 copies, once all ranks are printed). The GPU numbers (`cudaDev`, `[d]`, `busId`) stay:
    rank r + 16c sits on the same GPU of its node as rank r, as in a real job. The wording
    of each line is unchanged. Without `ranks`, only the head and clock change (the input
    before issue 42's renumbering: every copy claims the sample's own ranks and communicators).
    """
    if not ranks:
        text = _NCCL_HEAD.sub(_head(copy), sample)
        return text if copy == 0 else _CLOCK.sub(_clock(copy), text)
    return _placed(_ranked(sample, copy), copy)


def _ranked(sample: bytes, copy: int) -> bytes:
    """`sample` with the ranks and communicator sizes of `copy` (see `as_another_process`):
    the same for every restart of the job (`copy` modulo `WORLD // SPAN`), so `build` renumbers
    each sample once per job, not once per copy (the rank pattern is most of the work)."""
    offset = copy % (WORLD // SPAN) * SPAN

    def rank(value: bytes) -> bytes:
        return b"%d" % ((int(value) + offset) % WORLD)

    def renumbered(match: re.Match[bytes]) -> bytes:
        text, start = match[0], match.start()
        pieces, at = [], 0
        for group in range(1, (match.re.groups or 0) + 1):
            if match[group] is None or match[group].startswith(b"-"):
                continue  # this alternative did not match, or -1 (no peer)
            pieces += [text[at:match.start(group) - start], rank(match[group])]
            at = match.end(group) - start
        return b"".join([*pieces, text[at:]])

    def order(match: re.Match[bytes]) -> bytes:
        return match[1] + re.sub(rb"\d+", lambda m: rank(m[0]), match[2])

    text = _RANK.sub(renumbered, sample)  # the srun task tag too (the head keeps it)
    text = _TREE.sub(renumbered, text)
    text = _RING_ORDER.sub(order, text)
    text = _NRANKS.sub(lambda m: b"%s %d" % (m[1], WORLD), text)
    return _NNODES.sub(lambda m: b"nNodes %d localRanks %s" % (
        max(WORLD // max(int(m[1]), 1), 1), m[1]), text)


def _placed(ranked: bytes, copy: int) -> bytes:
    """`ranked` (`_ranked`) with the head, clock, comm pointers and commId of `copy`."""
    restart = copy * SPAN // WORLD
    text = _NCCL_HEAD.sub(_head(copy), ranked)
    text = _COMM_PTR.sub(lambda m: b"comm 0x" + _hex(m[1], copy << 12), text)
    text = _COMM_ID.sub(lambda m: b"%s %s%s" % (m[1], m[2] or b"", _hex(
        m[3], restart * 0x9E3779B97F4A7C15)), text)
    return text if copy == 0 else _CLOCK.sub(_clock(copy), text)


def _head(copy: int) -> Callable[[re.Match[bytes]], bytes]:
    """The head (host:pid:tid) of `copy`: one node per 8 copies, pid and tid shifted."""
    def head(match: re.Match[bytes]) -> bytes:
        tag, host, pid, tid = match.groups()
        if copy == 0:
            return match[0]  # the first copy keeps the sample's own host, pid and tid
        return b"%s%s-n%d:%d:%d" % (tag, host, copy // 8, int(pid) + copy, int(tid) + copy)
    return head


def _clock(copy: int) -> Callable[[re.Match[bytes]], bytes]:
    """A clock time of `copy`: `copy` seconds later."""
    def clock(match: re.Match[bytes]) -> bytes:
        seconds = (int(match[1]) * 3600 + int(match[2]) * 60 + int(match[3]) + copy) % 86400
        return b"%02d:%02d:%02d" % (seconds // 3600, seconds // 60 % 60, seconds % 60)
    return clock


def _table_rows_renamed(sample: bytes, copy: int) -> bytes:
    """A table capture whose row names differ per copy: a growing table (more counters,
    more interfaces), so the parsed output grows with the input as on a big machine."""
    if copy == 0:
        return sample
    return re.sub(rb"^(\s*)([A-Za-z_][A-Za-z0-9_]*)(:)", lambda m: b"%s%s_c%d%s" % (
        m[1], m[2], copy, m[3]), sample, flags=re.MULTILINE)


def build(kind: str, size: int, path: Path, *, verbatim: bool = False,
          jobs: int = 0) -> list[int]:
    """`path` filled with the shipped samples of `kind` up to `size` bytes, or with `jobs`
    whole prints of the 1,024-rank job (nccl-log; `size` is then ignored). Returns the
    file's size at the end of each whole job print (nccl-log, not `verbatim`), for smaller
    inputs cut from this one.

    Each repetition is what other ranks of a 1,024-rank job would print
    (`as_another_process`, as in a real combined log of a 1,000-rank job); for
    `ethtool -S` every copy names its counters apart, so the table grows. `verbatim` repeats
    the samples byte for byte (the old input, where a parser only counts repeats).
    """
    samples = [p.read_bytes() for p in sorted((FIXTURES / kind).glob("*.txt"))
               if not p.with_suffix(".error").exists()]  # a sample of what the parser refuses
    if kind != "nccl-log":
        samples = samples[:1]  # a table format: one capture repeated stays one capture's shape
    ranked: dict[tuple[int, int], bytes] = {}  # each restart has the same ranks
    per_job = WORLD // SPAN
    written = 0
    copy = 0
    ends: list[int] = []
    with path.open("wb") as out:
        while (len(ends) < jobs) if jobs else (written < size):
            for index, sample in enumerate(samples):
                if not verbatim and kind == "nccl-log":
                    key = (index, copy % per_job)
                    if key not in ranked:
                        ranked[key] = _ranked(sample, copy)
                    sample = _placed(ranked[key], copy)
                elif not verbatim and kind == "ethtool-stats":
                    sample = _table_rows_renamed(sample, copy)
                out.write(sample if sample.endswith(b"\n") else sample + b"\n")
                written += len(sample) + 1
                if not jobs and written >= size:
                    break
            else:
                if kind == "nccl-log" and not verbatim and copy % per_job == per_job - 1:
                    ends.append(out.tell())
            copy += 1
    return ends


def measure(argv: list[str]) -> tuple[float, float, int]:
    """(seconds, peak RSS in MB, exit status) of running `argv` to its end (see `run`)."""
    seconds, rss, status, _, _ = run(argv)
    return seconds, rss, status


def run(argv: list[str]) -> tuple[float, float, int, bytes, float]:
    """(seconds, peak RSS in MB, exit status, output, CPU seconds) of running `argv` to its end.

    Output goes to a scratch file, not /dev/null: GNU grep stops at its first match when it
    sees its output is /dev/null, which made the reference read ~0 s. On a shared machine the
    CPU seconds are the steadier figure.
    """
    started = time.perf_counter()
    with tempfile.TemporaryFile() as sink:
        pid = os.fork()
        if pid == 0:  # the child's own peak RSS, not ours
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            os.execvp(argv[0], argv)
        tree = _TreeRss(pid)
        tree.start()
        _, status, usage = os.wait4(pid, 0)
        seconds = time.perf_counter() - started
        tree.done.set()
        tree.join()
        sink.seek(0)
        output = sink.read()
    # The CPU seconds of the process and of the processes it waited for (the NCCL log's reader
    # process); the peak RSS of all of them together where sampled, else the process's own.
    cpu = usage.ru_utime + usage.ru_stime
    rss = max(usage.ru_maxrss / 1024, tree.peak / MB)
    return seconds, rss, os.waitstatus_to_exitcode(status), output, cpu


class _TreeRss(threading.Thread):
    """Samples the summed RSS of a process and its descendants every 20 ms (`peak`, bytes):
    `ru_maxrss` gives only the largest single process (the NCCL log parse forks a reader)."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.02):
            self.peak = max(self.peak, sum(map(_rss, _tree(self.pid))))


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants (Linux /proc; just `pid` where it cannot tell)."""
    found, index = [pid], 0
    while index < len(found):
        current = found[index]
        index += 1
        try:
            text = Path(f"/proc/{current}/task/{current}/children").read_text()
        except OSError:
            continue
        found += [int(child) for child in text.split()]
    return found


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def _row(label: str, seconds: float, rss: float, ref_label: str, reference: float,
         rss_limit: float, time_limit: float | None, *, size: float = 0,
         goal_from: float = 0) -> None:
    """Print one measured row and its verdict. The time ratio is judged only where the
    input (`size` bytes) is at least `goal_from` bytes: below, the process's fixed cost
    (start, imports: ~0.1 CPU s, where `grep -c` takes milliseconds) is most of the ratio,
    and the row says it is not judged (the growth line judges the small sizes)."""
    ratio = seconds / max(reference, 1e-9)
    judged = time_limit is not None and size >= goal_from
    over = rss > rss_limit or (judged and ratio > (time_limit or 0))
    if time_limit is None:
        limit = ""
    elif judged:
        limit = f" (limit {time_limit:g}x)"
    else:
        limit = f" (goal {time_limit:g}x at {goal_from / MB:.0f} MB: not judged)"
    verdict = "OVER TARGET" if over else "ok" if judged or time_limit is None else "RSS ok"
    print(f"{label:<34} {seconds:7.2f} s  RSS {rss:7.0f} MB (limit {rss_limit:5.0f})   "
          f"{ref_label} {reference:6.2f} s  ratio {ratio:6.1f}x{limit}   {verdict}")


def _one_json_document(kind: str) -> bool:
    """Whether `kind`'s sample is one JSON document (repeated, it is no longer one)."""
    import json

    sample = next(p for p in sorted((FIXTURES / kind).glob("*.txt"))
                  if not p.with_suffix(".error").exists())
    try:
        json.loads(sample.read_bytes())
    except ValueError:
        return False
    return True


def _kinds() -> list[str]:
    # The catalog, not `discover()`: importing every parser here made this process ~95 MB,
    # and a forked child's peak RSS counts its parent's pages until it execs.
    from fabtui.parsers.signatures import SIGNATURES

    return [signature.kind for signature in SIGNATURES]


def _compiled(folder: Path) -> None:
    """Children of this process find the bytecode of the fabtui they import (`-m fabtui`
    from here) compiled, under `folder`."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(folder)
    subprocess.run([sys.executable, "-c", "import compileall, fabtui\n"
                    "compileall.compile_dir(fabtui.__path__[0], quiet=1)"], check=True)


def _median_run(argv: list[str], times: int) -> tuple[float, float, int, float]:
    """(median seconds, highest peak RSS in MB, last exit status, median CPU seconds)."""
    # Each output is dropped at once: a forked child's peak RSS counts the parent's pages.
    runs = [(seconds, rss, status, cpu) for seconds, rss, status, _, cpu in
            (run(argv) for _ in range(times))]
    return (statistics.median(r[0] for r in runs), max(r[1] for r in runs), runs[-1][2],
            statistics.median(r[3] for r in runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true",
                        help="small inputs, the NCCL log at 8-31 MB (CI)")
    parser.add_argument("--big", action="store_true",
                        help="the NCCL log at 1 GB (256 MB, 512 MB, 1 GB), as issue 42 asks")
    parser.add_argument("--kind", action="append", metavar="KIND",
                        help="only this kind's row (repeatable)")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="run each command N times, report medians (default 1)")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="let every run compile fabtui's sources (no bytecode cache)")
    args = parser.parse_args()
    sizes = {"nccl-log": 100 * MB, "ethtool-stats": 100 * MB, "nccl-tests": 50 * MB}
    if args.smoke:
        sizes = dict.fromkeys(sizes, 8 * MB)
    if args.big:
        sizes["nccl-log"] = 1024 * MB
    # Every other parser too, smaller: the memory rule holds for each, not only the big three.
    others = sorted(p.name for p in FIXTURES.iterdir()
                    if p.is_dir() and p.name not in sizes and any(p.glob("*.txt")))
    known = set(_kinds())
    sizes |= {kind: (1 if args.smoke else 20) * MB for kind in others if kind in known}
    if args.kind:
        unknown = sorted(set(args.kind) - set(sizes))
        if unknown:
            parser.error(f"no row for {', '.join(unknown)}; rows: {', '.join(sorted(sizes))}")
        sizes = {kind: size for kind, size in sizes.items() if kind in args.kind}
    fabtui = [sys.executable, "-m", "fabtui", "parse", "--json", "--as"]
    times = max(args.repeat, 1)
    with tempfile.TemporaryDirectory() as folder:
        if not args.no_bytecode:
            _compiled(Path(folder) / "pycache")
        print(f"{os.cpu_count()} CPUs; inputs built from tests/fixtures samples; bytecode "
              f"{'compiled by every run' if args.no_bytecode else 'compiled beforehand'}"
              f"{f'; medians of {times} runs' if times > 1 else ''}")
        startup = _startup_cpu(fabtui, Path(folder), times)
        print(f"{'a parse of an empty file':<34} {startup:7.2f} CPU s (subtracted in the fits)")
        for kind, size in sizes.items():
            _kind_rows(kind, size, Path(folder), fabtui, times, startup, smoke=args.smoke)


def _kind_rows(kind: str, size: int, folder: Path, fabtui: list[str], times: int,
               startup: float, *, smoke: bool) -> None:
    """The rows of `kind`: at `size`, or at three sizes and the judged growth line (`GROWN`).
    In smoke mode the NCCL log's sizes are 1, 2 and 4 whole prints of the job (~8, 16, 31 MB,
    medians of 5 runs at least), cut from one build."""
    path = folder / f"{kind}.txt"
    steps: list[int] = [size // 4, size // 2, size] if kind in GROWN else [size]
    whole = None
    if kind == "nccl-log" and smoke:
        whole = folder / "jobs.txt"
        ends = build(kind, 0, whole, jobs=SMOKE_JOBS[-1])
        steps = [ends[jobs - 1] for jobs in SMOKE_JOBS]
        times = max(times, 5)
    points: list[tuple[float, float]] = []
    for step in steps:
        if whole is None:
            build(kind, step, path)
        else:
            with whole.open("rb") as source:
                path.write_bytes(source.read(step))
        if kind != "nccl-log" and _one_json_document(kind):
            print(f"{kind:<34} not built: one JSON document does not repeat")
            path.unlink()
            return
        points.append((path.stat().st_size, _row_for(kind, path, fabtui, times)))
        path.unlink()
    if whole is not None:
        whole.unlink()
    if len(points) >= 3:
        _growth_row(kind, points, startup)
    if kind == "nccl-log" and len(steps) > 1:
        build(kind, size, path, verbatim=True)
        print("  the old input (samples repeated byte for byte), for comparison:")
        _row_for(kind, path, fabtui, times)
        path.unlink()


GOAL_FROM = 100 * MB
"""The input size the NCCL log's time goal (15x `grep -c`) is set for and judged from."""
SMOKE_JOBS = (1, 2, 4)
"""Whole prints of the 1,024-rank job the smoke's NCCL log sizes hold: each size the same mix
of first prints and restarts, and all under the 32 MB from which the parse forks a reader
(whose CPU seconds would add to the largest size only)."""
GROWTH_LIMITS = {"nccl-log": 1.0}
"""The judged exponent of what each step adds (CPU seconds), by kind; 1.5 (half way to
quadratic) where not named. The NCCL log's sizes are whole prints of the job, and the parse
reads a restart cheaper than the first print (the sieve knows its messages): a linear parse
adds less each step than the step before (0.2-0.9 measured at 8, 15 and 31 MB), so above 1,
where each MB costs more than the MB before, a term grows faster than the input (the O(n^2)
rank scan of issue 42 measured 0.9-1.4 here). The table kinds add about what the input adds
(~1, give or take noise)."""


def _growth_row(kind: str, points: list[tuple[float, float]], startup: float) -> None:
    """The judged growth line of `kind` from its (bytes, CPU seconds) at three sizes: the
    exponent of what each step adds over what the step before added (the fixed cost of a
    run cancels out, so a quadratic term shows at small sizes; judged), and the exponent
    fitted past the start-up (`startup` CPU seconds subtracted; for comparison)."""
    from growth import step_exponent  # here: tests import this file without benchmarks/

    sizes = [int(size) for size, _ in points]
    cpus = [cpu for _, cpu in points]
    steps = step_exponent(sizes, cpus)
    fitted = fitted_exponent([(size, max(cpu - startup, 1e-3)) for size, cpu in points])
    if steps != steps:  # NaN
        judged, verdict = "- (a step added nothing: noise)", "not judged"
    else:
        limit = GROWTH_LIMITS.get(kind, 1.5)
        judged = f"{steps:.2f} (limit {limit:g})"
        verdict = "ok" if steps <= limit else "GROWS FASTER THAN THE INPUT"
    print(f"{'  growth ' + kind:<34} CPU s {' / '.join(f'{c:.2f}' for c in cpus)} at "
          f"{' / '.join(f'{s / MB:.0f}' for s in sizes)} MB: of what each step adds "
          f"{judged}   {verdict}")
    print(f"{'':<34} (fitted past start-up {fitted:.2f}; 1 = linear, 2 = quadratic)")


GROWN = ("nccl-log", "ethtool-stats", "nccl-tests")
"""Kinds measured at three sizes, their growth judged (`_growth_row`)."""


def fitted_exponent(points: list[tuple[float, float]]) -> float:
    """The least-squares slope of log(seconds) against log(size): ~1 linear, ~2 quadratic."""
    import math

    xs = [math.log(size) for size, _ in points]
    ys = [math.log(seconds) for _, seconds in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / \
        max(sum((x - mx) ** 2 for x in xs), 1e-12)


def _startup_cpu(fabtui: list[str], folder: Path, times: int) -> float:
    """CPU seconds of `fabtui parse` on a one-line NCCL log: the process's fixed cost."""
    path = folder / "tiny.txt"
    path.write_text("host1:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n")
    cpu = _median_run([*fabtui, "nccl-log", str(path)], max(times, 3))[3]
    path.unlink()
    return cpu


def _row_for(kind: str, path: Path, fabtui: list[str], times: int) -> float:
    """Print `kind`'s row for the input at `path`, beside its reference; its CPU seconds."""
    real = path.stat().st_size / MB
    seconds, rss, status, cpu = _median_run([*fabtui, kind, str(path)], times)
    label = f"{kind} {real:.0f} MB" + ("" if status == 0 else f" (exit {status})")
    if kind == "nccl-log":
        distinct, masked = _distinct_share(path)
        grep, _, _, grep_cpu = _median_run(["grep", "-c", "NCCL", str(path)], times)
        _row(f"{label} ({distinct:.0%}/{masked:.0%} distinct)", seconds, rss, "grep -c", grep,
             300, 15, size=path.stat().st_size, goal_from=GOAL_FROM)
        # On a machine shared with other work the CPU seconds are the steadier figure.
        # (x%/y% distinct: the lines as they are / with host:pid:tid and clock masked.)
        # A big file is read by two processes at once (the parse and its reader: both CPUs
        # of a 2-core machine): the CPU seconds are theirs summed, the RSS too.
        print(f"{'  the same in CPU seconds':<34} {cpu:7.2f} s{'':<29}grep -c "
              f"{grep_cpu:6.2f} s  ratio {cpu / max(grep_cpu, 1e-9):6.1f}x"
              f"{'   (both processes)' if real >= 32 else ''}")
    else:
        read = _median_run([sys.executable, "-c", f"open({str(path)!r}, 'rb').read()"],
                           times)[0]
        _row(label, seconds, rss, "python read", read, 3 * real + 100, None)
    return cpu


def _distinct_share(path: Path) -> tuple[float, float]:
    """The shares of the lines of `path` that are distinct, as they are and with their head
    (host:pid:tid) and clock masked: what the parser sees past the head (a sample of the
    first 20 MB)."""
    with path.open("rb") as handle:
        lines = handle.read(20 * MB).splitlines()
    masked = {_CLOCK.sub(b"T", _NCCL_HEAD.sub(b"H", line)) for line in lines}
    return len(set(lines)) / max(len(lines), 1), len(masked) / max(len(lines), 1)

if __name__ == "__main__":
    main()
