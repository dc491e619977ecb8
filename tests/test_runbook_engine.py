"""The runbook engine, headless: flow, gates, quoting, secrets, dry run, journal, resume."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

FRONT = """\
---
id: {id}
title: Engine test
summary: exercises the engine
symptoms: [test]
inputs:
  - name: value
    default: plain
  - name: token
    secret: true
    default: hunter2-secret
tests:
  - name: nothing
    expect: {{outcome: ok}}
---

# Engine test
"""


@pytest.fixture
def book(tmp_path: Path) -> Callable[[str, str], Path]:
    def write(body: str, name: str = "engine-test") -> Path:
        path = tmp_path / f"{name}.md"
        path.write_text(FRONT.format(id=name) + body)
        return path

    return write


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    monkeypatch.setenv("FABTUI_SIM_STATE", str(tmp_path / "state.json"))
    return folder


def _journal(data: Path) -> list[tuple[str, str | None, dict[str, object]]]:
    home = Path(os.environ["XDG_DATA_HOME"]) / "fabtui" / "journal.sqlite"
    db = sqlite3.connect(home)
    return [(kind, block, json.loads(raw)) for kind, block, raw in
            db.execute("SELECT kind, block, data FROM events ORDER BY session, seq")]


def test_flow_checks_and_decide(run: Callable[..., Result], book: Callable[..., Path],
                                data: Path) -> None:
    path = book("""
## Measure

```sh {id=count capture="(?P<n>\\\\d+) items"}
echo "7 items"
```

```check {id=judge}
fail if int(n) > 5: too many ({{ n }})
ok: fine
```

```decide
judge.verdict == 'fail' -> fix
judge.verdict == 'warn' -> skipped-step
default -> end
```

## Skipped step

```note
never
```

## Fix

```note
fixing {{ n }}
```
""")
    result = run("runbook", "run", str(path), "--json")
    assert "{" in result.stdout, result.output
    summary = json.loads(result.stdout[result.stdout.index("{"):])
    assert result.exit_code == 1, result.output
    assert summary["path"] == ["measure", "fix"]
    assert summary["outcome"] == "fail"
    assert summary["vars"]["n"] == "7"
    assert "[fail] judge: too many (7)" in summary["findings"]


def test_hostile_input_reaches_the_command_only_as_data(run: Callable[..., Result],
                                                        book: Callable[..., Path], data: Path,
                                                        tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    path = book("""
## Echo

```sh {id=echo}
printf '%s' {{ value }} > OUT
```
""".replace("OUT", str(tmp_path / "out.txt")))
    hostile = f"; touch {marker} $(touch {marker}) `touch {marker}`\nrm -rf /nonexistent"
    result = run("runbook", "run", str(path), "--input", f"value={hostile}")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out.txt").read_text() == hostile
    assert not marker.exists()


def test_a_gate_without_an_answer_stops_loudly(run: Callable[..., Result],
                                               book: Callable[..., Path], data: Path) -> None:
    path = book("""
## Ask

```confirm {id=go}
Proceed?
```

## After

```note
after
```
""")
    result = run("runbook", "run", str(path))
    assert result.exit_code == 5  # waiting at the gate: its own exit code
    assert "gate go needs an answer (headless: --answer go=yes)" in result.stdout
    answered = run("runbook", "run", str(path), "--answer", "go=yes")
    assert answered.exit_code == 0 and "path: ask -> after" in answered.stdout
    declined = run("runbook", "run", str(path), "--answer", "go=no")
    assert declined.exit_code == 5 and "waiting at gate go: answered no" in declined.stdout
    assert "aborted" not in declined.output


def test_dangerous_commands_need_the_typed_phrase(run: Callable[..., Result],
                                                  book: Callable[..., Path], data: Path,
                                                  tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = book(f"""
## Take it down

```sh {{id=down danger=true confirm="{{{{ value }}}}"}}
touch {marker}
```
""")
    assert run("runbook", "run", str(path)).exit_code == 5
    assert run("runbook", "run", str(path), "--answer", "down=yes").exit_code == 5
    assert not marker.exists()
    assert run("runbook", "run", str(path), "--answer", "down=plain").exit_code == 0
    assert marker.exists()


def test_secrets_never_reach_the_journal(run: Callable[..., Result], book: Callable[..., Path],
                                         data: Path) -> None:
    path = book("""
## Use the token

```sh {id=use}
echo "auth with {{ token }}"; echo "password=letmein123"
```

```note
token was {{ token }}
```
""")
    result = run("runbook", "run", str(path))
    assert result.exit_code == 0
    home = Path(os.environ["XDG_DATA_HOME"]) / "fabtui" / "journal.sqlite"
    stored = b"".join(p.read_bytes() for p in home.parent.glob("journal.sqlite*"))
    assert b"hunter2-secret" not in stored and b"letmein123" not in stored
    assert "hunter2-secret" not in result.stdout
    notes = [d for kind, _, d in _journal(data) if kind == "note"]
    assert notes[0]["text"] == "token was ***"


def test_dry_run_runs_nothing(run: Callable[..., Result], book: Callable[..., Path], data: Path,
                              tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = book(f"""
## Act

```confirm {{id=sure}}
Sure?
```

```sh {{id=act}}
touch {marker}
```
""")
    result = run("runbook", "run", str(path), "--dry-run")
    assert result.exit_code == 0, result.output
    assert f"would run on this machine: touch {marker}" in result.stdout
    assert "would ask: Sure?" in result.stdout
    assert not marker.exists()


def test_a_dry_run_shows_what_would_be_sent(run: Callable[..., Result], data: Path) -> None:
    """Values that follow from the inputs and the topology are computed; the rest are named,
    with where they will come from."""
    result = run("runbook", "run", "optic-replacement", "--input",
                 "port=leaf-g00-r3:Ethernet16", "--dry-run")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "   $ sudo config interface shutdown Ethernet16 (on leaf-g00-r3)" in out
    assert "would ask to type 'leaf-g00-r3:Ethernet16', then run on leaf-g00-r3: " \
        "sudo config interface shutdown Ethernet16" in out
    assert "$ switch.fec on leaf-g00-r3\n" in out
    assert "$ perftest.ib_write_bw on node003:mlx5_3,node001:mlx5_3" in out
    assert "Is node003 drained" in out
    assert "note: Before: optic ‹serial_before› in leaf-g00-r3:Ethernet16" in out
    # each value only the run knows is named once, where it comes from; no template code
    assert "not rendered, known when it runs: ‹serial_before› set from the result of step 2 " \
        "block 'dom-before'; ‹part_before› set from" in out
    assert "would choose: drain-the-node or nothing-to-repair" in out
    for wrong in ("known once the run gets here", "NoneType", "''", "optic  in", "{{", "}}",
                  "blame.lanes"):
        assert wrong not in out, wrong
    assert "dry run: nothing was run or asked; the session is kept as a dry run, never `last`" \
        in result.stderr
    assert run("report", "last").exit_code == 2  # the dry run is no one's `last`
    assert " dry-run " in run("runbook", "sessions").stdout


def test_a_dry_run_names_captured_and_asked_values(run: Callable[..., Result],
                                                   book: Callable[..., Path],
                                                   data: Path) -> None:
    path = book("""
## Look

```sh {id=dom capture="serial (?P<serial>\\S+)"}
echo "serial X1"
```

```input {id=who name=who}
Who swaps it?
```

```sh {id=log if="serial != ''"}
echo {{ serial }} {{ who }} {{ value }}
```
""")
    result = run("runbook", "run", str(path), "--dry-run")
    assert result.exit_code == 0, result.output
    assert "$ echo ‹serial› ‹who› plain" in result.stdout
    assert "not rendered, known when it runs: ‹serial› captured from the output of step 1 " \
        "block 'dom'; ‹who› asked for at step 1 block 'who'" in result.stdout
    assert "{{" not in result.stdout


def test_lint_errors_refuse_the_run(run: Callable[..., Result], book: Callable[..., Path],
                                    data: Path) -> None:
    path = book("""
## Broken

```check
fail if missing_name > 1: x
ok: y
```
""")
    result = run("runbook", "run", str(path))
    assert result.exit_code == 2
    assert "'missing_name' is not defined" in result.stderr


def test_a_killed_session_resumes_after_its_last_finished_block(
        book: Callable[..., Path], tmp_path: Path) -> None:
    counter = tmp_path / "count"
    path = book(f"""
## First

```sh {{id=one}}
echo one >> {counter}
```

```sh {{id=two set="seen=two.output.strip()"}}
echo two >> {counter}; echo two-out
```

## Slow

```sh {{id=slow}}
echo slow >> {counter}; [ -f {counter}.flag ] || {{ touch {counter}.flag; sleep 30; }}
```

## Last

```note
after resume, two said {{{{ seen }}}}
```
""")
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg"),
           "FABTUI_SIM_STATE": str(tmp_path / "state.json")}
    proc = subprocess.Popen([sys.executable, "-m", "fabtui", "runbook", "run", str(path)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if counter.exists() and "slow" in counter.read_text():
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    journal = tmp_path / "xdg" / "fabtui" / "journal.sqlite"
    db = sqlite3.connect(journal)
    session, status = db.execute("SELECT id, status FROM sessions").fetchone()
    assert status == "running"
    finished = [row[0] for row in db.execute(
        "SELECT block FROM events WHERE kind = 'block_finished' ORDER BY seq")]
    assert finished == ["one", "two"]
    done = subprocess.run([sys.executable, "-m", "fabtui", "runbook", "resume", session],
                          env=env, capture_output=True, text=True, timeout=60,
                          input=None)
    # The slow step runs again (it never finished), then the run completes.
    assert done.returncode == 0, done.stdout + done.stderr
    assert "after resume, two said two-out" in done.stdout
    assert counter.read_text().splitlines() == ["one", "two", "slow", "slow"]
    assert db.execute("SELECT status FROM sessions").fetchone()[0] == "ok"


def test_operator_skip_start_at_and_notes_are_recorded(
        run: Callable[..., Result], book: Callable[..., Path], data: Path) -> None:
    path = book("""
## One

```note
first
```

## Two

```sh {id=risky}
exit 3
```

```note {id=after}
second
```
""")
    result = run("runbook", "run", str(path), "--start-at", "two", "--skip",
                 "risky=known bad, ticket 42")
    assert result.exit_code == 0, result.output
    assert "path: two" in result.stdout
    assert "[skipped] risky: skipped by the operator: known bad, ticket 42" in result.stdout
    decisions = [d for kind, _, d in _journal(data) if kind == "decision"]
    assert {"by": "operator", "jump": "two", "reason": "--start-at"} in decisions
    assert {"by": "operator", "skip": "known bad, ticket 42"} in decisions


async def _engine_api(path: Path, tmp: Path) -> tuple[list[str], str]:
    from fabtui.journal.store import Journal
    from fabtui.probes.runner import ProbeRunner
    from fabtui.runbooks.engine import Engine, ScriptedOperator
    from fabtui.runbooks.reader import read_runbook

    runbook = read_runbook(path)
    engine = Engine(runbook, inputs={"value": "v", "token": "t0ken-secret"},
                    runner=ProbeRunner(None), catalog={}, journal=Journal(tmp / "j.sqlite"),
                    operator=ScriptedOperator())
    seen = []
    while not engine.finished:
        block = engine.next_block()
        if block is not None:
            seen.append(block.id)
        if block is not None and block.id == "b":
            engine.note("looked at b")
            assert await engine.rerun("a") == engine.verdicts["a"]
        await engine.run_next()
    assert engine.summary is not None
    return seen, engine.summary.outcome.value


def test_the_engine_steps_one_block_at_a_time(book: Callable[..., Path],
                                              tmp_path: Path) -> None:
    import asyncio

    path = book("""
## One

```check {id=a}
ok: fine
```

```check {id=b}
warn if value == 'v': value is v
ok: fine
```
""")
    seen, outcome = asyncio.run(_engine_api(path, tmp_path))
    assert seen == ["a", "b"]
    assert outcome == "warn"


def test_a_run_stopped_at_a_gate_resumes_with_the_answer(
        run: Callable[..., Result], book: Callable[..., Path], data: Path,
        tmp_path: Path) -> None:
    counter = tmp_path / "count"
    path = book(f"""
## Before

```sh {{id=before}}
echo before >> {counter}
```

```confirm {{id=go}}
Go on?
```

## After

```sh {{id=after}}
echo after >> {counter}
```
""")
    stopped = run("runbook", "run", str(path))
    assert stopped.exit_code == 5
    session = stopped.stdout.split("(session ")[1].split(")")[0]
    resumed = run("runbook", "resume", session, "--answer", "go=yes")
    assert resumed.exit_code == 0, resumed.output
    assert "path: before -> after" in resumed.stdout
    # `token` (secret, with a default) was never stored: the resume says it uses the default
    assert "secret input token was never stored: resuming with its default" in resumed.output
    assert counter.read_text().splitlines() == ["before", "after"]
    again = run("runbook", "resume", session)
    assert again.exit_code == 2 and "has already finished (ok)" in again.stderr


def test_a_secret_input_block_is_asked_again_on_resume_never_replayed_as_the_mask(
        run: Callable[..., Result], book: Callable[..., Path], data: Path,
        tmp_path: Path) -> None:
    """The journal holds `***` for a secret: a resume must not type `***` into a command."""
    out = tmp_path / "out.txt"
    path = book(f"""
## Ask

```input {{id=pw name=pw secret=true}}
The switch password?
```

## Gate

```confirm {{id=go}}
Proceed?
```

## Use

```sh {{id=use}}
printf '%s' {{{{ pw }}}} > {out}
```
""")
    stopped = run("runbook", "run", str(path), "--answer", "pw=s3cretValue")
    assert stopped.exit_code == 5, stopped.output
    session = stopped.stdout.split("(session ")[1].split(")")[0]
    refused = run("runbook", "resume", session, "--answer", "go=yes")
    assert refused.exit_code == 2 and not out.exists()
    assert f"session {session}: secret pw was never stored: give --input pw=..." \
        in refused.stderr
    done = run("runbook", "resume", "last", "--answer", "go=yes", "--input", "pw=s3cretValue")
    assert done.exit_code == 0, done.output
    assert out.read_text() == "s3cretValue"
    assert "s3cretValue" not in done.output  # the echoed command still masks it
    assert all("s3cretValue" not in json.dumps(e) for e in _journal(data))


def test_configured_secret_patterns_are_masked(run: Callable[..., Result],
                                               book: Callable[..., Path], data: Path,
                                               write: Callable[[str, str], Path],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    config = write("fabtui.toml", 'redact = ["corp-[A-Za-z0-9]{8}"]\n')
    path = book("""
## Print

```sh {id=p}
echo "token corp-AbCd1234 here"
```
""")
    result = run("--config", str(config), "runbook", "run", str(path))
    assert result.exit_code == 0, result.output
    assert "corp-AbCd1234" not in result.stdout
    outputs = [d for kind, _, d in _journal(data) if kind == "block_output"]
    assert outputs[0]["output"] == "token *** here\n"
    bad = write("bad.toml", 'redact = ["corp-[unclosed"]\n')
    refused = run("--config", str(bad), "runbook", "list")
    assert refused.exit_code == 2 and "bad.toml:1: redact: 'corp-[unclosed' is not a valid" \
        in refused.stderr


def test_resuming_twice_at_gates_that_open_steps_keeps_the_path_clean(
        run: Callable[..., Result], book: Callable[..., Path], data: Path) -> None:
    path = book("""
## First

```note
one
```

## Gate one

```confirm {id=g1}
First?
```

## Gate two

```confirm {id=g2}
Second?
```
""")
    stopped = run("runbook", "run", str(path))
    session = stopped.stdout.split("(session ")[1].split(")")[0]
    assert run("runbook", "resume", session, "--answer", "g1=yes").exit_code == 5
    done = run("runbook", "resume", session, "--answer", "g2=yes")
    assert done.exit_code == 0, done.output
    assert "path: first -> gate-one -> gate-two\n" in done.stdout


SECRET_BOOK = """
## Use

```input {id=pw name=pw secret=true default=An0therSecr3t}
Password?
```

```sh {id=use capture="got (?P<echoed>\\\\S+)"}
echo "got {{ token }}"; echo "pw {{ pw }}"
```

```check {id=c}
warn if token: the secret is {{ token }} and {{ pw }}
ok: fine
```

```note
note {{ echoed }}
```

```sh {id=boom}
echo "{{ token }}"; exit 3
```
"""


def test_no_output_path_shows_a_secret(run: Callable[..., Result], book: Callable[..., Path],
                                       data: Path) -> None:
    """Progress, summary, --json, errors, journal bytes and its exports: all masked."""
    secrets = ("S3cr3tP@ss", "An0therSecr3t")
    path = book(SECRET_BOOK)
    seen = []
    for extra in ((), ("--json",), ("--dry-run",)):
        result = run("runbook", "run", str(path), "--input", f"token={secrets[0]}", *extra)
        assert result.exit_code == 0, result.output
        seen += [result.stdout, result.stderr]
    summary = json.loads(seen[2][seen[2].index("{\n"):])
    assert summary["vars"]["pw"] == "***" and summary["vars"]["echoed"] == "***"
    assert "[warn] c: the secret is *** and ***" in summary["findings"]
    assert "[warn] c: the secret is *** and ***" in seen[0].split("\n\n")[-1]
    assert "[fail] boom: exit 3: ***" in seen[0].split("\n\n")[-1]
    session = summary["session"]
    for command in (("runbook", "journal", session), ("runbook", "journal", session, "--json"),
                    ("runbook", "sessions"), ("runbook", "sessions", "--json")):
        exported = run(*command)
        assert exported.exit_code == 0, exported.output
        seen += [exported.stdout, exported.stderr]
    # an input that fails its type check is quoted in the error: masked there too
    typed = book(SECRET_BOOK.replace("secret=true", "secret=true type=int"), "typed")
    refused = run("runbook", "run", str(typed), "--input", f"token={secrets[0]}")
    seen += [refused.stdout, refused.stderr]
    assert "pw: " in refused.stdout and "***" in refused.stdout
    home = Path(os.environ["XDG_DATA_HOME"]) / "fabtui"
    stored = b"".join(p.read_bytes() for p in home.glob("journal.sqlite*"))
    assert stored and b"***" in stored
    for secret in secrets:
        assert secret.encode() not in stored
        for text in seen:
            assert secret not in text, text


def test_show_and_lint_print_json_and_show_masks_secret_defaults(
        run: Callable[..., Result], book: Callable[..., Path], data: Path) -> None:
    path = book(SECRET_BOOK)
    shown = run("runbook", "show", str(path), "--json")
    assert shown.exit_code == 0, shown.output
    data_ = json.loads(shown.stdout)
    assert data_["meta"]["id"] == "engine-test"
    token = next(i for i in data_["meta"]["inputs"] if i["name"] == "token")
    assert token["default"] == "***"
    blocks = {b["id"]: b for s in data_["steps"] for b in s["blocks"]}
    assert blocks["pw"]["attrs"]["default"] == "***"
    text = run("runbook", "show", str(path))
    for output in (shown.stdout, text.stdout):
        assert "hunter2-secret" not in output and "An0therSecr3t" not in output
    assert "input token (string, default ***)" in text.stdout
    linted = run("runbook", "lint", str(path), "--json")
    report = json.loads(linted.stdout)
    assert report["files"] == 1 and report["errors"] == 0
    assert linted.exit_code == 0
    broken = book("\n## Broken\n\n```check\nfail if missing_name > 1: x\n```\n", "broken")
    failed = run("runbook", "lint", str(broken), "--json")
    report = json.loads(failed.stdout)
    assert failed.exit_code == 1 and report["errors"] >= 1
    assert any("missing_name" in i["message"] and i["line"] for i in report["issues"])


def test_a_numeric_secret_and_a_danger_prompt_that_quotes_a_secret_are_masked(
        run: Callable[..., Result], book: Callable[..., Path], data: Path) -> None:
    """A PIN typed as an int is as secret as a string; the typed-confirmation prompt that shows
    the command (with the secret substituted) is masked before anyone sees it."""
    path = book("""
## Use

```input {id=ask-pin name=pin type=int secret=true}
PIN?
```

```sh {id=wipe danger=true}
echo "{{ token }} {{ pin }}" > /dev/null; rm -rf /nonexistent-fabtui-test-dir
```
""")
    result = run("runbook", "run", str(path), "--input", "token=S3cr3tP@ss",
                 "--answer", "pin=987654", "--answer", "wipe=wipe", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout[result.stdout.index("{\n"):])
    assert summary["vars"]["pin"] == "***"
    stored = b"".join(p.read_bytes() for p in
                      (Path(os.environ["XDG_DATA_HOME"]) / "fabtui").glob("journal.sqlite*"))
    for secret in ("987654", "S3cr3tP@ss"):
        assert secret not in result.stdout and secret not in result.stderr
        assert secret.encode() not in stored


def test_a_probe_interval_may_be_a_template(run: Callable[..., Result],
                                            book: Callable[..., Path], data: Path) -> None:
    """A soak length from an input or a variable: rendered when the block runs; what does not
    render to a positive number stops the block with the reason."""
    path = book("""
## Soak

```note {set="soak='30'; bad='a while'"}
soak
```

```probe {id=good interval="{{ soak }}"}
probe: switch.fec
target: leaf-g00-r3
```

```probe {id=broken interval="{{ bad }}"}
probe: switch.fec
target: leaf-g00-r3
```
""")
    result = run("runbook", "run", str(path))
    assert "[ok] good: switch.fec" in result.stdout, result.output
    assert "[error] broken: interval='{{ bad }}' is 'a while', not a number of seconds" \
        in result.stdout, result.output


def test_samples_2_reads_a_one_reading_probe_again_after_the_interval(
        run: Callable[..., Result], book: Callable[..., Path], data: Path) -> None:
    """A NIC's counters cleared before a soak are read again at its end: `samples=2` reads
    `nic.mlxlink` (one reading in the catalog) twice, `interval` apart on the devices' clock;
    the judged reading is the second. Anything but 1 or 2 is a lint error on its line."""
    path = book("""
## Soak

```sh {id=clear on=node003}
mlxlink -d mlx5_3 --pc
```

```probe {id=soaked samples=2 interval=300}
probe: nic.mlxlink
target: node003:mlx5_3
```

```note {set="since=soaked.parsed.counters.time_since_last_clear_min"}
read
```
""")
    result = run("runbook", "run", str(path), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout[result.stdout.index("{\n"):])
    assert summary["vars"]["since"] == 5.0, summary["vars"]  # counted from the clear
    broken = book("""
## Soak

```probe {id=thrice samples=3}
probe: nic.mlxlink
target: node003:mlx5_3
```
""")
    linted = run("runbook", "lint", str(broken))
    assert linted.exit_code == 1
    assert re.search(r"engine-test\.md:\d+: error: thrice: samples='3': a probe reads once or "
                     r"twice",
                     linted.stdout), linted.output


def test_a_failing_set_names_its_first_failing_assignment(run: Callable[..., Result],
                                                          book: Callable[..., Path],
                                                          data: Path) -> None:
    path = book("""
## Set

```note {id=first set="a=value.splitlines(); b=a"}
go
```
""")
    result = run("runbook", "run", str(path))
    assert "set a: no method 'splitlines' on a str" in result.stdout, result.output
    assert "set b:" not in result.stdout


@pytest.mark.parametrize("keep", [None, 2048])
def test_a_result_too_big_for_the_journal_is_kept_without_its_parsed_tree(
        run: Callable[..., Result], book: Callable[..., Path], data: Path,
        monkeypatch: pytest.MonkeyPatch, keep: int | None) -> None:
    """The journal keeps a probe's verdict and metrics whatever its size; the parsed tree only
    while the whole result fits in RESULT_KEEP."""
    from fabtui.runbooks import engine
    if keep is not None:
        monkeypatch.setattr(engine, "RESULT_KEEP", keep)
    path = book("""
## Read

```probe {id=fec}
probe: switch.fec
target: leaf-g00-r3
```
""")
    result = run("runbook", "run", str(path))
    assert "[ok] fec: switch.fec" in result.stdout, result.output
    finished = [d for kind, block, d in _journal(data) if kind == "block_finished"
                and block == "fec"]
    assert len(finished) == 1
    stored = finished[0]["result"]
    assert isinstance(stored, dict) and stored["verdict"] == "ok" and stored["metrics"]
    assert ("parsed" in stored) is (keep is None)
