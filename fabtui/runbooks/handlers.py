"""Running each kind of block (`sh`, `probe`, `check`, `decide`, `confirm`, `input`, `note`),
and a dry run's stand-in for each: what a block does, given the engine's state."""

from __future__ import annotations

import asyncio
import re
import shlex
from typing import Any

from fabtui.destructive import describe, judge
from fabtui.model.events import (
    BlockCommand,
    BlockOutput,
    CommandSent,
    Decision,
    Note,
)
from fabtui.model.runbook import Block, BlockKind, Step
from fabtui.model.verdict import Verdict
from fabtui.probes.danger import confirmation_phrase
from fabtui.probes.render import RenderError
from fabtui.probes.targets import TargetError
from fabtui.runbooks import blocks as block_text
from fabtui.runbooks.engine_state import (
    OUTPUT_KEEP,
    WAIT,
    EngineState,
    Outcome,
    ProbeCall,
    Started,
    var_name,
)
from fabtui.runbooks.expr import Evaluator, ExprError, Unknown
from fabtui.runbooks.inputs import convert
from fabtui.runbooks.resume import MAY_HAVE_RUN, again_phrase, input_block_spec
from fabtui.runbooks.templates import describe_unknown, render, render_cli_lines
from fabtui.transports.cli_session import CliTarget
from fabtui.transports.ssh import SshTarget


class BlockHandlers(EngineState):
    """The engine's block handlers (see the module docstring)."""

    async def _execute(self, block: Block) -> Outcome:
        if self.dry_run and block.kind in (BlockKind.CHECK, BlockKind.DECIDE,
                                           BlockKind.CONFIRM, BlockKind.INPUT):
            return self._dry(block)
        handlers = {BlockKind.SH: self._sh, BlockKind.PROBE: self._probe,
                    BlockKind.CHECK: self._check, BlockKind.CONFIRM: self._confirm,
                    BlockKind.INPUT: self._input, BlockKind.DECIDE: self._decide,
                    BlockKind.NOTE: self._note}
        return await handlers[block.kind](block)

    def _dry(self, block: Block) -> Outcome:
        """A dry run shows every gate and judgement without making it, and visits every step:
        what a check can conclude, where a decide can go, what a gate asks, each rendered
        with what is known (a value only the run knows is `‹name›`, said once in the note)."""
        evaluator = self.evaluator()

        def shown(text: str) -> str:
            try:
                return self._render(text, evaluator)
            except ExprError:
                return text  # shown as written; the real run reports the error

        if block.kind is BlockKind.INPUT:
            attrs = self.attrs(block)
            name = attrs.name or var_name(block.id)
            if attrs.default is not None and attrs.secret:
                self.redactor.add(attrs.default)
            asked = Unknown(name, f"asked for at {self._where(block)}"
                            + (f" (default {attrs.default})"
                               if attrs.default is not None and not attrs.secret else ""))
            return Outcome(Verdict.SKIPPED, f"dry run: would ask for {name}: "
                           f"{shown(_one_line(block.body))}{self._unknown_note()}",
                           variables={name: asked})
        if block.kind is BlockKind.CHECK:
            said = " | ".join(f"{rule.verdict.value}: {shown(rule.message)}"
                              for rule in block_text.check_rules(block))
            return Outcome(Verdict.SKIPPED, f"dry run: would judge, one of: {said}"
                           f"{self._unknown_note()}")
        if block.kind is BlockKind.DECIDE:
            targets = list(dict.fromkeys(shown(b.target) for b in block_text.branches(block)))
            return Outcome(Verdict.SKIPPED, f"dry run: would choose: {' or '.join(targets)}"
                           f"{self._unknown_note()}")
        return Outcome(Verdict.SKIPPED, f"dry run: would ask: {shown(_one_line(block.body))}"
                       f"{self._unknown_note()}")

    async def _note(self, block: Block) -> Outcome:
        text = self._render(block.body.strip(), self.evaluator())
        if self._unknown:
            text += f"\n(dry run: {describe_unknown(self._unknown)})"
        self._record(Note(text=text, by="runbook", case=block.attrs.get("case") or None),
                     block.step, block.id)
        return Outcome(Verdict.OK, text.splitlines()[0] if text else "")

    async def _check(self, block: Block) -> Outcome:
        evaluator = self.evaluator()
        for rule in block_text.check_rules(block):
            if rule.condition is None or evaluator.evaluate(rule.condition):
                return Outcome(rule.verdict, render(rule.message, evaluator),
                                {"rule": rule.line})
        return Outcome(Verdict.OK, "no rule matched")

    async def _decide(self, block: Block) -> Outcome:
        evaluator = self.evaluator()
        for branch in block_text.branches(block):
            if branch.condition is None or evaluator.evaluate(branch.condition):
                target = render(branch.target, evaluator)
                self._record(Decision(by="runbook", condition=branch.condition or "default",
                                      target=target), block.step, block.id)
                return Outcome(Verdict.OK, f"-> {target}", {"target": target}, flow=target)
        return Outcome(Verdict.OK, "no branch taken: continue")

    async def _confirm(self, block: Block) -> Outcome:
        evaluator = self.evaluator()
        prompt = render(block.body.strip(), evaluator)
        attrs = self.attrs(block)
        phrase = render(attrs.type, evaluator) if attrs.type is not None else \
            (block.id if block_text.is_dangerous(block) else None)
        prompt = self._announce_question(block, prompt)
        answer = await self.operator.confirm(block, prompt, phrase)
        if answer is None:
            hint = shlex.quote(f"{block.id}={phrase or 'yes'}")
            return _waiting(f"gate {block.id} needs an answer (headless: --answer {hint})",
                            phrase)
        given = answer.strip()
        accepted = given == phrase if phrase else given.lower() in YES
        self._record(Decision(by="operator", prompt=prompt,
                              answer="accepted" if accepted else answer,
                              typed=phrase is not None), block.step, block.id)
        if accepted:
            return Outcome(Verdict.OK, "confirmed", {"answer": "yes"})
        return self._declined(block, prompt, given, phrase)

    def _declined(self, block: Block, prompt: str, given: str, phrase: str | None) -> Outcome:
        """A gate not passed: an explicit no goes to the block's `on_no` step when it has one;
        otherwise (and for any other answer: a typo is not a no) the session waits at it."""
        question = prompt.splitlines()[0].strip() if prompt else block.id
        if given.lower() in NO:
            target = self.attrs(block).on_no
            if target:  # declined with on_no=STEP: the run goes on there
                return Outcome(Verdict.SKIPPED, f"not confirmed: {question}", {"answer": "no"},
                               flow=target)
            return _waiting(f"answered no to {question!r}: not yet", phrase)
        if phrase is not None:
            return _waiting(f"typed {given!r}, not {phrase!r}: not confirmed", phrase)
        return _waiting(f"{given!r} is not yes or no: not confirmed", phrase)

    async def _input(self, block: Block) -> Outcome:
        spec = input_block_spec(block)
        name = spec.name
        prompt = self._announce_question(block, render(block.body.strip(), self.evaluator()))
        answer = await self.operator.ask(block, prompt, spec)
        if answer is None:
            answer = spec.default
        if spec.secret and answer is not None:
            self.redactor.add(str(answer))  # before convert: its error message quotes it
        if answer is None:
            return Outcome(Verdict.ERROR, f"input {name} needs a value "
                            f"(headless: --answer {block.id}=VALUE)")
        value = convert(spec, answer, self.runner.graph)
        if spec.secret:
            self.redactor.add(str(value))
        self._record(Decision(by="operator", input=name, value=value), block.step, block.id)
        return Outcome(Verdict.OK, f"{name} = {'***' if spec.secret else value}",
                        {"value": value}, variables={name: value})

    def _probe_call(self, block: Block, evaluator: Evaluator) -> ProbeCall | Outcome:
        """`block`'s probe call rendered with what is known now, or the error outcome of a
        call that cannot be made (no such probe, an interval that is not seconds)."""
        call = block_text.probe_call(block)
        definition = self.catalog.get(call.probe)
        if definition is None:
            return Outcome(Verdict.ERROR, f"no probe {call.probe!r} in the catalog")
        target = self._render(call.target, evaluator) if call.target is not None else None
        params = {k: self._render(v, evaluator) for k, v in call.params.items()}
        attrs = self.attrs(block)
        if attrs.timeout is not None:
            definition = definition.model_copy(update={"timeout": attrs.timeout})
        if attrs.interval is not None:
            interval = attrs.interval
            if isinstance(interval, str):
                rendered = self._render(interval, evaluator)
                try:
                    interval = float(rendered)
                except ValueError:
                    return Outcome(Verdict.ERROR, f"interval={interval!r} is {rendered!r}, "
                                                   "not a number of seconds")
            if interval <= 0:
                return Outcome(Verdict.ERROR, f"interval must be positive, not {interval:g}")
            definition = definition.model_copy(update={"interval": interval})
        if attrs.samples is not None:
            definition = definition.model_copy(update={"samples": attrs.samples})
        described = f"{call.probe} on {target or 'this machine'}" + \
            (f" {params}" if params else "")
        return ProbeCall(call.probe, definition, target, params, described,
                         definition.danger or block_text.is_dangerous(block))

    def _start_together(self, step: Step, position: int) -> None:
        """When `step`'s block at `position` is the first of a `together` group still to run,
        start the probes of the whole group at once (asyncio tasks), each call rendered now;
        each block's handler then awaits its own and journals it in order, as if it had run
        alone, so one soak serves them all. Nothing is journaled here: killed during the wait,
        a resume runs the unfinished blocks again. A block left out (dangerous, skipped by
        plan, its `if` false or not computable, its call not renderable) runs alone when
        reached, as any block does. Dry runs start nothing."""
        block = step.blocks[position]
        if self.dry_run or block.kind is not BlockKind.PROBE or block.id in self._together:
            return
        try:
            group = self.attrs(block).together
        except block_text.BlockError:
            return
        if group is None:
            return
        evaluator = self.evaluator()
        for member in step.blocks[position:]:
            try:
                attrs = self.attrs(member)
                if member.kind is not BlockKind.PROBE or attrs.together != group:
                    break
                if member.id in self.planned_skips or \
                        (attrs.condition and not evaluator.evaluate(attrs.condition)):
                    continue
                call = self._probe_call(member, evaluator)
            except (block_text.BlockError, ExprError, RenderError, TargetError, ValueError):
                continue  # its handler meets the same problem and reports it
            if isinstance(call, Outcome) or call.dangerous:
                continue
            lines: list[str] = []

            def stream(line: str, shown: Block = member) -> None:
                self._stream(shown, line)

            # A later block's output waits for its block to start (the observers see each
            # block's output under it, as when it runs alone).
            task = asyncio.create_task(self.runner.run(
                call.definition, call.target, call.params,
                on_line=stream if member is block else lines.append))
            task.add_done_callback(_retrieved)
            self._together[member.id] = Started(call, task, lines)

    def _drop_together(self) -> None:
        """Cancel the group probes no block will await (a jump, a skip, the end, a stop)."""
        for started in self._together.values():
            started.task.cancel()
        self._together.clear()

    async def _probe(self, block: Block) -> Outcome:
        evaluator = self.evaluator()
        started = self._together.pop(block.id, None)
        prepared = started.call if started is not None else self._probe_call(block, evaluator)
        if isinstance(prepared, Outcome):
            return prepared
        definition, target, described = prepared.definition, prepared.target, prepared.described
        self._record(BlockCommand(command=described), block.step, block.id)
        confirmed: str | None = None
        if prepared.dangerous:  # the same gate as `sh`
            refused = await self._typed_gate(
                block, evaluator, f"probe {prepared.probe} changes state on "
                f"{target or 'this machine'}: {definition.description}", f"run {described}")
            if refused is not None:
                return refused
            # The gate above is this face's typed confirmation; the runner checks the phrase.
            confirmed = confirmation_phrase(definition, target)
        if self.dry_run:
            return Outcome(Verdict.SKIPPED, f"dry run: would run {described}"
                            f"{self._unknown_note()}")
        if confirmed is not None:  # journaled before it goes (see `_sh`)
            self._record(CommandSent(on=target or "this machine"), block.step, block.id)
        if started is not None:  # started with its group (never a dangerous probe)
            result = await started.task
            for line in started.lines:
                self._stream(block, line)
        else:
            result = await self.runner.run(definition, target, prepared.params,
                                           on_line=lambda line: self._stream(block, line),
                                           confirmed=confirmed)
        # The limit and its source go with the verdict: a report shows the one applied (#38).
        metrics = [{"name": m.name, "value": m.value, "unit": m.unit, "component": m.component,
                    "verdict": m.verdict.value,
                    **({"limit": m.limit} if m.limit is not None else {}),
                    **({"source": m.source} if m.source else {})} for m in result.metrics]
        findings = [f.message if hasattr(f, "message") else str(f) for f in result.findings]
        output = "\n".join(r.output for r in result.raw)[-OUTPUT_KEEP:]
        if output:
            self._record(BlockOutput(output=output), block.step, block.id)
        verdict = result.verdict
        message = result.error or (findings[0] if findings else f"{prepared.probe}: "
                                   f"{result.verdict.value}")
        if len(findings) > 1 and not result.error:
            message += f" (+{len(findings) - 1} more)"
        return Outcome(verdict, message, {
            "probe": prepared.probe, "target": target, "command": result.command,
            "metrics": metrics, "findings": findings, "parsed": result.parsed,
            "error": result.error})

    async def _sh(self, block: Block) -> Outcome:
        evaluator = self.evaluator()
        attrs = self.attrs(block)
        target = self._render(attrs.on, evaluator) if attrs.on else None
        graph = self.runner.graph
        if target is not None and graph is not None and target in graph.switches:
            # Typed into a CLI line by line: each value stays on its line (else nothing runs).
            script = "\n".join(render_cli_lines(block.body, evaluator,
                                                self._unknown if self.dry_run else None))
        else:
            script = self._render_shell(block.body.rstrip("\n"), evaluator)
        timeout = attrs.timeout if attrs.timeout is not None else 120.0
        where = target or "this machine"
        self._record(BlockCommand(command=script, on=where), block.step, block.id)
        switch = graph.switches.get(target) if target is not None and graph is not None \
            else None
        # Judged on what will run, values substituted: `sudo {{ action }}` is `sudo reboot`.
        hazards = judge(script, flavor=switch.flavor.value if switch is not None else None,
                        switch=switch is not None)
        dangerous = attrs.danger or bool(hazards)
        if dangerous:
            what = f"on {where} this runs:\n{script}" + \
                (f"\nwhich {describe(hazards)}" if hazards else "")
            refused = await self._typed_gate(block, evaluator, what, f"run on {where}: {script}",
                                             why=describe(hazards) if hazards else None)
            if refused is not None:
                return refused
        if self.dry_run:
            return Outcome(Verdict.SKIPPED, f"dry run: would run on {where}: {script}"
                            f"{self._unknown_note()}", variables=self._dry_captures(block))
        if dangerous:  # journaled before it goes: after a crash, a resume knows it may have run
            self._record(CommandSent(on=where), block.step, block.id)
        output, status, error = await self._run_script(block, target, script, timeout,
                                                       once=dangerous)
        if output:
            self._record(BlockOutput(output=output[-OUTPUT_KEEP:]), block.step, block.id)
        variables: dict[str, Any] = {}
        if attrs.capture is not None and output:
            match = re.search(attrs.capture, output, re.M)
            if match:
                variables = {k: v for k, v in match.groupdict().items() if v is not None}
        data = {"output": output[-OUTPUT_KEEP:], "status": status, "on": where}
        if error is not None:
            return Outcome(Verdict.ERROR, error, data, variables=variables)
        if status in attrs.ok_status:
            return Outcome(Verdict.OK, f"exit {status}", data, variables=variables)
        first = next((line for line in output.splitlines() if line.strip()), "")
        return Outcome(Verdict.FAIL, f"exit {status}: {first[:160]}", data, variables=variables)

    def _dry_captures(self, block: Block) -> dict[str, Any]:
        """The names a `capture` pattern would set, as unknowns (a dry run has no output)."""
        try:
            groups = re.compile(self.attrs(block).capture or "").groupindex
        except re.error:
            return {}
        why = f"captured from the output of {self._where(block)}, known when it runs"
        return {name: Unknown(name, why) for name in groups}

    async def _typed_gate(self, block: Block, evaluator: Evaluator, danger: str,
                          action: str, *, why: str | None = None) -> Outcome | None:
        """Ask the operator to type the block's `confirm` phrase (default: its id).

        None when they typed it; otherwise the block's outcome (not confirmed, nobody to ask,
        or a dry run's note of what it would ask before `action`).
        """
        attrs = self.attrs(block)
        phrase = self._render(attrs.confirm, evaluator) if attrs.confirm is not None \
            else block.id
        if self.dry_run:
            return Outcome(Verdict.SKIPPED, f"dry run: would ask to type {phrase!r}, then "
                            f"{action}{self._unknown_note()}", variables=self._dry_captures(block))
        earlier = self.may_have_run.get(block.id)
        first_phrase = phrase
        if earlier is not None:  # the interrupted run confirmed or sent it: say so, ask anew
            phrase = again_phrase(phrase)
            danger = f"{earlier.note()}.\n{danger}"
        prompt = self._announce_question(block, f"DANGER: {danger}\nType {phrase} to run it.")
        answer = await self.operator.confirm(block, prompt, phrase)
        if earlier is not None and answer is not None and answer.strip() == first_phrase:
            answer = None  # the answer the first run was given does not confirm a second send
        if answer is None:
            answer_hint = shlex.quote(f"{block.id}={phrase}")
            waiting = _waiting(f"{block.id} is dangerous{f' ({why})' if why else ''} and needs "
                               f"typed confirmation (headless: --answer {answer_hint})"
                               + (f"; {earlier.note()}" if earlier is not None else ""), phrase)
            if earlier is not None:
                waiting.data[MAY_HAVE_RUN] = True
            return waiting
        self._record(Decision(by="operator", typed=True,
                              answer="accepted" if answer.strip() == phrase else answer),
                     block.step, block.id)
        if answer.strip() != phrase:
            declined = self._declined(block, prompt, answer.strip(), phrase)
            if earlier is not None and declined.flow == WAIT:
                declined.data[MAY_HAVE_RUN] = True  # still not sent again: a resume says so
            return declined
        self.may_have_run.pop(block.id, None)
        return None

    async def _run_script(self, block: Block, target: str | None, script: str,
                          timeout: float, *, once: bool = False) -> tuple[str, int | None,
                                                                         str | None]:
        """(output, exit status, error) of a script on this machine, a node or a switch.

        Note: runs the script (a child process here, or through ssh / a CLI session); the
        output streams to the observers line by line. `once`: a dropped ssh connection is not
        retried (a dangerous command is sent at most once; the error says it may have run).
        """
        transports = self.runner.transports
        graph = self.runner.graph

        def on_line(line: str) -> None:
            self._stream(block, line)

        if target is None:
            result = await transports.local.run(["sh", "-c", script], timeout=timeout,
                                                on_line=on_line)
        elif graph is not None and target in graph.switches:
            switch = graph.switches[target]
            cli = CliTarget(ssh=SshTarget(name=switch.name, host=switch.mgmt or switch.name,
                                          credentials=switch.credentials),
                            flavor=switch.flavor.value)
            outputs = []
            for line in [c for c in script.split("\n") if c.strip()]:  # as rendered, checked
                reply = await transports.cli.run(cli, line, timeout=timeout,
                                                 retry_on_drop=False)
                outputs.append(reply.output)
                for text in reply.output.splitlines():
                    on_line(text)
                if not reply.ok:
                    return "\n".join(outputs), None, reply.error_message or "rejected"
            return "\n".join(outputs), 0, None
        else:
            node = graph.nodes.get(target) if graph is not None else None
            host = node.mgmt if node is not None and node.mgmt else target
            result = await transports.ssh.run(SshTarget(name=target, host=host),
                                              ["sh", "-c", script], timeout=timeout,
                                              on_line=on_line, retry_on_drop=not once)
        output = result.output
        if result.error is not None and result.error.value != "command":
            return output, result.exit_status, result.error_message or result.error.value
        return output, result.exit_status, None


YES = frozenset({"y", "yes", "ok", "go"})
"""What passes a yes / no gate."""
NO = frozenset({"n", "no"})
"""An explicit no: the gate's `on_no` step, else the session waits there (`not yet`)."""


def _retrieved(task: asyncio.Task[Any]) -> None:
    """A group probe's exception is read even when no block awaits it (dropped): asyncio
    would otherwise log it as never retrieved."""
    if not task.cancelled():
        task.exception()


def _one_line(text: str) -> str:
    return " ".join(line.strip() for line in text.strip().splitlines())


def _waiting(message: str, phrase: str | None) -> Outcome:
    """The outcome of a gate not passed: the session waits at it (see `WAIT`); `phrase` (or
    yes) is what passes it, as the resume command gives it."""
    return Outcome(Verdict.WAITING, message, {"answer": "no", "pass": phrase or "yes"},
                   flow=WAIT)
