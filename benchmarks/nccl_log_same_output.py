"""Whether two checkouts of fabtui write the same NCCL log JSON, byte for byte (issue 42).

A speed change to the NCCL log parser must not change what it writes. This builds the input
`parse_scale.py` measures (a big job's combined log, each repetition of the samples another
process) at the given sizes, plus the same lines shuffled and the samples repeated verbatim,
runs `fabtui parse --json --as nccl-log` from each checkout on each, and on every sample in
tests/fixtures/nccl-log, and prints the inputs whose outputs differ. Exit status 1 if any does.

    python benchmarks/nccl_log_same_output.py /work/main .            # 20 MB and 100 MB
    python benchmarks/nccl_log_same_output.py /work/main . --size 1024
"""

from __future__ import annotations

import argparse
import filecmp
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from parse_scale import FIXTURES, MB, build  # the benchmark's own input


def _inputs(folder: Path, sizes: list[int]) -> list[Path]:
    paths = sorted((FIXTURES / "nccl-log").glob("*.txt"))
    for size in sizes:
        path = folder / f"job-{size}mb.txt"
        build("nccl-log", size * MB, path)
        paths.append(path)
    small = folder / "job-20mb.txt"
    if small.exists():  # the lines of 20 MB in another order, and the samples verbatim
        lines = small.read_bytes().split(b"\n")
        random.Random(7).shuffle(lines)
        (folder / "shuffled-20mb.txt").write_bytes(b"\n".join(lines))
        paths.append(folder / "shuffled-20mb.txt")
    verbatim = folder / "verbatim-20mb.txt"
    build("nccl-log", 20 * MB, verbatim, verbatim=True)
    return [*paths, verbatim]


def _parse(checkout: Path, path: Path, out: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(checkout.resolve()))
    with out.open("wb") as sink:
        status = subprocess.run([sys.executable, "-m", "fabtui", "parse", "--json", "--as",
                                 "nccl-log", str(path)], stdout=sink, stderr=subprocess.STDOUT,
                                env=env, check=False).returncode
        sink.write(f"\nexit {status}\n".encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="a checkout (the reference)")
    parser.add_argument("new", type=Path, help="another checkout")
    parser.add_argument("--size", type=int, action="append", metavar="MB",
                        help="built input sizes in MB (default 20 and 100; repeatable)")
    args = parser.parse_args()
    differ = 0
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        inputs = _inputs(folder, args.size or [20, 100])
        for path in inputs:
            old, new = folder / "old.json", folder / "new.json"
            _parse(args.old, path, old)
            _parse(args.new, path, new)
            same = filecmp.cmp(old, new, shallow=False)
            differ += not same
            if not same or path.parent == folder:
                print(f"{'same' if same else 'DIFFERENT'}  {path.name} "
                      f"({path.stat().st_size / MB:.0f} MB, {new.stat().st_size:,} bytes of JSON)")
    print(f"{len(inputs)} inputs, {differ} with different output")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
