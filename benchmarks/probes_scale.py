"""Probe machinery at scale: parsing a big NCCL log, polling many switch CLI sessions at once.

Targets (issue "Probes", on the 2-core CI machine):
  - parse a 100 MB NCCL debug log                               >= 50 MB/s
  - poll switch counters from 64 CLI sessions concurrently      <= 3 s wall

The log repeats the shipped real samples (tests/fixtures/nccl-log), as parse_scale.py builds
it, so the parser sees real wording and real event density.

The CLI sessions run against a real OpenSSH server on loopback whose login starts the test
suite's fake switch CLI (tests/support/fake_switch.py), so the figure includes ssh, the pty,
prompt detection and paging, not just Python. Prints figures; never fails on timing.

    python benchmarks/probes_scale.py            # full size
    python benchmarks/probes_scale.py --smoke    # 20 MB log, 16 sessions (CI)
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from fabtui.parsers.registry import get
from fabtui.transports.cli_session import CliTarget, CliTransport

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

def bench_log(megabytes: int) -> None:
    """Parse a log built from the shipped real NCCL samples (as `fabtui parse` streams a file),
    beside a bare Python read of the same file, the floor any parser pays."""
    from parse_scale import MB, build

    from fabtui.parsers.streaming import read_lines

    parser = get("nccl-log")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "nccl.log"
        build("nccl-log", megabytes * MB, path)
        size = path.stat().st_size / 1e6
        start = time.perf_counter()
        with path.open("rb") as handle:
            read = sum(len(line) for line in read_lines(handle))
        floor = time.perf_counter() - start
        start = time.perf_counter()
        with path.open("rb") as handle:
            result = parser.module.parse_lines(read_lines(handle)).head
        seconds = time.perf_counter() - start
    rate = size / seconds
    verdict = "ok" if rate >= 50 else "UNDER TARGET"
    print(f"parse {size:.0f} MB NCCL log (real samples repeated): {seconds:.2f} s = "
          f"{rate:.0f} MB/s (target >= 50 MB/s) {verdict}; python read of the lines "
          f"{floor:.2f} s ({read and size / floor:.0f} MB/s), ratio {seconds / floor:.1f}x; "
          f"{len(result.events)} events")


async def poll(transport: CliTransport, targets: list[CliTarget]) -> float:
    start = time.perf_counter()
    results = await asyncio.gather(*(transport.run(t, "show long 60", timeout=60)
                                     for t in targets))
    failed = [r.describe() for r in results if not r.ok]
    if failed:
        raise RuntimeError(f"{len(failed)} polls failed, e.g. {failed[0]}")
    return time.perf_counter() - start


def bench_sessions(count: int) -> None:
    from tests.support.sshd_server import SSHD, SshServer

    if not Path(SSHD).exists():
        print(f"{count} CLI sessions: skipped (no sshd; apt-get install openssh-server)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        base.chmod(0o700)
        fake = REPO / "tests" / "support" / "fake_switch.py"
        server = SshServer(base, force_command=f"{sys.executable} {fake}")
        try:
            targets = [CliTarget(ssh=server.target(name=f"leaf{i:02d}"), flavor="eos",
                                 cli_command="eos") for i in range(count)]

            async def run() -> tuple[float, float, float]:
                transport = CliTransport(server.options(), max_workers=count)
                try:
                    login = await poll(transport, targets)
                    second = await poll(transport, targets)
                    third = await poll(transport, targets)
                    return login, second, third
                finally:
                    await transport.close()

            login, second, third = asyncio.run(run())
        finally:
            server.stop()
    best = min(second, third)
    verdict = "ok" if best <= 3 else "OVER TARGET"
    print(f"{count} CLI sessions, first poll incl. ssh login: {login:.2f} s")
    print(f"{count} CLI sessions, poll of kept sessions: {second:.2f} s, {third:.2f} s "
          f"(target <= 3 s) {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="small sizes (CI)")
    args = parser.parse_args()
    bench_log(20 if args.smoke else 100)
    bench_sessions(16 if args.smoke else 64)


if __name__ == "__main__":
    main()
