"""`together=NAME` probe groups (one soak for several interval probes): the engine starts the
group's probes at once and journals each block as if it had run alone; lint refuses what
cannot start at once. The fake runner records each reading and each wait, so the overlap is
shown by the order of the readings (every first reading before any second one), not by time."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fabtui.journal.store import Journal
from fabtui.model.events import EventKind
from fabtui.model.probe import ProbeDef, ProbeResult, Verdict
from fabtui.model.runbook import Block
from fabtui.probes.runner import ProbeRunner
from fabtui.runbooks.engine import Engine, Observer, ScriptedOperator
from fabtui.runbooks.lint import lint
from fabtui.runbooks.reader import read_runbook

FRONT = """\
---
id: together-test
title: Together test
summary: one soak for several counter probes
symptoms: [test]
inputs:
  - name: soak_s
    default: 600
---

# Together test
"""

SOAK = """
## Soak {#soak}

```note {set="where='node001'"}
soak starts
```

```probe {id=first interval="{{ soak_s }}" TOGETHER}
probe: fake.counter
target: "{{ where }}"
```

```probe {id=second interval="{{ soak_s }}" TOGETHER set="seen=second.message"}
probe: fake.counter
target: node002
```

```probe {id=third interval="{{ soak_s }}" TOGETHER}
probe: fake.counter
target: node003
```

```check {id=judged}
ok: all read
```
"""

CATALOG = {
    "fake.counter": ProbeDef(name="fake.counter", description="reads a counter twice",
                             target="local", transport="local", samples=2),
    "fake.reset": ProbeDef(name="fake.reset", description="resets a counter",
                           target="local", transport="local", danger=True),
}


class SoakRunner(ProbeRunner):
    """Reads, lets the interval pass (yielding to the other tasks: no real time), reads again;
    every reading, wait and cancellation goes to `log`."""

    def __init__(self) -> None:
        super().__init__(None)
        self.log: list[str] = []
        self.hold: set[str] = set()
        """Targets whose soak does not end (until cancelled): a process killed meanwhile."""

    async def run(self, probe: ProbeDef, target_text: str | None,
                  params: Mapping[str, str] | None = None, on_line: Any = None, *,
                  confirmed: str | None = None) -> ProbeResult:
        started = datetime.now(UTC)
        try:
            self.log.append(f"read 1 {target_text}")
            if on_line is not None:
                on_line(f"counted on {target_text}")
            self.log.append(f"wait {probe.interval:g} {target_text}")
            for _ in range(10):  # the soak: the other probes' tasks run meanwhile, if any
                await asyncio.sleep(0)
            if target_text in self.hold:
                await asyncio.Event().wait()
            self.log.append(f"read 2 {target_text}")
        except asyncio.CancelledError:
            self.log.append(f"cancelled {target_text}")
            raise
        return ProbeResult(probe=probe.name, target=target_text or "", command="count",
                           started_at=started, ended_at=datetime.now(UTC), verdict=Verdict.OK)


class Watch(Observer):
    """What a screen sees: each block's start and the output lines streamed to it."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def block_started(self, event: Any, block: Block) -> None:
        self.seen.append(f"started {block.id}")

    def output_chunk(self, block: Block, text: str) -> None:
        self.seen.append(f"{block.id}: {text}")


def _engine(tmp_path: Path, body: str, runner: SoakRunner, name: str = "j",
            watch: Watch | None = None) -> Engine:
    path = tmp_path / "together-test.md"
    path.write_text(FRONT + body)
    return Engine(read_runbook(path), inputs={"soak_s": 600}, runner=runner, catalog=CATALOG,
                  journal=Journal(tmp_path / f"{name}.sqlite"), operator=ScriptedOperator(),
                  observers=[watch] if watch else [])


def _shape(engine: Engine) -> list[tuple[str, str | None, str]]:
    """The session's journal without times: (kind, block, what it says)."""
    assert engine.session is not None
    shape = []
    for event in engine.journal.events(engine.session):
        data = event.data.record() if hasattr(event.data, "record") else {}
        said = {k: v for k, v in data.items() if k not in ("at", "digest")}
        if event.kind is EventKind.BLOCK_FINISHED:
            said.pop("result", None)  # holds the probe's own times
        shape.append((event.kind.value, event.block, repr(sorted(said.items()))))
    return shape


def test_a_together_group_soaks_once_and_journals_each_block_as_alone(tmp_path: Path) -> None:
    grouped, watched = SoakRunner(), Watch()
    engine = _engine(tmp_path, SOAK.replace("TOGETHER", "together=soak"), grouped, "grouped",
                     watched)
    summary = asyncio.run(engine.run())
    assert summary.outcome is Verdict.OK
    firsts = [i for i, line in enumerate(grouped.log) if line.startswith("read 1")]
    seconds = [i for i, line in enumerate(grouped.log) if line.startswith("read 2")]
    assert len(firsts) == len(seconds) == 3
    assert max(firsts) < min(seconds), grouped.log  # one soak: all first readings, then all second
    assert grouped.log[:3] == ["read 1 node001", "wait 600 node001", "read 1 node002"]

    alone, watched_alone = SoakRunner(), Watch()
    reference = _engine(tmp_path, SOAK.replace("TOGETHER", ""), alone, "alone", watched_alone)
    asyncio.run(reference.run())
    assert alone.log[:3] == ["read 1 node001", "wait 600 node001", "read 2 node001"]
    # The journal is the one the blocks give alone: same events, same blocks, same order.
    assert _shape(engine) == _shape(reference)
    assert engine.values["seen"] == "fake.counter: ok"
    # A screen sees each block's output under it, as when the blocks run alone.
    assert watched.seen == watched_alone.seen
    assert "second: counted on node002" in watched.seen


def test_a_group_killed_during_its_soak_resumes_with_the_unjournaled_blocks(
        tmp_path: Path) -> None:
    """Killed after the first block was journaled: nothing of the others is, and a resume
    starts them again as a group (a new soak), each journaled once."""
    body = SOAK.replace("TOGETHER", "together=soak")
    runner = SoakRunner()
    runner.hold = {"node002", "node003"}
    engine = _engine(tmp_path, body, runner, "killed")

    async def until_first() -> None:
        while "first" not in engine.verdicts or engine.verdicts["first"] is Verdict.RUNNING:
            await engine.run_next()
        await engine.close()  # the process ends: its group's probes with it

    asyncio.run(until_first())
    assert "cancelled node002" in runner.log and "cancelled node003" in runner.log
    session = engine.session
    assert session is not None
    events = engine.journal.events(session)
    assert not [e for e in events if e.block in ("second", "third")]

    again = SoakRunner()
    resumed = _engine(tmp_path, body, again, "killed")
    resumed.restore(session, events)
    summary = asyncio.run(resumed.run())
    assert summary.outcome is Verdict.OK
    assert again.log == ["read 1 node002", "wait 600 node002", "read 1 node003",
                         "wait 600 node003", "read 2 node002", "read 2 node003"]
    finished = [e.block for e in resumed.journal.events(session)
                if e.kind is EventKind.BLOCK_FINISHED]
    assert finished.count("first") == finished.count("second") == 1


def test_a_cancelled_group_member_stops_the_whole_group(tmp_path: Path) -> None:
    runner = SoakRunner()
    engine = _engine(tmp_path, SOAK.replace("TOGETHER", "together=soak"), runner)

    async def cancel_in_the_soak() -> None:
        await engine.run_next()  # the note
        running = asyncio.create_task(engine.run_next())
        while not any(line.startswith("wait") for line in runner.log):
            await asyncio.sleep(0)
        assert engine.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        for _ in range(5):
            await asyncio.sleep(0)

    asyncio.run(cancel_in_the_soak())
    assert {"cancelled node001", "cancelled node002", "cancelled node003"} <= set(runner.log)
    assert not [line for line in runner.log if line.startswith("read 2")]
    assert engine.cancelled


def test_a_dry_run_starts_no_group(tmp_path: Path) -> None:
    runner = SoakRunner()
    path = tmp_path / "together-test.md"
    path.write_text(FRONT + SOAK.replace("TOGETHER", "together=soak"))
    engine = Engine(read_runbook(path), inputs={"soak_s": 600}, runner=runner, catalog=CATALOG,
                    journal=Journal(tmp_path / "dry.sqlite"), operator=ScriptedOperator(),
                    dry_run=True)
    asyncio.run(engine.run())
    assert runner.log == []
    assert engine.messages["second"].startswith("dry run: would run fake.counter on node002")


def _lint(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "together-test.md"
    path.write_text(FRONT + body)
    return [str(issue) for issue in lint(read_runbook(path), probes=CATALOG)
            if "no tests: declare" not in issue.message]


def test_lint_refuses_what_a_group_cannot_start_at_once(tmp_path: Path) -> None:
    assert _lint(tmp_path, SOAK.replace("TOGETHER", "together=soak")) == []
    uses_result = SOAK.replace("TOGETHER", "together=soak").replace(
        "target: node003", "target: \"{{ seen }}\"")
    assert any("third: uses 'seen', which another block of its together='soak' group "
               "defines" in issue for issue in _lint(tmp_path, uses_result))
    uses_interval = SOAK.replace("TOGETHER", "together=soak").replace(
        'id=third interval="{{ soak_s }}"', 'id=third interval="{{ first.message }}"')
    assert any("third: uses 'first'" in issue for issue in _lint(tmp_path, uses_interval))
    dangerous = SOAK.replace("TOGETHER", "together=soak").replace(
        "probe: fake.counter\ntarget: node003", "probe: fake.reset\ntarget: node003")
    assert any("third: a dangerous probe cannot run in a together group" in issue
               for issue in _lint(tmp_path, dangerous))
    lone = SOAK.replace("id=first interval=\"{{ soak_s }}\" TOGETHER",
                        "id=first interval=\"{{ soak_s }}\" together=alone").replace(
        "TOGETHER", "")
    assert any("warning: first: together='alone' groups nothing" in issue
               for issue in _lint(tmp_path, lone))
    on_sh = SOAK.replace("TOGETHER", "").replace("```note {set", "```note {together=soak set")
    assert any("unknown attribute 'together' for a note block" in issue
               for issue in _lint(tmp_path, on_sh))
