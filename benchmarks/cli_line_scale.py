"""Long command lines through a switch CLI session: linear work, absurd lengths refused at once.

Issue 9 item 4: a 100,000-character value through the switch CLI path did not finish in 120 s,
and 1k -> 16k characters took 1.3 s -> 5.1 s (superlinear: a backspace-cleanup regex and the
SONiC prompt regex were quadratic in the length of the echoed line, and a blocking `sendline`
could lose the end of a long line to a partial write). Measured here, on the demo fabric's
simulated SONiC leaf through the real pexpect session transport:

  1. one command of N characters (N up to the CLI line limit) through `CliTransport.run`, typed
     and read back whole; the figure is the cost of the last 2,000 characters per 1,000, the
     reference that of the first 1,500 per 1,000; ratio ~1 is linear (quadratic: ~2.4);
  2. the session's typing and reading alone beyond the limit (the line check bypassed, for
     measurement only): 100,000 characters against 10 x the time of 10,000;
  3. the reply cleaning (`_clean`: echo, carriage returns, backspaces) of one 8,000,000-byte
     echoed line against 4 x the time of 2,000,000 (both beyond CPU caches): linear whatever
     arrives;
  4. how long a 100,000-character value takes to be refused (render, check, no session opened).

Prints figures; never fails on timing.

    python benchmarks/cli_line_scale.py            # 3 repetitions, 500 .. 4,000 characters
    python benchmarks/cli_line_scale.py --smoke    # 1 repetition (CI)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from fabtui.paths import demo_topology
from fabtui.runbooks.expr import Evaluator, ExprError
from fabtui.runbooks.templates import render_cli_lines
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import ensure_state
from fabtui.sim.transports import SimCliTransport, SimSshTransport
from fabtui.transports import cli_line
from fabtui.transports.cli_session import CliSession, CliTarget, _clean
from fabtui.transports.output import OutputCollector
from fabtui.transports.ssh import SshTarget

LEAF = "leaf-g00-r0"
PREFIX = "show interfaces counters -i "


async def _typed(transport: SimCliTransport, target: CliTarget, sizes: list[int],
                 repeat: int) -> dict[int, float]:
    """Median seconds per command of each size (the session kept open, as fabtui keeps it)."""
    first = await transport.run(target, "show version", timeout=60)  # logs in
    assert first.output is not None
    medians = {}
    for size in sizes:
        times = []
        for _ in range(repeat):
            port = "E" * (size - len(PREFIX))
            start = time.perf_counter()
            result = await transport.run(target, PREFIX + port, timeout=120)
            times.append(time.perf_counter() - start)
            assert f"Invalid interface name {port}" in result.output, result.error_message
        medians[size] = statistics.median(times)
    await transport.close()
    return medians


def _beyond(state: Path, target: CliTarget, sizes: list[int]) -> dict[int, float]:
    """Seconds to type and read one line of each size in a session, the line check bypassed."""
    session = CliSession(target, SimSshTransport(state))
    session.connect()
    seconds = {}
    try:
        for size in sizes:
            port = "E" * (size - len(PREFIX))
            start = time.perf_counter()
            collector, _ = session._exchange(PREFIX + port, time.monotonic() + 300)
            seconds[size] = time.perf_counter() - start
            assert f"Invalid interface name {port}" in collector.text()
    finally:
        session.close()
    return seconds


def _cleaning(size: int) -> float:
    """Best of 3 seconds for `_clean` (echo, CR and backspace handling) of one long line."""
    collector = OutputCollector(cap=16 * size)
    collector.feed(PREFIX.encode() + b"E" * size + b"\r\nInvalid interface name\r\n")
    times = []
    for _ in range(3):
        start = time.perf_counter()
        _clean(collector, PREFIX + "E" * size)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="one repetition (CI)")
    args = parser.parse_args()
    repeat = 1 if args.smoke else 3
    sizes = [500, 1000, 2000, 4000]
    assert sizes[-1] <= cli_line.MAX_LINE

    with tempfile.TemporaryDirectory() as folder:
        state = Path(folder) / "state.json"
        ensure_state(state, demo_topology(), find_scenario("healthy"), [])
        target = CliTarget(ssh=SshTarget(name=LEAF, host=LEAF), flavor="sonic")
        medians = asyncio.run(_typed(SimCliTransport(state), target, sizes, repeat))
        beyond = _beyond(state, target, [10_000, 100_000])
    print(f"one command through the real pexpect session to the simulated SONiC leaf, median "
          f"of {repeat}:")
    for size, seconds in medians.items():
        print(f"  {size:>6,} characters  {seconds * 1000:8.1f} ms")
    figure = (medians[4000] - medians[2000]) / 2
    reference = (medians[2000] - medians[500]) / 1.5
    print(f"{'cost per 1,000 characters, 2,000 -> 4,000':<44} {figure * 1000:8.2f} ms   "
          f"reference (500 -> 2,000) {reference * 1000:.2f} ms   ratio "
          f"{figure / max(reference, 1e-9):.2f} (linear ~1; quadratic ~2.4)")
    print(f"{'session alone, 100,000 characters':<44} {beyond[100_000] * 1000:8.1f} ms   "
          f"reference (10,000 x 10) {beyond[10_000] * 10_000:.1f} ms   ratio "
          f"{beyond[100_000] / (beyond[10_000] * 10):.2f} (issue 9: > 120 s)")

    small, big = _cleaning(2_000_000), _cleaning(8_000_000)
    print(f"{'reply cleaning, 8,000,000-byte echoed line':<44} {big * 1000:8.1f} ms   reference "
          f"(2,000,000 bytes x 4) {small * 4000:.1f} ms   ratio {big / (small * 4):.2f} "
          "(issue 9: quadratic)")

    evaluator = Evaluator({"val": "E" * 100_000})
    start = time.perf_counter()
    try:
        render_cli_lines(PREFIX + "{{ val }}", evaluator)
        refused = "NOT REFUSED"
    except ExprError as exc:
        refused = str(exc)
    seconds = time.perf_counter() - start
    print(f"{'100,000-character value refused':<44} {seconds * 1000:8.2f} ms   reference "
          f"(issue 9: > 120 s) 120000 ms   ratio {seconds / 120:.6f}")
    print(f"  {refused[:110]}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
