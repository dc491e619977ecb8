"""The workspace: one placement for every face, runs driven through its API, cancellation.

The engine tests here drive `Workspace` directly, as the TUI will: an operator that awaits its
answer, observers that see the run, and runs cancelled mid-block on the demo fabric (a script
here, on a simulated node, on a simulated switch, a probe) that are journaled as cancelled,
resume, and leave no process behind.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from fabtui.config import load_settings
from fabtui.errors import RequestError
from fabtui.model.events import BlockFinished, Decision, Event, EventKind
from fabtui.model.runbook import Block, InputSpec
from fabtui.model.verdict import Verdict
from fabtui.runbooks.engine import Observer, ScriptedOperator
from fabtui.sim.latency import LATENCY_VAR
from fabtui.workspace import Workspace
from tests.support.processes import descendants

FRONT = """\
---
id: {id}
title: Workspace test
inputs:
  - name: delay
    default: "30"
  - name: token
    secret: true
tests:
  - name: nothing
    expect: {{outcome: ok}}
---

# Workspace test
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """A config on the demo fabric with its own data folder and runbook folder."""
    (tmp_path / "books").mkdir()
    path = tmp_path / "config.toml"
    path.write_text('data_dir = "data"\nrunbook_dirs = ["books"]\n')
    return path


def _book(folder: Path, name: str, body: str) -> Path:
    path = folder / "books" / f"{name}.md"
    path.write_text(FRONT.format(id=name) + body)
    return path


async def _until(condition: Callable[[], object], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.005)


# one placement ----------------------------------------------------------------------------------
def test_topo_probe_and_runbook_agree_on_a_rank_file(run: Callable[..., Result], config: Path,
                                                      tmp_path: Path) -> None:
    (tmp_path / "ranks.txt").write_text("node002 slots=8\nnode001 slots=8\n")
    config.write_text(config.read_text() + 'ranks = "ranks.txt"\n')
    _book(tmp_path, "where-rank", """
## Where

```note
rank 0 runs on {{ node_of_rank(0) }}, rank 8 on {{ node_of_rank(8) }}
```
""")
    topo = run("--config", str(config), "topo", "path", "0", "8", "--json")
    assert topo.exit_code == 0, topo.output
    placed = json.loads(topo.stdout)
    assert (placed["src"]["node"], placed["dst"]["node"]) == ("node002", "node001")

    probe = run("--config", str(config), "probe", "run", "node.ibdev2netdev", "--target",
                "rank:0", "--json")
    assert probe.exit_code == 0, probe.output
    assert json.loads(probe.stdout)["target"] == "node002"
    nic = run("--config", str(config), "probe", "run", "nic.ibstat", "--target", "rank:8",
              "--json")
    assert nic.exit_code == 0, nic.output
    assert json.loads(nic.stdout)["target"] == f"node001:{placed['dst']['nics'][0]['nic']}"

    book = run("--config", str(config), "runbook", "run", "where-rank")
    assert book.exit_code == 0, book.output
    assert "note: rank 0 runs on node002, rank 8 on node001" in book.stdout


# driving the engine through the workspace ------------------------------------------------------
class AwaitingOperator:
    """Answers a gate only when someone (another task, as a TUI screen would) gives it."""

    def __init__(self) -> None:
        self.asked: asyncio.Queue[tuple[str, str | None]] = asyncio.Queue()
        self.answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.prompts: list[str] = []

    async def confirm(self, block: Block, prompt: str, phrase: str | None) -> str | None:
        self.prompts.append(prompt)
        await self.asked.put((block.id, phrase))
        return await self.answer

    async def ask(self, block: Block, prompt: str, spec: InputSpec) -> str | None:
        return None


class Recorder(Observer):
    def __init__(self) -> None:
        self.hooks: list[tuple[str, str | None]] = []
        self.lines: list[str] = []
        self.prompts: list[str] = []

    def run_started(self, event: Event) -> None:
        self.hooks.append(("run_started", None))

    def step_entered(self, event: Event) -> None:
        self.hooks.append(("step_entered", event.step))

    def block_started(self, event: Event, block: Block) -> None:
        self.hooks.append(("block_started", block.id))

    def output_chunk(self, block: Block, text: str) -> None:
        self.lines.append(f"{block.id}: {text}")

    def needs_answer(self, block: Block, prompt: str) -> None:
        self.hooks.append(("needs_answer", block.id))
        self.prompts.append(prompt)

    def block_finished(self, event: Event) -> None:
        assert isinstance(event.data, BlockFinished)
        self.hooks.append((f"block_finished:{event.data.verdict.value}", event.block))

    def run_finished(self, event: Event) -> None:
        self.hooks.append((f"run_finished:{event.kind.value}", None))


def test_an_awaiting_operator_answers_a_gate(config: Path, tmp_path: Path) -> None:
    asyncio.run(_awaiting_operator(config, tmp_path))


async def _awaiting_operator(config: Path, tmp_path: Path) -> None:
    _book(tmp_path, "gated", """
## Ask

```confirm {id=go type="drain {{ delay }}"}
Drain the node?
```

```sh {id=after}
echo drained; echo twice; echo "token {{ token }}"
```
""")
    operator = AwaitingOperator()
    seen = Recorder()
    with Workspace(load_settings(config)) as ws:
        engine = ws.open_run("gated", inputs={"delay": "7", "token": "s3cr3t-Value"},
                             operator=operator, observers=[seen])
        task = asyncio.create_task(ws.drive(engine))
        block, phrase = await asyncio.wait_for(operator.asked.get(), 20)
        assert (block, phrase) == ("go", "drain 7")
        assert not task.done()  # the run waits for the person
        operator.answer.set_result("drain 7")
        summary = await asyncio.wait_for(task, 30)
        decisions = [e.data for e in ws.events(engine.session or "")
                     if isinstance(e.data, Decision)]
    assert summary.outcome is Verdict.OK
    assert summary.blocks == {"go": Verdict.OK, "after": Verdict.OK}
    assert decisions[0].accepted and decisions[0].typed
    assert seen.hooks == [("run_started", None), ("step_entered", "ask"),
                          ("block_started", "go"), ("needs_answer", "go"),
                          ("block_finished:ok", "go"), ("block_started", "after"),
                          ("block_finished:ok", "after"),
                          ("run_finished:session_finished", None)]
    assert seen.lines == ["after: drained", "after: twice", "after: token ***"]


BLOCKS = {
    "sh-here": "```sh {id=work}\ntouch MARKER; sleep {{ delay }}\n```",
    "sh-on-node": "```sh {id=work on=node001}\nhostname\n```",
    "sh-on-switch": "```sh {id=work on=leaf-g00-r0}\nhostname\n```",
    "probe-node": "```probe {id=work}\nprobe: node.ibdev2netdev\ntarget: node001\n```",
    "probe-switch": "```probe {id=work}\nprobe: switch.lldp\ntarget: leaf-g00-r1\n```",
}

"""Cancelled once their process runs: a script here (its `sleep` a grandchild), a script on a
simulated node (one ssh-like child) and switch (a CLI session), probes on both."""


async def _running(before: set[int], marker: Path | None) -> None:
    """Until the block's process runs (for a script here: until its shell has forked `sleep`,
    so the cancellation does not land while the transport is still spawning it)."""
    await _until(lambda: descendants() - before)
    if marker is not None:
        await _until(marker.exists)
        await asyncio.sleep(0.1)


@pytest.mark.parametrize("kind", list(BLOCKS))
def test_a_run_cancelled_mid_block_is_journaled_resumes_and_leaves_nothing(
        kind: str, config: Path, tmp_path: Path) -> None:
    asyncio.run(_cancel_mid_block(kind, config, tmp_path))


async def _cancel_mid_block(kind: str, config: Path, tmp_path: Path) -> None:
    marker = tmp_path / "started" if kind == "sh-here" else None
    _book(tmp_path, "cancel-me", f"""
## Work

{BLOCKS[kind].replace("MARKER", str(marker))}

```note {{id=done}}
work said {{{{ work.verdict }}}}
```
""")
    before = descendants()
    with Workspace(load_settings(config)) as ws:
        ws.transports()  # start the demo fabric's state before counting processes
        engine = ws.open_run("cancel-me", inputs={}, operator=ScriptedOperator())
        # A simulated device answers in milliseconds: made slow (as a slow management network
        # is), its command is surely still running when the cancel lands.
        saved = os.environ.get(LATENCY_VAR)
        os.environ[LATENCY_VAR] = "30"
        try:
            task = asyncio.create_task(ws.drive(engine))
            await _running(before, marker)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        finally:
            os.environ.pop(LATENCY_VAR)
            if saved is not None:
                os.environ[LATENCY_VAR] = saved
        await _until(lambda: not descendants() - before, timeout=10)
        session = engine.session or ""
        assert engine.cancelled
        stored = ws.journal.session(session)
        assert stored is not None and stored[0].status == "cancelled"
        events = ws.events(session)
        assert [e.kind for e in events[-2:]] == [EventKind.BLOCK_FINISHED,
                                                 EventKind.SESSION_CANCELLED]
        assert isinstance(events[-2].data, BlockFinished)
        assert (events[-2].block, events[-2].data.verdict) == ("work", Verdict.CANCELLED)

        resumed = ws.resume(session, inputs={"delay": "0"}, operator=ScriptedOperator())
        summary = await asyncio.wait_for(ws.drive(resumed.engine), 60)
    assert summary.outcome is Verdict.OK, summary.text()
    assert summary.blocks["work"] is Verdict.OK and summary.path == ["work"]
    await _until(lambda: not descendants() - before, timeout=10)


def test_abort_during_a_running_block_ends_the_session_last(config: Path,
                                                            tmp_path: Path) -> None:
    asyncio.run(_abort_mid_block(config, tmp_path))


async def _abort_mid_block(config: Path, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    _book(tmp_path, "abort-me", "## Work\n\n" + BLOCKS["sh-here"].replace("MARKER", str(marker))
          + "\n")
    before = descendants()
    with Workspace(load_settings(config)) as ws:
        engine = ws.open_run("abort-me", inputs={}, operator=ScriptedOperator())
        task = asyncio.create_task(ws.drive(engine))
        await _running(before, marker)
        assert engine.abort("wrong node") is None  # the running block is stopped first
        summary = await asyncio.wait_for(task, 10)
        kinds = [e.kind for e in ws.events(engine.session or "")]
    assert summary.outcome is Verdict.ABORTED
    assert kinds[-1] is EventKind.SESSION_FINISHED
    assert EventKind.STEP_FINISHED not in kinds[kinds.index(EventKind.SESSION_FINISHED):]
    await _until(lambda: not descendants() - before, timeout=10)


# Ctrl-C on the command line --------------------------------------------------------------------
def test_ctrl_c_journals_the_run_as_cancelled_and_prints_how_to_resume(
        config: Path, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    _book(tmp_path, "interrupt-me", f"""
## Work

```sh {{id=slow}}
touch {marker}; sleep {{{{ delay }}}}
```
""")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    command = [sys.executable, "-m", "fabtui", "--config", str(config)]
    # As from a terminal: Ctrl-C at its default action, even where this test runs with it
    # ignored (a background job of a non-interactive shell ignores SIGINT, and so does every
    # process it starts, unless it resets it first).
    terminal = [sys.executable, "-c", "import os, signal, sys; "
                "signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])",
                sys.executable]
    proc = subprocess.Popen([*terminal, *command[1:], "runbook", "run", "interrupt-me",
                             "--input", "delay=30"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    resume = next(line for line in err.splitlines() if line.startswith("resume it with: "))
    argv = resume.removeprefix("resume it with: ").split()
    session = argv[argv.index("resume") + 1]
    assert f"session {session} is journaled as cancelled" in err
    assert "Aborted!" not in err
    db = sqlite3.connect(tmp_path / "data" / "journal.sqlite")
    assert db.execute("SELECT status FROM sessions WHERE id = ?", (session,)).fetchone() == \
        ("cancelled",)
    # no `sleep 30` survives its run
    assert subprocess.run(["pgrep", "-f", f"touch {marker}"], capture_output=True).stdout == b""

    again = subprocess.run([*command, *argv[argv.index("runbook"):], "--input", "delay=0"],
                           env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert "[ok] slow: exit 0" in again.stdout


# the journal's format ---------------------------------------------------------------------------
def test_events_journaled_as_plain_json_read_back_typed_and_unchanged(tmp_path: Path) -> None:
    from fabtui.journal.store import Journal

    # as fabtui wrote them before events were typed, one extra key included
    stored: list[tuple[str, str | None, str | None, dict[str, Any]]] = [
        ("session_started", None, None, {"runbook": "x", "version": 1, "digest": "d",
                                         "inputs": {"token": "***"}, "dry_run": False}),
        ("block_finished", "s", "b", {"verdict": "warn", "message": "m", "result": {"n": 1},
                                      "vars": {"n": 1}, "flow": None, "later": "kept"}),
        ("decision", "s", "g", {"by": "operator", "prompt": "go?", "answer": "accepted",
                                "typed": False}),
    ]
    journal = Journal(tmp_path / "j.sqlite")
    try:
        session = journal.start("x", "X", "x.md", "d", {})
        for kind, step, block, data in stored:
            journal.append(session, kind, step, block, data)
        events = journal.events(session)
    finally:
        journal.close()
    finished = events[1].data
    assert isinstance(finished, BlockFinished) and finished.verdict is Verdict.WARN
    assert isinstance(events[2].data, Decision) and events[2].data.accepted
    raw = sqlite3.connect(tmp_path / "j.sqlite").execute(
        "SELECT data FROM events ORDER BY seq").fetchall()
    assert [json.loads(r[0]) for r in raw] == [data for *_, data in stored]
    assert [e.data.record() for e in events] == [data for *_, data in stored]


def test_a_gate_cancelled_while_it_waits_is_asked_again_on_resume(config: Path,
                                                                  tmp_path: Path) -> None:
    asyncio.run(_gate_cancelled(config, tmp_path))


async def _gate_cancelled(config: Path, tmp_path: Path) -> None:
    _book(tmp_path, "gate-cancel", """
## Ask

```confirm {id=go}
Go on?
```

```note {id=after}
went on
```
""")
    with Workspace(load_settings(config)) as ws:
        operator = AwaitingOperator()
        engine = ws.open_run("gate-cancel", inputs={}, operator=operator)
        task = asyncio.create_task(ws.drive(engine))
        assert await asyncio.wait_for(operator.asked.get(), 20) == ("go", None)
        assert engine.cancel()  # the operator walked away: a TUI's stop key
        with pytest.raises(asyncio.CancelledError):
            await task
        session = engine.session or ""
        stored = ws.journal.session(session)
        assert stored is not None and stored[0].status == "cancelled"

        again = AwaitingOperator()
        resumed = ws.resume(session, inputs={}, operator=again)
        task = asyncio.create_task(ws.drive(resumed.engine))
        assert await asyncio.wait_for(again.asked.get(), 20) == ("go", None)
        again.answer.set_result("yes")
        summary = await asyncio.wait_for(task, 20)
    assert summary.outcome is Verdict.OK
    assert summary.blocks == {"go": Verdict.OK, "after": Verdict.OK}
    assert summary.path == ["ask"]


def test_an_interrupted_session_goes_on_with_the_secrets_in_hand(config: Path,
                                                                 tmp_path: Path) -> None:
    """The app's path: the operator steps away at a gate after typing a secret; the session
    goes on in the same process with the real secret (never `***` from the journal), while a
    resume from the journal alone lists the secret to ask again."""
    asyncio.run(_interrupted_with_secret(config, tmp_path))


async def _interrupted_with_secret(config: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    _book(tmp_path, "secret-gate", f"""
## Ask

```input {{id=pw name=pw secret=true}}
Password?
```

```confirm {{id=go}}
Go on?
```

```sh {{id=use}}
printf '%s' {{{{ pw }}}} > {out}
```
""")
    with Workspace(load_settings(config)) as ws:
        stopped = ws.open_run("secret-gate", inputs={"token": "t0ken-value"},
                              operator=ScriptedOperator({"pw": "s3cretValue"}))
        assert (await ws.drive(stopped)).outcome is Verdict.WAITING  # the gate had no answer
        session = stopped.session or ""
        needs = ws.resume_needs(session)
        assert [(a.name, a.block, a.needed) for a in needs] == [("token", None, False),
                                                                ("pw", "pw", True)]
        with pytest.raises(RequestError, match="secret pw was never stored"):
            ws.resume(session, inputs={}, operator=ScriptedOperator({"go": "yes"}))
        resumed = await ws.continue_interrupted(stopped,
                                                operator=ScriptedOperator({"go": "yes"}))
        summary = await ws.drive(resumed.engine)
    assert summary.outcome is Verdict.OK, summary
    assert out.read_text() == "s3cretValue"


def test_a_danger_prompt_never_shows_a_secret(config: Path, tmp_path: Path) -> None:
    """The typed-confirmation prompt quotes the command as it will run, secrets substituted:
    the operator and every observer get it masked."""

    async def main() -> None:
        _book(tmp_path, "danger-secret", """
## Go

```sh {id=wipe danger=true}
echo "{{ token }}" > /dev/null; rm -rf /nonexistent-fabtui-test-dir
```
""")
        operator, seen = AwaitingOperator(), Recorder()
        with Workspace(load_settings(config)) as ws:
            engine = ws.open_run("danger-secret", inputs={"token": "s3cr3t-Value"},
                                 operator=operator, observers=[seen])
            task = asyncio.create_task(ws.drive(engine))
            assert (await asyncio.wait_for(operator.asked.get(), 20))[0] == "wipe"
            operator.answer.set_result("wipe")
            await asyncio.wait_for(task, 30)
        prompts = operator.prompts + seen.prompts
        assert len(prompts) == 2 and all("DANGER" in p and "***" in p for p in prompts)
        assert not any("s3cr3t-Value" in p for p in prompts)

    asyncio.run(main())


def test_the_demo_fabric_answers_in_process_only_when_asked_and_alike(
        config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`FABTUI_SIM_IN_PROCESS` swaps the device client processes for answers in this process:
    no child process, the same reply from the same simulated node."""
    from fabtui.sim.inprocess import InProcessSimSshTransport
    from fabtui.transports.ssh import SshTarget
    from fabtui.workspace.simfabric import IN_PROCESS_VAR

    monkeypatch.setenv("FABTUI_SIM_TIME", "5000")
    ws = Workspace(load_settings(config))
    argv = ["ethtool", "-S", "mlx5_4"]

    def answer() -> tuple[str, str, int | None]:
        ssh = ws.transports().ssh
        result = asyncio.run(ssh.run(SshTarget("node003", "node003"), argv, timeout=20))
        return type(ssh).__name__, result.output, result.exit_status

    by_process = answer()
    monkeypatch.setenv(IN_PROCESS_VAR, "1")
    here = answer()
    assert by_process[0] == "SimSshTransport"
    assert here[0] == InProcessSimSshTransport.__name__
    assert by_process[2] == here[2] == 0
    assert "rx_prio3_pause" in here[1] and here[1] == by_process[1]


def test_run_to_gate_stops_after_the_block_that_asked(config: Path, tmp_path: Path) -> None:
    """The app's `g`: blocks run until one has asked the operator, then the run waits."""
    _book(tmp_path, "to-gate", """
## One

```note {id=a}
first
```

```confirm {id=go}
Go on?
```

```note {id=b}
after the gate
```

```confirm {id=again}
And again?
```
""")

    async def drive() -> tuple[list[str], list[str], bool]:
        with Workspace(load_settings(config)) as ws:
            engine = ws.open_run("to-gate", inputs={},
                                 operator=ScriptedOperator({"go": "yes", "again": "yes"}))
            await engine.run_to_gate()
            first = list(engine.verdicts)
            await engine.run_to_gate()
            second = list(engine.verdicts)
            await engine.run_to_gate()  # nothing asks any more: to the end
            return first, second, engine.finished

    first, second, finished = asyncio.run(drive())
    assert first == ["a", "go"]
    assert second == ["a", "go", "b", "again"]
    assert finished


def test_a_value_built_from_a_secret_is_never_replayed_masked(config: Path,
                                                              tmp_path: Path) -> None:
    """The journal masks a secret inside longer text too (`u:***`): after a resume, a command
    that uses such a value fails instead of running with the mask; the secret given again
    is used where it is named."""
    asyncio.run(_derived_secret(config, tmp_path))


async def _derived_secret(config: Path, tmp_path: Path) -> None:
    out, derived = tmp_path / "out.txt", tmp_path / "derived.txt"
    _book(tmp_path, "derived-secret", f"""
## Ask

```input {{id=pw name=pw secret=true}}
Password?
```

```note {{id=build set="auth='u:' + pw"}}
built
```

```confirm {{id=go}}
Go on?
```

```sh {{id=named}}
printf '%s' {{{{ pw }}}} > {out}
```

```sh {{id=built}}
printf '%s' {{{{ auth }}}} > {derived}
```
""")
    with Workspace(load_settings(config)) as ws:
        stopped = ws.open_run("derived-secret", inputs={"token": "t0ken-value"},
                              operator=ScriptedOperator({"pw": "s3cretValue"}))
        await ws.drive(stopped)
        resumed = ws.resume(stopped.session or "", inputs={"pw": "s3cretValue"},
                            operator=ScriptedOperator({"go": "yes"}))
        assert resumed.engine.values["pw"] == "s3cretValue"
        summary = await ws.drive(resumed.engine)
    assert out.read_text() == "s3cretValue"
    assert not derived.exists()  # never `u:***`
    assert summary.blocks["built"] is Verdict.ERROR


def test_the_resume_hint_names_the_secrets_a_resume_asks_again(config: Path,
                                                               tmp_path: Path) -> None:
    """The CLI's hint after Ctrl-C renders `ask_again`'s list: the secret input block that was
    answered is asked again as an input (never replayed), the gate still to come keeps its
    answer, and no secret value is printed."""
    from fabtui.cli.runbook import _resume_args

    _book(tmp_path, "hint-test", """
## Ask

```input {id=pw name=pw secret=true}
Password?
```

```confirm {id=go}
Go on?
```
""")

    async def stop_at_gate() -> list[str]:
        with Workspace(load_settings(config)) as ws:
            engine = ws.open_run("hint-test", inputs={},
                                 operator=ScriptedOperator({"pw": "s3cretValue"}))
            await ws.drive(engine)  # the gate has no answer: it stops there
            return _resume_args(engine, {"pw": "s3cretValue", "go": "yes"})

    assert asyncio.run(stop_at_gate()) == ["--input", "pw=<secret>", "--answer", "go=yes"]
