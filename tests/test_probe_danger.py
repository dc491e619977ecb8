"""A probe the catalog marks `danger` runs only after typed confirmation: on the command line,
in a runbook (the engine's gate), and lint flags a runbook that uses one without saying so."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fabtui.cli import cli
from fabtui.model.runbook import Block
from fabtui.model.verdict import Verdict
from fabtui.probes.danger import DangerRefused
from fabtui.workspace import Workspace

DANGEROUS = """\
[[probe]]
name = "nic.reset_port"
description = "bounce an HCA port (takes the link down for a moment)"
target = "nic"
transport = "ssh"
parser = "ibstat"
timeout = 20
danger = true
command.argv = ["ibstat", "{device}"]
params.device = { from = "nic.name", required = true, pattern = "[A-Za-z0-9_.-]+" }
"""

RUNBOOK = """\
---
id: bounce
title: Bounce a port
summary: resets an HCA port
symptoms: [test]
inputs:
  - name: nic
    default: node001:mlx5_0
---

# Bounce

## Reset

This takes the link down for a moment.

```probe {{id=reset{attrs}}}
probe: nic.reset_port
target: "{{{{ nic }}}}"
```
"""


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    probes = tmp_path / "probes"
    probes.mkdir()
    (probes / "site.toml").write_text(DANGEROUS)
    path = tmp_path / "fabtui.toml"
    path.write_text(f'probe_dirs = ["{probes}"]\n')
    monkeypatch.setenv("FABTUI_SIM_STATE", str(tmp_path / "state.json"))
    return path


def _run(config: Path, *args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--config", str(config), *args], input=stdin,
                              catch_exceptions=False)


def test_without_a_terminal_or_confirm_it_refuses(config: Path) -> None:
    result = _run(config, "probe", "run", "nic.reset_port", "--target", "node001:mlx5_0")
    assert result.exit_code == 2 and result.stdout == ""
    assert "probe nic.reset_port changes state on node001:mlx5_0" in result.stderr
    assert "--confirm node001:mlx5_0" in result.stderr


def test_confirm_must_match_the_target(config: Path) -> None:
    wrong = _run(config, "probe", "run", "nic.reset_port", "--target", "node001:mlx5_0",
                 "--confirm", "yes")
    assert wrong.exit_code == 2 and wrong.stdout == ""
    assert "--confirm 'yes' does not match" in wrong.stderr
    right = _run(config, "probe", "run", "nic.reset_port", "--target", "node001:mlx5_0",
                 "--confirm", "node001:mlx5_0", "--json")
    assert right.exit_code == 0, right.output
    assert json.loads(right.stdout)["verdict"] == "ok"


def test_at_a_terminal_the_target_is_typed(config: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("fabtui.cli.danger.interactive", lambda: True)
    typed = _run(config, "probe", "run", "nic.reset_port", "--target", "node001:mlx5_0",
                 stdin="node001:mlx5_0\n")
    assert typed.exit_code == 0, typed.output
    assert "DANGER: probe nic.reset_port changes state on node001:mlx5_0" in typed.stderr
    assert typed.stdout.startswith("nic.reset_port on node001:mlx5_0: OK")
    declined = _run(config, "probe", "run", "nic.reset_port", "--target", "node001:mlx5_0",
                    stdin="y\n")
    assert declined.exit_code == 2 and "not confirmed: typed 'y'" in declined.stderr
    assert "nic.reset_port on" not in declined.stdout


def test_a_sweep_of_a_dangerous_probe_confirms_the_set(config: Path) -> None:
    refused = _run(config, "probe", "run", "nic.reset_port", "--target", "node001:mlx5_[0-1]")
    assert refused.exit_code == 2 and "--confirm 'node001:mlx5_[0-1]'" in refused.stderr
    swept = _run(config, "probe", "run", "nic.reset_port", "--target", "node001:mlx5_[0-1]",
                 "--confirm", "node001:mlx5_[0-1]")
    assert swept.exit_code == 0 and swept.stdout.splitlines()[-1].endswith("2 targets: 2 ok")


def _probe_events() -> list[str]:
    home = Path(os.environ["XDG_DATA_HOME"]) / "fabtui" / "journal.sqlite"
    rows = sqlite3.connect(home).execute("SELECT kind, data FROM events ORDER BY session, seq")
    return [kind for kind, data in rows if kind == "block_output"]


def test_a_runbook_probe_block_goes_through_the_typed_gate(config: Path,
                                                          tmp_path: Path) -> None:
    book = tmp_path / "bounce.md"
    book.write_text(RUNBOOK.format(attrs=' danger=true confirm="{{ nic }}"'))
    unanswered = _run(config, "runbook", "run", str(book))
    assert unanswered.exit_code == 5, unanswered.output
    assert "reset is dangerous and needs typed confirmation (headless: --answer " \
           "reset=node001:mlx5_0)" in unanswered.stdout
    wrong = _run(config, "runbook", "run", str(book), "--answer", "reset=yes")
    assert wrong.exit_code == 5 and "typed 'yes', not 'node001:mlx5_0'" in wrong.stdout
    assert _probe_events() == []  # the probe never ran
    typed = _run(config, "runbook", "run", str(book), "--answer", "reset=node001:mlx5_0")
    assert typed.exit_code == 0, typed.output
    assert _probe_events() == ["block_output"]


def test_lint_flags_a_dangerous_probe_without_danger_true(config: Path,
                                                         tmp_path: Path) -> None:
    book = tmp_path / "bounce.md"
    book.write_text(RUNBOOK.format(attrs=""))
    flagged = _run(config, "runbook", "lint", str(book))
    assert flagged.exit_code == 1
    assert "bounce.md:17: error: reset: probe nic.reset_port changes state on its target" \
        in flagged.stdout, flagged.stdout
    book.write_text(RUNBOOK.format(attrs=' danger=true confirm="{{ nic }}"'))
    clean = _run(config, "runbook", "lint", str(book))
    assert "changes state" not in clean.stdout and clean.exit_code == 0, clean.stdout


def test_an_unmarked_block_of_a_dangerous_probe_is_still_gated(tmp_path: Path) -> None:
    """The catalog decides: lint asks for the mark, and the engine asks the operator anyway."""
    import asyncio

    from fabtui.journal.store import Journal
    from fabtui.model.runbook import Verdict
    from fabtui.probes.catalog import load_catalog
    from fabtui.probes.runner import ProbeRunner
    from fabtui.runbooks.engine import Engine, ScriptedOperator
    from fabtui.runbooks.reader import read_runbook

    probes = tmp_path / "probes"
    probes.mkdir()
    (probes / "site.toml").write_text(DANGEROUS)
    book = tmp_path / "bounce.md"
    book.write_text(RUNBOOK.format(attrs=""))
    runbook = read_runbook(book, "bounce.md")
    asked: list[str | None] = []

    class Operator(ScriptedOperator):
        async def confirm(self, block: Block, prompt: str, phrase: str | None) -> str | None:
            asked.append(phrase)
            return "no"

    journal = Journal(tmp_path / "journal.sqlite")
    try:
        engine = Engine(runbook, inputs={"nic": "node001:mlx5_0"}, runner=ProbeRunner(None),
                        catalog=load_catalog([probes]), journal=journal, operator=Operator())
        summary = asyncio.run(engine.run())
    finally:
        journal.close()
    assert asked == ["reset"]  # no confirm= on the block: its id is what is typed
    # "no" at the typed gate: the session waits there (resumable), nothing ran
    assert summary.blocks["reset"] is Verdict.WAITING and summary.outcome is Verdict.WAITING


# The core doors: the rule lives in the runner, so no face can forget it -------------------------
def _workspace(config: Path) -> Workspace:
    from fabtui.config import load_settings

    return Workspace(load_settings(config))


def test_the_workspace_refuses_a_dangerous_probe_without_its_phrase(config: Path) -> None:
    with _workspace(config) as ws:
        with pytest.raises(DangerRefused, match="not run without typed confirmation") as refused:
            asyncio.run(ws.run_probe("nic.reset_port", "node001:mlx5_0", {}))
        assert refused.value.phrase == "node001:mlx5_0"
        with pytest.raises(DangerRefused, match="'yes' does not match 'node001:mlx5_0'"):
            asyncio.run(ws.run_probe("nic.reset_port", "node001:mlx5_0", {}, confirmed="yes"))
        ran = asyncio.run(ws.run_probe("nic.reset_port", "node001:mlx5_0", {},
                                       confirmed=" node001:mlx5_0 "))
        assert ran.verdict is Verdict.OK and ran.target == "node001:mlx5_0"


async def _swept(ws: Workspace, text: str, *, confirmed: str | None = None,
                 named: str | None = None) -> list[str]:
    targets = ws.sweep_targets("nic.reset_port", text)
    assert targets is not None
    return [r.target async for r in ws.sweep("nic.reset_port", targets, {},
                                             confirmed=confirmed, named=named)]


def test_a_workspace_sweep_confirms_the_set_as_named(config: Path) -> None:
    with _workspace(config) as ws:
        with pytest.raises(DangerRefused):
            asyncio.run(_swept(ws, "node001:mlx5_[0-1]"))
        with pytest.raises(DangerRefused):  # one target's phrase does not confirm the set
            asyncio.run(_swept(ws, "node001:mlx5_[0-1]", confirmed="node001:mlx5_0",
                               named="node001:mlx5_[0-1]"))
        done = asyncio.run(_swept(ws, "node001:mlx5_[0-1]", confirmed="node001:mlx5_[0-1]",
                                  named="node001:mlx5_[0-1]"))
        assert sorted(done) == ["node001:mlx5_0", "node001:mlx5_1"]


def test_the_live_poller_never_runs_a_dangerous_probe(config: Path) -> None:
    from fabtui.views.poller import PlanItem
    from fabtui.views.updates import Results
    from fabtui.workspace.probesource import ProbeSource

    async def one_round(source: ProbeSource) -> list[str]:
        return [update.result.probe async for update in source.poll()
                if isinstance(update, Results)]

    with _workspace(config) as ws:
        plan = [PlanItem.parse("nic.reset_port@node00*:mlx5_0"),
                PlanItem.parse("nic.ethtool@node001:mlx5_0")]
        source = ProbeSource(ws, plan, 10.0)
        assert asyncio.run(one_round(source)) == ["nic.ethtool"]
        assert source.notes == ["nic.reset_port@node00*:mlx5_0: not polled: the probe changes "
                                "state on its target (danger); run it from the console"]
