"""The local transport: timeouts, output caps, streaming, cancellation, argv never via a shell."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

from fabtui.model.transport import ErrorKind
from fabtui.transports.local import LocalTransport
from fabtui.transports.output import OutputCollector
from tests.support.processes import descendants


def test_output_exit_status_and_times() -> None:
    result = asyncio.run(LocalTransport().run(["sh", "-c", "echo out; echo err >&2; exit 4"]))
    assert (result.output, result.stderr, result.exit_status) == ("out\n", "err\n", 4)
    assert result.error is ErrorKind.COMMAND and not result.ok
    assert result.ended_at >= result.started_at and result.transport == "local"


def test_arguments_are_never_interpreted_by_a_shell(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("still here")
    hostile = f"x; rm -f {victim}"
    result = asyncio.run(LocalTransport().run(["echo", hostile, "$(id)"]))
    assert result.output == f"{hostile} $(id)\n"
    assert victim.exists()


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    flag = tmp_path / "flag"
    start = time.monotonic()
    result = asyncio.run(LocalTransport().run(
        ["sh", "-c", f"echo begun; (sleep 3; touch {flag}) & sleep 30"], timeout=0.5))
    assert time.monotonic() - start < 2.5
    assert result.error is ErrorKind.TIMEOUT and result.output == "begun\n"
    time.sleep(3.2)
    assert not flag.exists(), "the background grandchild was killed with the group"


def test_missing_program_is_a_readable_error() -> None:
    result = asyncio.run(LocalTransport().run(["no-such-program-xyz"]))
    assert result.error is ErrorKind.COMMAND
    assert result.error_message == "cannot run no-such-program-xyz: No such file or directory"


def test_lines_stream_as_they_arrive() -> None:
    seen: list[tuple[float, str]] = []
    start = time.monotonic()

    def on_line(line: str) -> None:
        seen.append((time.monotonic() - start, line))

    asyncio.run(LocalTransport().run(["sh", "-c", "echo one; sleep 0.6; echo two"],
                                     on_line=on_line))
    assert [line for _, line in seen] == ["one", "two"]
    assert seen[0][0] < 0.5 <= seen[1][0], "the first line arrived before the command ended"


def test_cancellation_kills_the_child() -> None:
    async def scenario() -> float:
        task = asyncio.create_task(LocalTransport().run(["sleep", "30"]))
        await asyncio.sleep(0.3)
        start = time.monotonic()
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return time.monotonic() - start
        raise AssertionError("not cancelled")

    assert asyncio.run(scenario()) < 2


def test_output_cap_keeps_head_and_tail() -> None:
    result = asyncio.run(LocalTransport(cap=10_000).run(
        ["sh", "-c", "i=0; while [ $i -lt 5000 ]; do echo row $i; i=$((i+1)); done"]))
    assert result.truncated and result.output_bytes > 10_000
    assert result.output.startswith("row 0\n") and result.output.endswith("row 4999\n")
    assert "bytes of output omitted" in result.output
    assert len(result.output.encode()) < 10_200


def test_collector_hands_out_very_long_lines_in_pieces() -> None:
    lines: list[str] = []
    collector = OutputCollector(cap=1024, on_line=lines.append)
    collector.feed(b"x" * 5000)
    collector.feed(b"\nend\n")
    collector.finish()
    assert "".join(lines[:-1]) == "x" * 5000 and lines[-1] == "end"


def test_a_cancel_while_the_child_starts_kills_its_whole_group() -> None:
    """Cancelled at once, in the middle of setting the child up: the shell's own children
    (which hold the pipes) die with it and the cancel does not wait for them."""

    async def main() -> None:
        for ticks in range(6):  # cancel after 0..5 loop turns: inside and after the spawn
            before = descendants()
            task = asyncio.create_task(LocalTransport().run(
                ["sh", "-c", "sleep 30 & sleep 30 & wait"], timeout=60))
            for _ in range(ticks):
                await asyncio.sleep(0)
            task.cancel()
            started = time.monotonic()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            assert time.monotonic() - started < 10, "the cancel waited on the grandchildren"
            await asyncio.sleep(0.05)
            assert descendants(zombies=False) - before == set(), ticks

    asyncio.run(main())
