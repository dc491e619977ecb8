"""Gates that forgive (issue 37, Deliver 1): a "no" at a gate means "not yet", a typo is not a
no, and only an explicit abandon with a reason ends a session.

Engine and workspace: the session waits at the gate (journaled `session_waiting`, status
`waiting`, never finished), a resume asks the same gate again and does not run the blocks before
it twice; an explicit no still takes a gate's `on_no` step, a typo never does; a crash at any
point of the wait (the journal cut after each of its events) leaves a session that resumes.
Command line: exit 5 with the exact resume command, which works as printed; `runbook abandon`.
The app's side is in tests/test_tui_gates.py.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shlex
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.config import load_settings
from fabtui.errors import RequestError
from fabtui.model.events import EventKind, SessionWaiting
from fabtui.model.verdict import Verdict
from fabtui.runbooks.engine import ScriptedOperator
from fabtui.workspace import Workspace

FRONT = """\
---
id: {id}
title: Gate test
summary: gates that forgive
symptoms: [test]
tests:
  - name: nothing
    expect: {{outcome: ok}}
---

# Gate test
"""

DRAIN = """
## Drain

```sh {{id=drain}}
echo drained >> {counter}
```

```confirm {{id=drained}}
Is node003 drained?
```

## Shut

```sh {{id=shut danger=true confirm="leaf-g00-r3:Ethernet16"}}
echo shut >> {counter}
```

## Done

```note
done
```
"""


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config on the demo fabric with its own data folder and runbook folder."""
    monkeypatch.setenv("FABTUI_SIM_STATE", str(tmp_path / "state.json"))
    (tmp_path / "books").mkdir()
    path = tmp_path / "config.toml"
    path.write_text('data_dir = "data"\nrunbook_dirs = ["books"]\n')
    return path


def _book(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / "books" / f"{name}.md"
    path.write_text(FRONT.format(id=name) + body)
    return path


def _drive(ws: Workspace, name: str, answers: dict[str, str]) -> tuple[str, Verdict]:
    engine = ws.open_run(name, inputs={}, operator=ScriptedOperator(answers))
    summary = asyncio.run(ws.drive(engine))
    return summary.session, summary.outcome


def _resume(ws: Workspace, session: str, answers: dict[str, str]) -> Verdict:
    resumed = ws.resume(session, inputs={}, operator=ScriptedOperator(answers))
    return asyncio.run(ws.drive(resumed.engine)).outcome


# engine and workspace ---------------------------------------------------------------------------
def test_no_at_a_gate_waits_there_and_a_resume_asks_it_again(config: Path,
                                                              tmp_path: Path) -> None:
    counter = tmp_path / "count"
    _book(tmp_path, "drain-book", DRAIN.format(counter=counter))
    with Workspace(load_settings(config)) as ws:
        session, outcome = _drive(ws, "drain-book", {"drained": "no"})
        assert outcome is Verdict.WAITING
        info = ws.journal.session(session)
        assert info is not None and info[0].status == "waiting"
        events = ws.events(session)
        kinds = [e.kind for e in events]
        assert EventKind.SESSION_FINISHED not in kinds  # waiting is not an end
        waiting = events[-1].data
        assert isinstance(waiting, SessionWaiting)
        assert (waiting.gate, waiting.answer) == ("drained", "yes")
        assert "answered no to 'Is node003 drained?': not yet" in waiting.reason
        # "not yet" again: it still waits, and the drain did not run again
        assert _resume(ws, session, {"drained": "no"}) is Verdict.WAITING
        assert _resume(ws, session, {"drained": "yes",
                                     "shut": "leaf-g00-r3:Ethernet16"}) is Verdict.OK
        assert counter.read_text().splitlines() == ["drained", "shut"]
        ended = ws.events(session)[-1].data
        assert ended.record()["path"] == ["drain", "shut", "done"]


def test_a_mistyped_phrase_waits_and_never_runs_the_command(config: Path,
                                                            tmp_path: Path) -> None:
    counter = tmp_path / "count"
    _book(tmp_path, "drain-book", DRAIN.format(counter=counter))
    with Workspace(load_settings(config)) as ws:
        session, outcome = _drive(ws, "drain-book", {"drained": "yes",
                                                     "shut": "leaf-g00-r3:Ethernet61"})
        assert outcome is Verdict.WAITING
        waiting = ws.events(session)[-1].data
        assert isinstance(waiting, SessionWaiting) and waiting.gate == "shut"
        assert waiting.reason == ("typed 'leaf-g00-r3:Ethernet61', not "
                                  "'leaf-g00-r3:Ethernet16': not confirmed")
        assert waiting.answer == "leaf-g00-r3:Ethernet16"
        assert counter.read_text().splitlines() == ["drained"]
        assert _resume(ws, session, {"shut": "leaf-g00-r3:Ethernet16"}) is Verdict.OK
        assert counter.read_text().splitlines() == ["drained", "shut"]


def test_an_explicit_no_takes_on_no_but_a_typo_does_not(config: Path, tmp_path: Path) -> None:
    _book(tmp_path, "branchy", """
## Ask

```confirm {id=recabled on_no=record type="node003"}
Was node003 recabled?
```

## Fix

```note
fixed
```

## Record

```note
recorded
```
""")
    with Workspace(load_settings(config)) as ws:
        session, outcome = _drive(ws, "branchy", {"recabled": "no"})
        assert outcome is not Verdict.WAITING
        assert ws.events(session)[-1].data.record()["path"] == ["ask", "record"]
        session, outcome = _drive(ws, "branchy", {"recabled": "node033"})
        assert outcome is Verdict.WAITING  # a typo is asked again, not taken as a no


def test_abandon_needs_a_reason_and_is_the_only_end(config: Path, tmp_path: Path) -> None:
    _book(tmp_path, "drain-book", DRAIN.format(counter=tmp_path / "count"))
    with Workspace(load_settings(config)) as ws:
        session, _ = _drive(ws, "drain-book", {"drained": "no"})
        with pytest.raises(RequestError, match="abandon needs a reason"):
            ws.abandon(session, "  ")
        assert ws.abandon(session, "spare optic not on site") == session
        info = ws.journal.session(session)
        assert info is not None and info[0].status == "aborted"
        ended = ws.events(session)[-1].data.record()
        assert ended["outcome"] == "aborted" and ended["path"] == ["drain"]
        assert ended["reason"] == "abandoned by the operator: spare optic not on site"
        with pytest.raises(RequestError, match="has already finished"):
            ws.resume(session, inputs={}, operator=ScriptedOperator())
        with pytest.raises(RequestError, match="has already ended"):
            ws.abandon(session, "twice")


def test_a_crash_at_any_point_of_the_wait_leaves_a_session_that_resumes(
        config: Path, tmp_path: Path) -> None:
    """Each event is committed before the next (a SIGKILL can only cut the journal between
    two): cut after the gate's decision, after its `block_finished`, after `session_waiting`,
    the session resumes, asks the gate again and finishes, the drain never run twice."""
    counter = tmp_path / "count"
    _book(tmp_path, "drain-book", DRAIN.format(counter=counter))
    with Workspace(load_settings(config)) as ws:
        session, _ = _drive(ws, "drain-book", {"drained": "no"})
        journal = ws.journal.path
        events = ws.events(session)
    decided = next(e.seq for e in events if e.kind is EventKind.DECISION)
    cuts = list(range(decided, events[-1].seq + 1))
    assert len(cuts) == 3
    for cut in cuts:
        data = tmp_path / f"data-{cut}"
        shutil.copytree(journal.parent, data)
        with sqlite3.connect(data / journal.name) as db:
            db.execute("DELETE FROM events WHERE seq > ?", (cut,))
            if cut < cuts[-1]:  # the status is set after the last event
                db.execute("UPDATE sessions SET status = 'running'")
        counter.write_text("drained\n")
        settings = dataclasses.replace(load_settings(config), data_dir=data)
        with Workspace(settings) as ws:
            answers = {"drained": "yes", "shut": "leaf-g00-r3:Ethernet16"}
            assert _resume(ws, session, answers) is Verdict.OK, cut
        assert counter.read_text().splitlines() == ["drained", "shut"], cut


def _drain_book_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The drain book as a file the command line runs, on the test's own demo state: (its path,
    the counter file its commands append to)."""
    monkeypatch.setenv("FABTUI_SIM_STATE", str(tmp_path / "state.json"))
    counter = tmp_path / "count"
    path = tmp_path / "drain-book.md"
    path.write_text(FRONT.format(id="drain-book") + DRAIN.format(counter=counter))
    return path, counter


# the command line -------------------------------------------------------------------------------
def test_headless_a_no_exits_5_with_the_resume_command_that_works(
        run: Callable[..., Result], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, counter = _drain_book_file(tmp_path, monkeypatch)
    waited = run("runbook", "run", str(path), "--answer", "drained=no")
    assert waited.exit_code == 5, waited.output
    assert "drain-book: waiting (session " in waited.stdout
    assert "waiting at gate drained: answered no to 'Is node003 drained?': not yet" \
        in waited.stdout
    lines = waited.stderr.splitlines()
    assert "the session waits at gate drained; when ready, go on with:" in lines
    resume = lines[lines.index("the session waits at gate drained; when ready, go on "
                               "with:") + 1].strip()
    session = waited.stdout.split("(session ")[1].split(")")[0]
    assert resume == f"fabtui runbook resume {session} --answer drained=yes"
    assert f"or end it for good: fabtui runbook abandon {session} --reason WHY" in lines
    listed = run("runbook", "sessions")
    assert f"{session}" in listed.stdout and " waiting " in listed.stdout
    # a typo at the typed gate: waits again, the command printed names the phrase
    typo = run(*shlex.split(resume)[1:], "--answer", "shut=leaf-g00-r3:Ethernet61")
    assert typo.exit_code == 5, typo.output
    assert "typed 'leaf-g00-r3:Ethernet61', not 'leaf-g00-r3:Ethernet16'" in typo.stdout
    again = next(line.strip() for line in typo.stderr.splitlines()
                 if line.strip().startswith("fabtui runbook resume"))
    assert "--answer shut=leaf-g00-r3:Ethernet16" in again
    done = run(*shlex.split(again)[1:])
    assert done.exit_code == 0, done.output
    assert counter.read_text().splitlines() == ["drained", "shut"]


def test_runbook_abandon_on_the_command_line(run: Callable[..., Result], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path, _ = _drain_book_file(tmp_path, monkeypatch)
    waited = run("runbook", "run", str(path))
    assert waited.exit_code == 5
    assert "gate drained needs an answer (headless: --answer drained=yes)" in waited.stdout
    session = waited.stdout.split("(session ")[1].split(")")[0]
    missing = run("runbook", "abandon", session)
    assert missing.exit_code == 2 and "--reason" in missing.stderr
    done = run("runbook", "abandon", "last", "--reason", "wrong node")
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines() == [f"session {session} abandoned: wrong node",
                                        f"file it as a case with: fabtui cases file {session}"]
    refused = run("runbook", "resume", session)
    assert refused.exit_code == 2
    assert f"session {session} has already finished (aborted): `fabtui cases file " \
        f"{session}` files it as a case" in refused.stderr


def test_a_mistyped_gate_name_in_answer_is_refused_before_anything_runs(
        run: Callable[..., Result], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--answer draind=yes` was never read: the run waited at gate `drained` (exit 5) and the
    printed resume command carried the typo along. It is refused like a mistyped --input,
    naming the gate meant, and nothing runs or is journaled; the same on a resume."""
    path, counter = _drain_book_file(tmp_path, monkeypatch)
    typo = run("runbook", "run", str(path), "--answer", "draind=yes")
    assert typo.exit_code == 2, typo.output
    assert typo.stderr.strip() == \
        "fabtui: --answer: no gate or input draind in drain-book (did you mean drained?)"
    assert not counter.exists()
    assert "drain-book" not in run("runbook", "sessions").stdout
    unknown = run("runbook", "run", str(path), "--answer", "zzz=1")
    assert unknown.exit_code == 2
    assert "its gates and inputs: drained, shut" in unknown.stderr

    waited = run("runbook", "run", str(path), "--answer", "drained=no")
    assert waited.exit_code == 5
    session = waited.stdout.split("(session ")[1].split(")")[0]
    again = run("runbook", "resume", session, "--answer", "drainde=yes")
    assert again.exit_code == 2 and "(did you mean drained?)" in again.stderr
    assert counter.read_text().splitlines() == ["drained"]  # the resume ran nothing more
