"""Danger where commands really run (issue "safety, round 3"): the gate judges the rendered
command, lint names every destructive form, `runbook test` runs nothing real, and a dangerous
command is sent at most once — not again on a dropped connection, not again on a resume
without a fresh, explicit confirmation."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fabtui.cli import cli
from tests.support.sshd_server import SshServer, require_sshd

FRONT = """\
---
id: {id}
title: Danger test
summary: runs what its inputs say
symptoms: [test]
inputs:
  - name: action
    default: hostname
    description: the command to run on the node
---

# Danger test
"""


def _book(folder: Path, body: str, name: str = "danger-test") -> Path:
    path = folder / f"{name}.md"
    path.write_text(FRONT.format(id=name) + body, encoding="utf-8")
    return path


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _events(kind: str) -> list[tuple[str | None, dict[str, object]]]:
    home = Path(os.environ["XDG_DATA_HOME"]) / "fabtui" / "journal.sqlite"
    with sqlite3.connect(home) as db:
        return [(block, json.loads(raw)) for block, raw in db.execute(
            "SELECT block, data FROM events WHERE kind = ? ORDER BY session, seq", (kind,))]


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sim_in_process: None) -> Path:
    path = tmp_path / "state.json"
    monkeypatch.setenv("FABTUI_SIM_STATE", str(path))
    return path


# --- H3: the gate judges the command as rendered -------------------------------------------
VALUE_DECIDES = """
## Act {#act}

```sh {id=act on=node001}
{{ action }}
```
"""


def test_a_value_that_renders_a_destructive_command_is_gated(tmp_path: Path,
                                                              state: Path) -> None:
    """`{{ action }}` with action=reboot is `reboot` on node001: it needs typed confirmation,
    and nothing is sent without it; with action=hostname it runs ungated."""
    book = _book(tmp_path, VALUE_DECIDES)
    refused = _run("runbook", "run", str(book), "--input", "action=reboot")
    assert refused.exit_code == 5, refused.output
    assert "act is dangerous (`reboot` reboots or powers off the machine) and needs typed " \
        "confirmation (headless: --answer act=act)" in refused.stdout
    assert _events("command_sent") == []
    harmless = _run("runbook", "run", str(book), "--input", "action=hostname")
    assert harmless.exit_code == 0, harmless.output
    assert "node001" in harmless.stdout


def test_a_dry_run_says_a_rendered_destructive_command_would_ask(tmp_path: Path,
                                                                  state: Path) -> None:
    book = _book(tmp_path, VALUE_DECIDES)
    result = _run("runbook", "run", str(book), "--input", "action=reboot", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "would ask to type 'act', then run on node001: reboot" in result.stdout


def test_a_switch_line_rendered_destructive_is_gated(tmp_path: Path, state: Path) -> None:
    """On the EOS spine, `{{ action }}` with action=reload is `reload`: gated by the switch's
    own CLI rules, nothing typed into the session without the phrase."""
    book = _book(tmp_path, """
## Spine {#spine}

```sh {id=spine on=spine-01}
{{ action }}
```
""")
    result = _run("runbook", "run", str(book), "--input", "action=reload")
    assert result.exit_code == 5, result.output
    assert "spine is dangerous (`reload` reloads (reboots) the switch) and needs typed " \
        "confirmation" in result.stdout
    assert _events("command_sent") == []


LINT_BOOK = """---
id: danger-lint
title: Danger lint
summary: destructive commands without danger=true
symptoms: [test]
inputs:
  - name: action
    type: choice
    choices: [reboot, status]
    default: reboot
    description: what
---

# Danger lint
"""
VARIANTS = [("quotes", "re''boot"), ("var-concat", "X=reb; ${X}oot"),
            ("ip-dev", "ip link set dev eth0 down"), ("rm-fr", "rm -fr /nonexistent"),
            ("systemctl-flag", "systemctl --no-block stop sshd"),
            ("mlxconfig-s", "mlxconfig -d mlx5_0 -y s SRIOV_EN=1"),
            ("template-cmd", "sudo {{ action }}"), ("sysrq", "echo b > /proc/sysrq-trigger"),
            ("eos-reload", "reload now")]


def test_lint_names_every_destructive_block(tmp_path: Path) -> None:
    """The review's danger-test runbook: lint found 0 errors; now one per block, each named,
    the template's with the value that makes it destructive."""
    body = "".join(f"\n## Step {bid} {{#{bid}}}\n\n```sh {{id={bid}"
                   f"{' on=spine-01' if bid == 'eos-reload' else ''} on_error=continue}}\n"
                   f"{cmd}\n```\n" for bid, cmd in VARIANTS)
    path = tmp_path / "danger-lint.md"
    path.write_text(LINT_BOOK + body, encoding="utf-8")
    result = _run("runbook", "lint", str(path))
    assert result.exit_code == 1
    errors = [line for line in result.stdout.splitlines() if ": error: " in line]
    assert len(errors) == len(VARIANTS), result.stdout
    for bid, _ in VARIANTS:
        assert any(f"error: {bid}: " in line and "mark the block danger=true" in line
                   for line in errors), bid
    assert any("template-cmd: `reboot` reboots or powers off the machine when action=reboot"
               in line for line in errors)


# --- H1: `runbook test` runs nothing on the machine that tests --------------------------------
UNTRUSTED = """---
id: harmless-check
title: Harmless check
summary: looks like a read-only check
symptoms: [test]
tests:
  - name: healthy fabric passes
    scenario: healthy
    answers: {{cleanup: cleanup}}
    expect:
      outcome: ok
---

# Harmless check

## Check {{#check}}

```sh {{id=look}}
touch {out}/PWNED_BY_RUNBOOK_TEST
```

```sh {{id=cleanup danger=true}}
touch {out}/PWNED_DANGER_AUTOCONFIRMED
```

```check {{id=c}}
ok: all good
```
"""


def test_runbook_test_runs_no_local_command_for_real(tmp_path: Path) -> None:
    """The review's untrusted runbook: its local blocks, one of them dangerous and confirmed by
    the runbook's own test answers, went to this machine. Now the simulated operator's machine
    answers them: nothing is created here."""
    folder = tmp_path / "rb"
    folder.mkdir()
    (folder / "harmless-check.md").write_text(UNTRUSTED.format(out=tmp_path), encoding="utf-8")
    config = tmp_path / "c.toml"
    config.write_text(f'runbook_dirs = ["{folder}"]\ndata_dir = "{tmp_path / "d"}"\n')
    result = _run("--config", str(config), "runbook", "test", "harmless-check", "--json")
    assert result.exit_code in (0, 1), result.output
    assert not (tmp_path / "PWNED_BY_RUNBOOK_TEST").exists()
    assert not (tmp_path / "PWNED_DANGER_AUTOCONFIRMED").exists()


def test_the_simulated_operator_machine_answers_local_commands(tmp_path: Path) -> None:
    """What a local block gets in a test: the scheduler's commands and the shell basics;
    anything else is not found there."""
    from fabtui.paths import demo_topology
    from fabtui.sim.inprocess import InProcessSimLocalTransport
    from fabtui.sim.scenario import find_scenario
    from fabtui.sim.state import fresh_state, write_state

    path = tmp_path / "state.json"
    write_state(path, fresh_state(demo_topology(), find_scenario("healthy"), []))
    local = InProcessSimLocalTransport(path)
    squeue = asyncio.run(local.run(["sh", "-c", "squeue -h; echo done"]))
    assert squeue.ok and squeue.output.endswith("done\n") and "4242" in squeue.output
    touch = asyncio.run(local.run(["touch", str(tmp_path / "x")]))
    assert touch.exit_status == 127 and "not found" in touch.stderr
    assert not (tmp_path / "x").exists()


# --- H2: at most once over a dropped connection (real sshd) ----------------------------------
@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    require_sshd()
    base = tmp_path_factory.mktemp("sshd")
    base.chmod(0o700)
    server = SshServer(base)
    yield server
    server.stop()


def test_a_dangerous_command_whose_connection_drops_is_not_sent_again(
        sshd: SshServer, tmp_path: Path) -> None:
    """The review's reproduction: the block drops its own ssh session (as a network restart
    does). It ran twice; now once, and the error says it may or may not have completed."""
    from fabtui.journal.store import Journal
    from fabtui.paths import demo_topology
    from fabtui.probes.runner import ProbeRunner, Transports
    from fabtui.runbooks.engine import Engine, ScriptedOperator
    from fabtui.runbooks.reader import read_runbook
    from fabtui.topology.graph import FabricGraph
    from fabtui.topology.loader import load_topology
    from fabtui.transports.ssh import SshTransport

    count = tmp_path / "count.log"
    ssh_config = tmp_path / "ssh_config"
    ssh_config.write_text(f"Host node001\n  HostName 127.0.0.1\n  Port {sshd.port}\n"
                          f"  User {sshd.user}\n")
    book = _book(tmp_path, f"""
## Restart {{#restart}}

```sh {{id=netrestart on=node001 danger=true}}
echo "sent at $(date +%s.%N)" >> {count}; kill -9 $PPID; sleep 3
```
""")
    runner = ProbeRunner(FabricGraph(load_topology(demo_topology()).topology),
                         Transports(ssh=SshTransport(sshd.options(config_file=ssh_config))))
    journal = Journal(tmp_path / "journal.sqlite")
    engine = Engine(read_runbook(book, book.name), inputs={"action": "x"}, runner=runner,
                    catalog={}, journal=journal,
                    operator=ScriptedOperator(answers={"netrestart": "netrestart"}))
    try:
        summary = asyncio.run(engine.run())
    finally:
        asyncio.run(runner.close())
        journal.close()
    assert len(count.read_text().splitlines()) == 1
    assert summary.outcome.value != "ok"
    assert "may or may not have completed" in engine.messages["netrestart"]


# --- M5: a resume does not re-send a confirmed command on the first answer ------------------------
def test_a_resume_says_a_confirmed_command_may_have_run_and_asks_again(tmp_path: Path) -> None:
    """Killed after the typed confirmation and the send: the resume says so, refuses the
    first run's answer, and sends it again only on `again PHRASE`."""
    count = tmp_path / "count"
    book = _book(tmp_path, f"""
## Shut {{#shut}}

```sh {{id=shut-port danger=true}}
echo sent >> {count}; [ -f {count}.flag ] || {{ touch {count}.flag; sleep 30; }}
```

## After {{#after}}

```note
done
```
""")
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg"),
           "FABTUI_SIM_STATE": str(tmp_path / "state.json")}
    fabtui = [sys.executable, "-m", "fabtui", "runbook"]
    proc = subprocess.Popen([*fabtui, "run", str(book), "--answer", "shut-port=shut-port"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (count.exists() and count.read_text()):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    db = sqlite3.connect(tmp_path / "xdg" / "fabtui" / "journal.sqlite")
    session = db.execute("SELECT id FROM sessions").fetchone()[0]
    kinds = [k for (k,) in db.execute("SELECT kind FROM events WHERE block = 'shut-port' "
                                      "ORDER BY seq")]
    assert kinds[-2:] == ["decision", "command_sent"]

    same = subprocess.run([*fabtui, "resume", session, "--answer", "shut-port=shut-port"],
                          env=env, capture_output=True, text=True, timeout=60)
    said = same.stdout + same.stderr
    assert same.returncode != 0, said
    assert "may already have run" in said and "again shut-port" in said
    assert count.read_text().splitlines() == ["sent"]

    again = subprocess.run([*fabtui, "resume", session, "--answer", "shut-port=again shut-port"],
                           env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stdout + again.stderr
    assert count.read_text().splitlines() == ["sent", "sent"]
