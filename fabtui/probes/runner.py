"""Running a probe: resolve the target, render the command, run it (twice for counters), parse,
evaluate, and return one `ProbeResult` whatever happened.

Failures are results: an unreachable host, a timeout, output no parser understands, output no
evaluator judges, all come back as verdict `error` with a sentence saying why, never as an
exception.

`sweep` runs one probe on many targets at once (a bounded number at a time, each within its own
time limit) and yields the results as they come. Cancelling a probe (asyncio cancellation, Ctrl-C,
a per-target time limit) stops its commands: child processes are killed, a pair probe's server
side and a CLI session mid-command are stopped, and the switch's session lock is let go.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shlex
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from fabtui.model.probe import Metric, ProbeDef, ProbeResult, Verdict
from fabtui.model.transport import ErrorKind, TransportResult
from fabtui.parsers import registry
from fabtui.parsers.errors import ParseError
from fabtui.probes.danger import require_confirmed
from fabtui.probes.evaluate import EvalContext, NoEvaluator, evaluate, findings, hardware_classes
from fabtui.probes.render import RenderError, fill_params, render_argv, render_cli
from fabtui.probes.targets import ProbeTarget, TargetError, resolve
from fabtui.topology.graph import FabricGraph
from fabtui.transports import clock
from fabtui.transports.cli_session import CliTarget, CliTransport
from fabtui.transports.local import LocalTransport
from fabtui.transports.nvml import NvmlTransport
from fabtui.transports.output import LineCallback
from fabtui.transports.ssh import SshTarget, SshTransport

_SERVER_START_S = 1.0
"""At most this long a pair probe's client waits for its server's "listening" line."""
_LISTENING = re.compile(r"Waiting for client to connect|[Ll]istening on|Server listening")
"""How a pair probe's server says it is ready (perftest's banner, iperf's and others')."""
DEFAULT_FANOUT = 32
"""Targets a sweep runs at once unless told otherwise (ssh's own per-host limit still applies)."""
_CLEANUP_S = 15.0


@dataclass
class Transports:
    """The transports a runner uses (tests and the simulated fabric swap them)."""

    local: LocalTransport = field(default_factory=LocalTransport)
    ssh: SshTransport = field(default_factory=SshTransport)
    cli: CliTransport = field(default_factory=CliTransport)
    nvml: NvmlTransport = field(default_factory=NvmlTransport)


class ProbeRunner:
    """Runs catalog probes against targets of one fabric."""

    def __init__(self, graph: FabricGraph | None, transports: Transports | None = None) -> None:
        self.graph = graph
        self.transports = transports or Transports()
        self.server_start_s = _SERVER_START_S
        """Seconds a pair probe's client waits at most for its server to say it listens."""

    async def close(self) -> None:
        """End the sessions and connections this runner opened."""
        await self.transports.cli.close()
        await self.transports.ssh.close()

    async def run(self, probe: ProbeDef, target_text: str | None,
                  params: Mapping[str, str] | None = None,
                  on_line: LineCallback | None = None, *,
                  confirmed: str | None = None) -> ProbeResult:
        """Run `probe`. Raises only for bad requests (`TargetError`, `RenderError`, and
        `DangerRefused` for a dangerous probe whose typed phrase `confirmed` does not match)."""
        require_confirmed(probe, target_text, confirmed)
        target = resolve(self.graph, target_text, probe.target)
        return await self.run_target(probe, target, params, on_line)

    async def sweep(self, probe: ProbeDef, targets: Sequence[ProbeTarget],
                    params: Mapping[str, str] | None = None, *, limit: int = DEFAULT_FANOUT,
                    target_timeout: float | None = None, confirmed: str | None = None,
                    named: str | None = None) -> AsyncGenerator[ProbeResult, None]:
        """Run `probe` on every target, `limit` at a time; yield each result as it completes.

        A dangerous probe runs only when `confirmed` is the phrase for the set as the operator
        named it (`named`, default: the targets' names joined by commas); else `DangerRefused`
        is raised before anything runs.

        Every target gives exactly one result: a target that raises (a parameter it cannot
        fill) or takes longer than `target_timeout` (default: `time_limit(probe)`) is an
        `error` result saying so, and the others go on. Leaving the iteration early (or
        cancelling the consumer) cancels the targets still running; use
        `contextlib.aclosing` to have that happen at once rather than at garbage collection.
        """
        if limit < 1:
            raise ValueError(f"a sweep runs at least one target at a time, not {limit}")
        require_confirmed(probe, named if named is not None else
                          ",".join(t.name for t in targets), confirmed)
        allowed = target_timeout if target_timeout is not None else time_limit(probe)
        gate = asyncio.Semaphore(limit)

        async def one(target: ProbeTarget) -> ProbeResult:
            async with gate:
                return await self._bounded(probe, target, params, allowed)

        tasks = [asyncio.create_task(one(target)) for target in targets]
        try:
            for finished in asyncio.as_completed(tasks):
                yield await finished
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _bounded(self, probe: ProbeDef, target: ProbeTarget,
                       params: Mapping[str, str] | None, allowed: float) -> ProbeResult:
        """One target of a sweep: its result, or an error result (never an exception)."""
        started = datetime.now(UTC)
        try:
            return await asyncio.wait_for(self.run_target(probe, target, params), allowed)
        except TimeoutError:
            return _error(probe, target, "", started, [], f"no result within {allowed:g}s "
                          "(the target is slow or hung; its commands were stopped)")
        except (TargetError, RenderError, ValueError) as exc:
            return _error(probe, target, "", started, [], str(exc))
        except Exception as exc:  # one broken target must not end the sweep of the others
            return _error(probe, target, "", started, [],
                          f"{type(exc).__name__}: {exc}")

    async def run_target(self, probe: ProbeDef, target: ProbeTarget,
                         params: Mapping[str, str] | None = None,
                         on_line: LineCallback | None = None) -> ProbeResult:
        """Run `probe` on a resolved target. Raises only for bad requests (`RenderError`)."""
        values = fill_params(probe, target, params or {})
        started = datetime.now(UTC)
        if probe.transport == "nvml":
            return await self._run_nvml(probe, target, started)
        command, execute = self._prepare(probe, target, values, on_line)
        raws: list[TransportResult] = []
        parsed: list[BaseModel] = []
        base = clock.SKEW.get()
        token = clock.SKEW.set(base)  # the sim clock's skew ends with this probe
        try:
            for sample in range(probe.samples):
                if sample:
                    await self._let_pass(probe)
                raw = await execute()
                raws.append(raw)
                outcome = self._parse(probe, raw)
                if isinstance(outcome, str):
                    return _error(probe, target, command, started, raws, outcome)
                parsed.append(outcome)
            skipped = clock.SKEW.get() - base
        finally:
            clock.SKEW.reset(token)
        before = parsed[0] if len(parsed) > 1 else None
        return self._finish(probe, target, command, started, raws, before, parsed[-1],
                            skipped)

    async def _let_pass(self, probe: ProbeDef) -> None:
        """The interval between two readings: slept on real devices, skipped on the simulated
        fabric (its clock moves on instead)."""
        if probe.transport == "cli":
            await self.transports.cli.let_pass(probe.interval)
        elif probe.transport == "ssh":
            await self.transports.ssh.let_pass(probe.interval)
        else:
            await asyncio.sleep(probe.interval)

    # preparing ----------------------------------------------------------------------------------
    def _prepare(self, probe: ProbeDef, target: ProbeTarget, values: dict[str, Any],
                 on_line: LineCallback | None) -> tuple[str, Any]:
        timeout = probe.timeout
        if probe.transport == "cli":
            switch = target.switch
            if switch is None:
                raise ValueError(f"probe {probe.name} needs a switch target")
            template = (probe.command.cli or {}).get(switch.flavor.value)
            if template is None:
                raise ValueError(f"probe {probe.name} has no command for {switch.flavor.value} "
                                 f"switches ({switch.name})")
            command = render_cli(template, values)
            cli_target = CliTarget(ssh=SshTarget(name=switch.name, host=switch.mgmt or
                                                 switch.name, credentials=switch.credentials),
                                   flavor=switch.flavor.value)

            async def run_cli() -> TransportResult:
                return await self.transports.cli.run(cli_target, command, timeout=timeout,
                                                     retry_on_drop=probe.idempotent)

            return command, run_cli
        argv = render_argv(probe.command.argv or [], values)
        command = shlex.join(argv)
        if target.kind == "node-pair":
            return command, lambda: self._run_pair(probe, target, values, argv, on_line)
        if target.kind == "local" or target.node is None:
            async def run_local() -> TransportResult:
                return await self.transports.local.run(argv, timeout=timeout, on_line=on_line)

            return command, run_local
        ssh_target = _ssh_target(target)

        async def run_ssh() -> TransportResult:
            return await self.transports.ssh.run(ssh_target, argv, timeout=timeout,
                                                 on_line=on_line,
                                                 retry_on_drop=probe.idempotent)

        return command, run_ssh

    async def _run_pair(self, probe: ProbeDef, target: ProbeTarget, values: dict[str, Any],
                        client: list[str], on_line: LineCallback | None) -> TransportResult:
        """Server on the second node, client on the first.

        Whatever ends it early (a timeout, a failed side, cancellation), the server task is
        stopped and the probe's cleanup command runs on both nodes, so no side is left running.
        """
        assert target.peer is not None
        server_argv = render_argv(probe.command.server or [], values)
        client_host, server_host = _ssh_target(target), _ssh_target(target.peer)
        ssh = self.transports.ssh
        listening = asyncio.Event()

        def heard(line: str) -> None:
            if _LISTENING.search(line):
                listening.set()

        server = asyncio.create_task(ssh.run(server_host, server_argv,
                                             timeout=probe.timeout + self.server_start_s + 5,
                                             retry_on_drop=False, on_line=heard))
        clean = False
        try:
            # Until the server says it listens, or ends, or at most `server_start_s` (its
            # output may only come at its end when the remote side buffers it).
            heard_it = asyncio.ensure_future(listening.wait())
            await asyncio.wait([heard_it, server], timeout=self.server_start_s,
                               return_when=asyncio.FIRST_COMPLETED)
            heard_it.cancel()
            result = await ssh.run(client_host, client, timeout=probe.timeout, on_line=on_line,
                                   retry_on_drop=False)
            try:
                served = await asyncio.wait_for(asyncio.shield(server), 10)
            except TimeoutError:
                served = None
            clean = result.error is not ErrorKind.TIMEOUT and served is not None and served.ok
        finally:
            server.cancel()
            await asyncio.gather(server, return_exceptions=True)
            if not clean:
                # Shielded: a second cancellation must not leave a remote side running.
                await _uninterrupted(self._pair_cleanup(probe, values, client_host,
                                                        server_host))
        if served is not None and not served.ok and result.ok:
            return served  # the client "succeeded" but the server side failed: report that
        return result

    async def _pair_cleanup(self, probe: ProbeDef, values: dict[str, Any],
                            *hosts: SshTarget) -> None:
        cleanup = render_argv(probe.command.cleanup or [], values)
        if cleanup:
            await asyncio.gather(*(self.transports.ssh.run(h, cleanup, timeout=_CLEANUP_S,
                                                           retry_on_drop=False)
                                   for h in hosts), return_exceptions=True)

    # parsing and judging ------------------------------------------------------------------------
    def _parse(self, probe: ProbeDef, raw: TransportResult) -> BaseModel | str:
        """The parse of `raw`, or why there is none (a sentence)."""
        if raw.error is not None and raw.error is not ErrorKind.COMMAND:
            return raw.error_message or raw.error.value
        if probe.parser is None:
            return "probe has no parser"
        try:
            return registry.get(probe.parser).parse(raw.output)
        except ParseError as exc:
            if raw.error is ErrorKind.COMMAND:
                return raw.error_message or "the command failed"
            return f"could not read the output as {probe.parser}: {exc}"

    def _finish(self, probe: ProbeDef, target: ProbeTarget, command: str, started: datetime,
                raws: list[TransportResult], before: BaseModel | None,
                after: BaseModel, skipped: float = 0.0) -> ProbeResult:
        elapsed = (raws[-1].ended_at - raws[0].ended_at).total_seconds() + skipped
        # Rates use the time that really passed between the replies (a login or a slow reply
        # before the first one would otherwise dilute them), on the devices' clock (`skipped`:
        # what the simulated clock moved on without real time passing).
        ctx = self._context(probe, target, elapsed if len(raws) > 1 and elapsed > 0 else None,
                            command)
        try:
            metrics = evaluate(probe.parser or "", before, after, ctx)
        except NoEvaluator as exc:  # no metrics would read as `ok`: say it cannot be judged
            return _error(probe, target, command, started, raws, str(exc),
                          parsed=after.model_dump(mode="json"))
        last = raws[-1]
        if last.error is ErrorKind.COMMAND:
            metrics.append(Metric(name="exit_status", value=last.exit_status,
                                  component=ctx.component(), verdict=Verdict.FAIL))
        verdict = Verdict.worst([m.verdict for m in metrics])
        return ProbeResult(probe=probe.name, target=target.name, command=command,
                           started_at=started, ended_at=datetime.now(UTC), verdict=verdict,
                           metrics=metrics, findings=findings(probe, metrics),
                           parsed=after.model_dump(mode="json"), raw=raws)

    def _context(self, probe: ProbeDef, target: ProbeTarget,
                 interval: float | None = None, command: str = "") -> EvalContext:
        return EvalContext(probe=probe, target=target, interval=interval or probe.interval,
                           hardware=hardware_classes(target), graph=self.graph,
                           command=command)

    async def _run_nvml(self, probe: ProbeDef, target: ProbeTarget,
                        started: datetime) -> ProbeResult:
        if target.kind != "local":
            return _error(probe, target, "nvml snapshot", started, [],
                          "NVML reads the GPUs of this machine; for a remote node run "
                          "gpu.smi-q (nvidia-smi -q -x over ssh)")
        raw = await self.transports.nvml.snapshot(timeout=probe.timeout)
        if raw.values is None:
            return _error(probe, target, raw.command, started, [raw],
                          raw.error_message or "no values")
        ctx = self._context(probe, target)
        try:
            metrics = evaluate("nvml", None, raw.values, ctx)
        except NoEvaluator as exc:
            return _error(probe, target, raw.command, started, [raw], str(exc),
                          parsed=raw.values)
        return ProbeResult(probe=probe.name, target=target.name, command=raw.command,
                           started_at=started, ended_at=datetime.now(UTC),
                           verdict=Verdict.worst([m.verdict for m in metrics]), metrics=metrics,
                           findings=findings(probe, metrics), parsed=raw.values, raw=[raw])


def time_limit(probe: ProbeDef) -> float:
    """How long one target of a sweep may take: every sample's timeout, the waits, a margin."""
    pair = _SERVER_START_S + 15 if probe.target == "node-pair" else 0.0
    return probe.samples * probe.timeout + (probe.samples - 1) * probe.interval + pair + 5


async def _uninterrupted(work: Any) -> None:
    """Await `work` to its end even if the caller is cancelled meanwhile (then re-raise)."""
    task = asyncio.ensure_future(work)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
    with contextlib.suppress(Exception):
        task.result()
    if cancelled:
        raise asyncio.CancelledError


def _ssh_target(target: ProbeTarget) -> SshTarget:
    assert target.node is not None
    return SshTarget(name=target.node.hostname, host=target.node.mgmt or target.node.hostname)


def _error(probe: ProbeDef, target: ProbeTarget, command: str, started: datetime,
           raws: list[TransportResult], message: str,
           parsed: dict[str, Any] | None = None) -> ProbeResult:
    return ProbeResult(probe=probe.name, target=target.name, command=command,
                       started_at=started, ended_at=datetime.now(UTC), verdict=Verdict.ERROR,
                       raw=raws, error=message, parsed=parsed)
