"""Node commands answered in this process give what the client-and-server path gives.

`fabtui runbook test` answers node commands in its own process (`InProcessSimSshTransport`)
instead of a device client per command; what it then judges must be what an engineer's
`fabtui probe run` on the demo fabric would get: the same output, stderr, exit status and
error, on the same simulated clock, with the same latency, timeout and output cap.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fabtui.model.transport import ErrorKind, TransportResult
from fabtui.paths import demo_topology, shipped_templates
from fabtui.sim.inprocess import InProcessSimSshTransport
from fabtui.sim.latency import LATENCY_VAR
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import fresh_state, write_state
from fabtui.sim.transports import SimSshTransport
from fabtui.transports import clock
from fabtui.transports.ssh import SshOptions, SshTarget, SshTransport
from tests.support.sim import pinned_state

NODE = SshTarget(name="node001", host="node001")
SAME = ("target", "transport", "command", "output", "stderr", "exit_status", "error",
        "error_message", "truncated", "output_bytes")
"""Every field but the wall-clock times."""


@pytest.fixture
def state_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return pinned_state(tmp_path, monkeypatch, "healthy")


def _run(transport: SshTransport, argv: list[str], target: SshTarget = NODE, *,
         timeout: float = 30, skew: float = 0.0) -> tuple[TransportResult, list[str]]:
    lines: list[str] = []

    async def go() -> TransportResult:
        clock.SKEW.set(skew)
        return await transport.run(target, argv, timeout=timeout, on_line=lines.append)

    return asyncio.run(go()), lines


def _both(state: Path, argv: list[str], target: SshTarget = NODE, **kwargs: float) -> \
        tuple[dict[str, object], list[str]]:
    """The result and lines of both transports; asserts they agree."""
    options = SshOptions(cap=int(kwargs.pop("cap", 4 * 1024 * 1024)))
    real, real_lines = _run(SimSshTransport(state, options), argv, target, **kwargs)
    here, here_lines = _run(InProcessSimSshTransport(state, options), argv, target, **kwargs)
    fields = {k: getattr(real, k) for k in SAME}
    assert {k: getattr(here, k) for k in SAME} == fields
    assert here_lines == real_lines
    return fields, here_lines


@pytest.mark.parametrize(("argv", "status"), [
    (["ethtool", "-S", "enp23s0f0np0"], 0),
    (["ibstat", "mlx5_0"], 0),
    (["no-such-tool", "--flag"], 127),
    ([], 0),
])
def test_a_command_answers_as_through_the_device_client(state_file: Path, argv: list[str],
                                                          status: int) -> None:
    fields, lines = _both(state_file, argv)
    assert fields["exit_status"] == status
    assert lines == str(fields["output"]).splitlines()


def test_an_unknown_node_is_a_failed_ssh_connection(state_file: Path) -> None:
    fields, _ = _both(state_file, ["ibstat"], SshTarget(name="node999", host="node999"))
    assert fields["exit_status"] == 255 and fields["error"] is not None
    assert "Could not resolve hostname node999" in str(fields["error_message"])


def test_the_clock_skew_of_a_probe_moves_the_answer_on(state_file: Path) -> None:
    argv = ["ethtool", "-S", "enp23s0f0np0"]
    now, _ = _both(state_file, argv)
    later, _ = _both(state_file, argv, skew=30.0)
    assert later["output"] != now["output"]


def test_the_output_cap_truncates_alike(state_file: Path) -> None:
    fields, _ = _both(state_file, ["ethtool", "-S", "enp23s0f0np0"], cap=600)
    assert fields["truncated"] is True


def test_bad_settings_and_a_missing_state_fail_alike(state_file: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LATENCY_VAR, "soon")
    bad, _ = _both(state_file, ["ibstat"])
    assert bad["exit_status"] == 2 and "'soon': expected seconds" in str(bad["stderr"])
    monkeypatch.delenv(LATENCY_VAR)
    gone, _ = _both(tmp_path / "nothing.json", ["ibstat"])
    assert gone["exit_status"] == 2 and "no simulated fabric state here" in str(gone["stderr"])


def test_latency_is_waited_and_a_timeout_cuts_it(state_file: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LATENCY_VAR, "0.2,node002=30")
    transport = InProcessSimSshTransport(state_file)
    slow, _ = _run(transport, ["ibstat"])
    assert slow.ok and (slow.ended_at - slow.started_at).total_seconds() >= 0.2
    late, _ = _both(state_file, ["ibstat"], SshTarget(name="node002", host="node002"),
                    timeout=0.5)
    assert late["error"] is ErrorKind.TIMEOUT and late["exit_status"] is None


def test_a_changed_state_file_is_what_the_next_command_sees(state_file: Path) -> None:
    transport = InProcessSimSshTransport(state_file)
    argv = ["ethtool", "-S", "enp23s0f0np0"]
    before, _ = _run(transport, argv)
    write_state(state_file, fresh_state(demo_topology(), find_scenario("healthy"),
                                        [shipped_templates()], seed=8))
    after, _ = _run(transport, argv)
    real, _ = _run(SimSshTransport(state_file), argv)
    assert after.output == real.output != before.output
