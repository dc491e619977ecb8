"""Probe machinery at scale: parsing a big NCCL log, polling many switch CLI sessions at once.

Targets (issue "Probes", on the 2-core CI machine):
  - parse a 100 MB NCCL debug log                               >= 50 MB/s
  - poll switch counters from 64 CLI sessions concurrently      <= 3 s wall

The CLI sessions run against a real OpenSSH server on loopback whose login starts the test
suite's fake switch CLI (tests/fake_switch.py), so the figure includes ssh, the pty, prompt
detection and paging, not just Python. Prints figures; never fails on timing.

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
sys.path.insert(0, str(REPO / "tests"))

def _rank_block(rank: int, nranks: int, step: int) -> list[str]:
    """What one rank of a large job prints at NCCL_DEBUG=INFO: version, NICs, its channel
    connections, init; then its share of training output (the shape of real job logs)."""
    node, dev = rank // 8, rank % 8
    p = f"node{node:04d}:{10000 + rank}:{20000 + rank} [{dev}] NCCL INFO"
    lines = [f"{p} NCCL version 2.27.5+cuda12.9",
             f"{p} NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [2]mlx5_2:1/RoCE "
             f"[3]mlx5_3:1/RoCE [4]mlx5_4:1/RoCE [5]mlx5_5:1/RoCE [6]mlx5_6:1/RoCE "
             f"[7]mlx5_7:1/RoCE [RO]; OOB eth0:10.0.{node % 250}.{dev + 1}<0>"]
    for channel in range(32):
        peer = (rank + 1) % nranks
        if peer // 8 == node:
            lines.append(f"{p} Channel {channel:02d}/0 : {rank}[{dev}] -> {peer}[{peer % 8}] "
                         "via P2P/IPC")
        else:
            lines.append(f"{p} Channel {channel:02d}/0 : {rank}[{dev}] -> {peer}[{peer % 8}] "
                         f"[send] via NET/IB/{dev}/GDRDMA")
    lines += [f"{p} Connected all rings", f"{p} Connected all trees",
              f"{p} comm 0x55d5c0 rank {rank} nranks {nranks} cudaDev {dev} nvmlDev {dev} "
              f"busId {0x18 + dev:x}000 commId 0x7f3a - Init COMPLETE"]
    for i in range(40):
        lines.append(f"[rank{rank}]: step {step + i} loss 2.{(rank * 7 + i) % 1000:03d} "
                     f"lr 3.0e-4 tokens/s {120000 + i}")
    return lines


EVENT = ("node{node:04d}:{pid}:{pid} [{dev}] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got "
         "completion from peer 10.0.{peer}.2<{port}> with error 12, opcode 0, len 0, vendor err "
         "129 (Recv)")


def synthetic_log(megabytes: int) -> str:
    """A 1,024-rank job's log, rank blocks repeated (restarts) until about `megabytes` MB, with
    an IB completion error now and then."""
    lines: list[str] = []
    size, block = 0, 0
    target = megabytes * 1_000_000
    while size < target:
        rank = block % 1024
        chunk = _rank_block(rank, 1024, block)
        if block % 97 == 96:
            chunk.append(EVENT.format(node=rank // 8, pid=10000 + rank, dev=rank % 8,
                                      peer=(rank + 8) // 8 % 250, port=40000 + block % 999))
        lines += chunk
        size += sum(len(line) + 1 for line in chunk)
        block += 1
    return "\n".join(lines) + "\n"


def bench_log(megabytes: int) -> None:
    text = synthetic_log(megabytes)
    parser = get("nccl-log")
    start = time.perf_counter()
    result = parser.parse(text)
    seconds = time.perf_counter() - start
    rate = len(text) / 1e6 / seconds
    verdict = "ok" if rate >= 50 else "UNDER TARGET"
    print(f"parse {len(text) / 1e6:.0f} MB NCCL log: {seconds:.2f} s = {rate:.0f} MB/s "
          f"(target >= 50 MB/s) {verdict}; {len(result.model_dump()['events'])} events")


async def poll(transport: CliTransport, targets: list[CliTarget]) -> float:
    start = time.perf_counter()
    results = await asyncio.gather(*(transport.run(t, "show long 60", timeout=60)
                                     for t in targets))
    failed = [r.describe() for r in results if not r.ok]
    if failed:
        raise RuntimeError(f"{len(failed)} polls failed, e.g. {failed[0]}")
    return time.perf_counter() - start


def bench_sessions(count: int) -> None:
    from sshd_server import SSHD, SshServer

    if not Path(SSHD).exists():
        print(f"{count} CLI sessions: skipped (no sshd; apt-get install openssh-server)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        base.chmod(0o700)
        fake = REPO / "tests" / "fake_switch.py"
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
