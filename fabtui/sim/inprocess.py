"""Simulated node commands answered in this process: `SimSshTransport` without a child process.

For runs that are not about the transport (`fabtui runbook test`, benchmarks of what sits above
it): a node command costs the simulator's answer (< 1 ms) instead of a Python start-up and a
round trip to the sim server. Everything the caller sees is what the client-and-server path
gives: the same `TransportResult` (built by `result_from` from a `ProcessOutcome`), the same
simulated clock (the server's `Request.now`: pinned by `FABTUI_SIM_TIME`, moved on by the task's
skew), the device's latency from `FABTUI_SIM_LATENCY` (slept with asyncio, within the command's
timeout), the output cap, line callbacks, and the exit statuses and messages of a bad state
file, a bad latency setting or a simulator bug. The fabric is rebuilt when its state file
changes (a repair, an injected fault), as the server's is.

Switch CLI sessions are answered in this process by `fabtui.sim.inprocess_cli`, under the same
lock (`LOCK`) and from the same fabrics (`sim_fabric`).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import threading
import traceback
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from fabtui.errors import InputError
from fabtui.model.transport import TransportResult
from fabtui.sim import latency, node_commands, operator_host
from fabtui.sim.core import Sim
from fabtui.sim.state import NO_STATE, TIME_VAR, FabricCache, SimState, sim_time
from fabtui.sim.transports import SimSshTransport
from fabtui.transports import clock
from fabtui.transports.local import LocalTransport, result_from
from fabtui.transports.output import LineCallback, OutputCollector
from fabtui.transports.process import STDERR_CAP, ProcessOutcome
from fabtui.transports.ssh import SSH_FAILED, SshTarget, classify

Answer = tuple[str, str, int]
"""(stdout, stderr, exit status) of one node command."""


class InProcessSimSshTransport(SimSshTransport):
    """`ssh node cmd` answered by the simulated node in this process (see the module's doc)."""

    async def run(self, target: SshTarget, argv: Sequence[str], *, timeout: float = 60.0,
                  on_line: LineCallback | None = None, retry_on_drop: bool = True,
                  stdin: bytes | None = None) -> TransportResult:
        """Run `argv` on the simulated node `target.name` (stdin is not read, as the node
        program does not read it)."""
        started = datetime.now(UTC)
        out = OutputCollector(self.options.cap, on_line)
        err = OutputCollector(STDERR_CAP)
        try:
            status: int | None = await asyncio.wait_for(
                self._answer(target.name, list(argv), out, err), timeout)
            timed_out = False
        except TimeoutError:
            status, timed_out = None, True
        out.finish()
        outcome = ProcessOutcome(stdout=out.text(), stderr=err.text(), exit_status=status,
                                 timed_out=timed_out, truncated=out.truncated,
                                 output_bytes=out.total, started_at=started,
                                 ended_at=datetime.now(UTC))
        verdict = classify(outcome, target) if outcome.exit_status == SSH_FAILED else None
        return result_from(outcome, target=target.name, transport=self.name,
                           command=shlex.join(argv), timeout=timeout,
                           error=verdict.error if verdict else None,
                           error_message=verdict.message if verdict else None)

    async def _answer(self, name: str, argv: list[str], out: OutputCollector,
                      err: OutputCollector) -> int:
        """The node's answer fed to `out` and `err`; its exit status (the server's steps)."""
        skew = clock.SKEW.get()
        path = os.path.abspath(self.state)
        try:
            delay, fabric = device(path, name)
        except Unavailable as exc:
            err.feed(exc.stderr.encode())
            return exc.status
        if delay > 0:
            await asyncio.sleep(delay)
        try:
            with LOCK:
                state, sim = sim_fabric(path) or fabric  # changed meanwhile: as it is now
                stdout, stderr, status = self._command(
                    sim, name, argv, sim_time(state, os.environ.get(TIME_VAR), skew))
        except Exception:  # a bug in the simulator: on the device's stderr, as the server says
            err.feed(traceback.format_exc().encode())
            return 1
        if stdout:
            out.feed(stdout.encode())
        if stderr:
            err.feed(stderr.encode())
        return status


    def _command(self, sim: Sim, name: str, argv: list[str], t: float) -> Answer:
        """What device `name` answers to `argv` at `t` (a node's programs); a counter clear
        it ran (`mlxlink --pc`) is written to the state file, as the sim server does (one
        function serves both: `node_commands.answer`)."""
        return node_commands.answer(sim, Path(self.state), name, argv, t)


class _OperatorHost(InProcessSimSshTransport):
    """The simulated operator's machine, reached as a node is (`operator_host`)."""

    def _command(self, sim: Sim, name: str, argv: list[str], t: float) -> Answer:
        return operator_host.run(sim, argv, t)


class InProcessSimLocalTransport(LocalTransport):
    """Commands for this machine, answered by the simulated operator's machine instead
    (`fabtui runbook test`: nothing a tested runbook says runs for real)."""

    name = "sim"

    def __init__(self, state: Path) -> None:
        super().__init__(operator_host.NAME)
        self._host = _OperatorHost(state)

    async def run(self, argv: Sequence[str], *, timeout: float = 60.0,
                  on_line: LineCallback | None = None, stdin: bytes | None = None,
                  env: Mapping[str, str] | None = None) -> TransportResult:
        """`argv` on the simulated operator's machine (stdin and env are not read)."""
        return await self._host.run(SshTarget(name=operator_host.NAME, host=operator_host.NAME),
                                    argv, timeout=timeout, on_line=on_line)


LOCK = threading.RLock()
"""The simulator's code is not written for threads (as the sim server's lock): building a
fabric and computing any reply, a node's (event-loop thread) or a switch's (its session's
thread), holds this lock."""
_FABRICS = FabricCache()


def sim_fabric(path: str) -> tuple[SimState, Sim] | None:
    """The fabric in the state file `path` as it is now (built once per change of the file)."""
    with LOCK:
        return _FABRICS.get(path)


class Unavailable(Exception):
    """A device that cannot answer: what it says on stderr and its exit status."""

    def __init__(self, stderr: str, status: int) -> None:
        super().__init__(stderr)
        self.stderr, self.status = stderr, status


def device(path: str, name: str) -> tuple[float, tuple[SimState, Sim]]:
    """The latency of device `name` (`FABTUI_SIM_LATENCY`) and the fabric of `path`, as the sim
    server finds them before answering. Raises `Unavailable` as the server answers a bad
    setting or state (status 2) or a bug of the simulator (1, its traceback)."""
    try:
        delay = latency.from_env().of(name)
        fabric = sim_fabric(path)
    except InputError as exc:
        raise Unavailable("".join(f"{p}\n" for p in exc.problems), 2) from None
    except Exception:  # a bug in the simulator: on the device's stderr, as the server says
        raise Unavailable(traceback.format_exc(), 1) from None
    if fabric is None:
        raise Unavailable(f"{path}: {NO_STATE}\n", 2)
    return delay, fabric
