"""`fabtui parse` on large inputs built from the real samples: time and peak memory.

Targets (issue "Speed", 2-core CI machine):
  - 100 MB of NCCL log text, `fabtui parse --as nccl-log`      <= 15x `grep -c NCCL`, RSS <= 300 MB
  - any parser: peak RSS <= 3x the input + 100 MB (here: `ethtool -S` and nccl-tests output)
The inputs repeat the shipped samples (tests/fixtures/<kind>/*.txt) up to the size, so the
parsers see real wording and the events they carry, not a synthetic log with a handful of
events. Each figure is printed beside its reference from this run (`grep -c`, a bare Python
read of the file, the input size) and the ratio. Never fails on timing or memory.

fabtui runs with its bytecode compiled beforehand, as an installed package has it (pip
compiles on install): where PYTHONDONTWRITEBYTECODE is set, every run would otherwise compile
the ~3,600 source lines a parse imports again (~0.1 s on a 2-core machine, in each figure).
The bytecode goes to the scratch folder (PYTHONPYCACHEPREFIX), never into the checkout;
--no-bytecode measures the old way. On a shared machine, --repeat N gives medians.

    python benchmarks/parse_scale.py            # 100 MB NCCL log and ethtool, 50 MB nccl-tests
    python benchmarks/parse_scale.py --smoke    # 5 MB each (CI)
    python benchmarks/parse_scale.py --kind nccl-log --repeat 7   # one row, medians of 7
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
MB = 1024 * 1024


def build(kind: str, size: int, path: Path) -> None:
    """`path` filled with the shipped samples of `kind`, repeated up to `size` bytes."""
    samples = [p.read_bytes() for p in sorted((FIXTURES / kind).glob("*.txt"))
               if not p.with_suffix(".error").exists()]  # a sample of what the parser refuses
    if kind != "nccl-log":
        samples = samples[:1]  # a table format: one capture repeated stays one capture's shape
    written = 0
    with path.open("wb") as out:
        while written < size:
            for sample in samples:
                out.write(sample if sample.endswith(b"\n") else sample + b"\n")
                written += len(sample) + 1
                if written >= size:
                    break


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
        _, status, usage = os.wait4(pid, 0)
        seconds = time.perf_counter() - started
        sink.seek(0)
        output = sink.read()
    cpu = usage.ru_utime + usage.ru_stime
    return seconds, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), output, cpu


def _row(label: str, seconds: float, rss: float, ref_label: str, reference: float,
         rss_limit: float, time_limit: float | None) -> None:
    ratio = seconds / max(reference, 1e-9)
    verdict = "ok" if rss <= rss_limit and (time_limit is None or ratio <= time_limit) \
        else "OVER TARGET"
    print(f"{label:<34} {seconds:7.2f} s  RSS {rss:7.0f} MB (limit {rss_limit:5.0f})   "
          f"{ref_label} {reference:6.2f} s  ratio {ratio:6.1f}x"
          f"{f' (limit {time_limit:g}x)' if time_limit else ''}   {verdict}")


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
    parser.add_argument("--smoke", action="store_true", help="5 MB inputs (CI)")
    parser.add_argument("--kind", action="append", metavar="KIND",
                        help="only this kind's row (repeatable)")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="run each command N times, report medians (default 1)")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="let every run compile fabtui's sources (no bytecode cache)")
    args = parser.parse_args()
    sizes = {"nccl-log": 100 * MB, "ethtool-stats": 100 * MB, "nccl-tests": 50 * MB}
    if args.smoke:
        sizes = dict.fromkeys(sizes, 5 * MB)
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
        for kind, size in sizes.items():
            path = Path(folder) / f"{kind}.txt"
            build(kind, size, path)
            if kind != "nccl-log" and _one_json_document(kind):
                print(f"{kind:<34} not built: one JSON document does not repeat")
                path.unlink()
                continue
            real = path.stat().st_size / MB
            seconds, rss, status, cpu = _median_run([*fabtui, kind, str(path)], times)
            label = f"{kind} {real:.0f} MB" + ("" if status == 0 else f" (exit {status})")
            if kind == "nccl-log":
                grep, _, _, grep_cpu = _median_run(["grep", "-c", "NCCL", str(path)], times)
                _row(label, seconds, rss, "grep -c", grep, 300, 15)
                # On a machine shared with other work the CPU seconds are the steadier figure.
                print(f"{'  the same in CPU seconds':<34} {cpu:7.2f} s{'':<29}grep -c "
                      f"{grep_cpu:6.2f} s  ratio {cpu / max(grep_cpu, 1e-9):6.1f}x")
            else:
                read = _median_run([sys.executable, "-c", f"open({str(path)!r}, 'rb').read()"],
                                   times)[0]
                _row(label, seconds, rss, "python read", read, 3 * real + 100, None)
            path.unlink()


if __name__ == "__main__":
    main()
