"""Switch CLI sessions answered in this process give what the client-and-server path gives.

`fabtui runbook test` answers simulated switch sessions in its own process
(`InProcessSimCliTransport`: the real pexpect session code over a socket pair, no device client,
no sim server). What it judges must be what an engineer's `fabtui probe run` on the demo fabric
gets through `SimCliTransport`: the same replies, errors and byte counts (so the same login,
paging off and pager handling), at the same simulated clock, with the same latency, timeout,
cancellation and port shuts.
"""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from fabtui.model.transport import ErrorKind, TransportResult
from fabtui.sim import node_commands, switch_cli, switch_session
from fabtui.sim.inprocess import InProcessSimSshTransport
from fabtui.sim.inprocess_cli import InProcessSimCliTransport
from fabtui.sim.latency import LATENCY_VAR
from fabtui.sim.state import read_state
from fabtui.sim.transports import SimCliTransport
from fabtui.transports.cli_session import CliTarget, CliTransport
from fabtui.transports.ssh import SshTarget
from tests.support.sim import pinned_state

SAME = ("target", "transport", "command", "output", "exit_status", "error", "error_message",
        "truncated", "output_bytes", "attempts")
"""Every field but the wall-clock times."""
LEAF, SPINE = "leaf-g00-r0", "spine-01"
Step = tuple[str, float]
"""A command and how far its probe moved the simulated clock on (`let_pass`) before it."""


def _target(name: str = LEAF, flavor: str = "sonic") -> CliTarget:
    return CliTarget(ssh=SshTarget(name=name, host=name), flavor=flavor)


@pytest.fixture
def state_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return pinned_state(tmp_path, monkeypatch, "pfc-storm")


def _session(transport: CliTransport, steps: Sequence[Step], target: CliTarget, *,
             timeout: float = 30) -> list[TransportResult]:
    """Each step's result, in one session (one transport), closed at the end."""
    async def step(command: str, skew: float) -> TransportResult:
        await transport.let_pass(skew)  # in its own task: the skew stays with this command
        return await transport.run(target, command, timeout=timeout)

    async def main() -> list[TransportResult]:
        try:
            return [await asyncio.create_task(step(c, s)) for c, s in steps]
        finally:
            await transport.close()

    return asyncio.run(main())


def _both(real_state: Path, steps: Sequence[Step], target: CliTarget | None = None, *,
          here_state: Path | None = None, timeout: float = 30) -> list[dict[str, object]]:
    """Each step's result fields through both transports; asserts they agree."""
    target = target or _target()
    real = _session(SimCliTransport(real_state), steps, target, timeout=timeout)
    here = _session(InProcessSimCliTransport(here_state or real_state), steps, target,
                    timeout=timeout)
    fields = [{k: getattr(r, k) for k in SAME} for r in real]
    assert [{k: getattr(r, k) for k in SAME} for r in here] == fields
    return fields


@pytest.mark.parametrize(("target", "command"), [
    (_target(), "show interfaces counters"),
    (_target(), "show pfc counters"),
    (_target(), "show interfaces transceiver eeprom --dom Ethernet0"),
    (_target(SPINE, "eos"), "show interfaces counters errors"),
    (_target(SPINE, "eos"), "show interfaces Ethernet1/1 transceiver detail"),
])
def test_a_command_answers_as_through_the_device_client(state_file: Path, target: CliTarget,
                                                          command: str) -> None:
    [fields] = _both(state_file, [(command, 0.0)], target)
    assert fields["error"] is None, fields["error_message"]
    assert str(fields["output"]).strip() and command not in str(fields["output"])


def test_a_long_reply_comes_whole_and_unpaged(state_file: Path) -> None:
    # Longer than the simulated pager's page: a session that did not turn paging off would
    # still get the whole text (the pager is answered), but its byte count would differ.
    [fields] = _both(state_file, [("show interfaces transceiver eeprom --dom", 0.0)])
    assert len(str(fields["output"]).splitlines()) > 40
    assert "lines 1-40" not in str(fields["output"])


def test_a_rejected_command_is_the_clis_error(state_file: Path) -> None:
    [fields] = _both(state_file, [("show no-such-thing", 0.0)])
    assert fields["error"] is ErrorKind.COMMAND


def test_an_unknown_switch_is_a_failed_ssh_login(state_file: Path) -> None:
    [fields] = _both(state_file, [("show pfc counters", 0.0)], _target("leaf-nope"))
    assert fields["error"] is ErrorKind.UNREACHABLE
    assert "Could not resolve hostname leaf-nope" in str(fields["error_message"])


def test_each_command_runs_at_its_probes_clock(state_file: Path) -> None:
    command = "show interfaces counters"
    now, later, back = _both(state_file, [(command, 0.0), (command, 30.0), (command, 0.0)])
    assert later["output"] != now["output"]  # 30 s on: the counters have moved
    assert back == now


def test_a_port_shut_is_written_at_the_sessions_clock(state_file: Path, tmp_path: Path) -> None:
    here = tmp_path / "here.json"
    shutil.copy(state_file, here)
    steps = [("sudo config interface shutdown Ethernet8", 30.0), ("show interfaces status", 0.0)]
    shut, status = _both(state_file, steps, here_state=here)
    assert shut["error"] is None and "Ethernet8" in str(status["output"])
    real, mine = read_state(state_file), read_state(here)
    assert real is not None and mine is not None
    assert [s.model_dump() for s in mine.shut] == [s.model_dump() for s in real.shut]
    assert [(s.endpoint, s.at) for s in mine.shut] == [(f"{LEAF}:Ethernet8", 120.0)]


def test_bad_settings_and_a_missing_state_fail_the_login_alike(
        state_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LATENCY_VAR, "soon")
    [bad] = _both(state_file, [("show pfc counters", 0.0)])
    assert bad["error"] is not None and "'soon': expected seconds" in str(bad["error_message"])
    monkeypatch.delenv(LATENCY_VAR)
    [gone] = _both(tmp_path / "nothing.json", [("show pfc counters", 0.0)])
    assert "no simulated fabric state here" in str(gone["error_message"])


def test_latency_is_waited_and_a_timeout_cuts_it(state_file: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LATENCY_VAR, f"0,{LEAF}=1.5")
    started = time.monotonic()
    [late] = _both(state_file, [("show pfc counters", 0.0)], timeout=0.5)
    assert late["error"] is ErrorKind.TIMEOUT
    assert time.monotonic() - started >= 2 * 1.5  # each waited out its paging-off command
    [fast] = _both(state_file, [("show pfc counters", 0.0)], _target("leaf-g00-r1"),
                   timeout=0.5)
    assert fast["error"] is None


def _serve_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("fabtui-sim-switch")]


@pytest.mark.parametrize("kind", [SimCliTransport, InProcessSimCliTransport])
def test_a_cancelled_command_ends_its_session_at_once(state_file: Path,
                                                      kind: Callable[[Path], CliTransport],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LATENCY_VAR, f"0,{LEAF}=20")
    transport = kind(state_file)
    leaf = _target()

    async def main() -> tuple[float, dict[str, bool], TransportResult]:
        try:
            # Cancelled while the switch waits out its latency (before the paging-off reply).
            work = asyncio.create_task(transport.run(leaf, "show pfc counters", timeout=30))
            await asyncio.sleep(1.0)
            started = time.monotonic()
            work.cancel()
            with pytest.raises(asyncio.CancelledError):
                await work
            took, alive = time.monotonic() - started, transport.sessions()
            monkeypatch.setenv(LATENCY_VAR, "0")
            return took, alive, await transport.run(leaf, "show pfc counters", timeout=30)
        finally:
            await transport.close()

    took, alive, again = asyncio.run(main())
    assert took < 5 and alive == {LEAF: False}
    assert again.ok, again.error_message  # a fresh session for the next command
    assert not _serve_threads()


def test_the_simulator_answers_one_device_at_a_time(state_file: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # Node commands (event loop) and switch replies (session threads) share the one lock the
    # simulator's code needs: never two replies computed at once.
    busy, most = [0], [0]

    def alone(work: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any) -> Any:
            busy[0] += 1
            most[0] = max(most[0], busy[0])
            time.sleep(0.02)  # long enough for another thread to come in, were it let
            try:
                return work(*args)
            finally:
                busy[0] -= 1
        return wrapped

    monkeypatch.setattr(switch_session, "reply", alone(switch_cli.reply))  # as it calls it
    monkeypatch.setattr(node_commands, "run", alone(node_commands.run))
    ssh, cli = InProcessSimSshTransport(state_file), InProcessSimCliTransport(state_file)
    leaves = [_target(f"leaf-g00-r{i}") for i in range(4)]
    node = SshTarget(name="node001", host="node001")

    async def main() -> list[TransportResult]:
        try:
            return list(await asyncio.gather(
                *(cli.run(leaf, "show interfaces counters", timeout=30) for leaf in leaves),
                *(ssh.run(node, ["ethtool", "-S", "enp23s0f0np0"]) for _ in range(8))))
        finally:
            await cli.close()

    results = asyncio.run(main())
    assert all(r.ok for r in results), [r.error_message for r in results]
    assert most == [1]
