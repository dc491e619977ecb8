"""Values typed into switch CLI sessions: one value, one line; absurd lengths refused; long lines
read in linear work. Through the real command line on the demo fabric, whose SONiC leaves are the
simulated switch driven by the real pexpect session transport."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from fabtui.model.transport import ErrorKind
from fabtui.sim.state import read_state
from fabtui.sim.transports import SimCliTransport, SimSshTransport
from fabtui.transports import cli_line
from fabtui.transports.cli_session import CliSession, CliTarget
from fabtui.transports.ssh import SshTarget

LEAF = "leaf-g00-r0"
BOOK = """\
---
id: leaf-test
title: Leaf test
summary: types a value into a leaf's CLI
symptoms: [test]
inputs:
  - name: val
    default: Ethernet0
{extra}---

# Leaf test

## On the leaf

```sh {{id=ask on={on} {attrs}}}
{body}
```
"""


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "state.json"
    monkeypatch.setenv("FABTUI_SIM_STATE", str(path))
    return path


@pytest.fixture
def book(tmp_path: Path) -> Callable[..., Path]:
    def write(body: str, *, on: str = LEAF, attrs: str = "", extra: str = "") -> Path:
        path = tmp_path / "leaf-test.md"
        path.write_text(BOOK.format(body=body, on=on, attrs=attrs, extra=extra))
        return path

    return write


def _events(kind: str) -> list[dict[str, Any]]:
    db = sqlite3.connect(Path(os.environ["XDG_DATA_HOME"]) / "fabtui" / "journal.sqlite")
    return [json.loads(raw) for (raw,) in
            db.execute("SELECT data FROM events WHERE kind = ? ORDER BY session, seq", (kind,))]


def _shut(state: Path) -> list[str]:
    running = read_state(state)
    assert running is not None
    return [s.endpoint for s in running.shut if s.until is None]


SHUT_THEN_VALUE = "sudo config interface shutdown Ethernet0\nshow interfaces counters -i {{ val }}"


def test_a_legal_value_runs_every_line(run: Callable[..., Result], book: Callable[..., Path],
                                       state: Path) -> None:
    """The control case: the first line does reach the switch (it shuts the port)."""
    path = book(SHUT_THEN_VALUE, attrs="danger=true")
    result = run("runbook", "run", str(path), "--answer", "ask=ask")
    assert result.exit_code == 0, result.output
    assert _shut(state) == [f"{LEAF}:Ethernet0"]
    assert "   $ sudo config interface shutdown Ethernet0 (on leaf-g00-r0)\n" \
        "   $ show interfaces counters -i Ethernet0 (on leaf-g00-r0)\n" in result.stdout


@pytest.mark.parametrize(("payload", "named"), [
    ("x\nshow lldp table\ny", "a newline (\\n) at character 2"),
    ("x\rshow lldp table", "a carriage return (\\r) at character 2"),
    ("x\r\nshow lldp table", "a carriage return (\\r) at character 2"),
    ("x\x00show lldp table", "a NUL (\\x00) at character 2"),
    ("Ethernet0\x1b[2Jshow lldp table", "an escape (ESC) (\\x1b) at character 10"),
    ("x\tshow", "a tab (\\t) at character 2"),
    ("x\x7f\x7fshow lldp table", "a DEL (\\x7f) at character 2"),
    ("x\x85show lldp table", "a next-line (NEL) (\\x85) at character 2"),
    ("x\u2028show lldp table", "a Unicode line separator (\\u2028) at character 2"),
    ("x\x0bshow lldp table", "a control character (\\x0b) at character 2"),
])
def test_a_control_character_in_a_value_sends_nothing(
        run: Callable[..., Result], book: Callable[..., Path], state: Path, payload: str,
        named: str) -> None:
    path = book(SHUT_THEN_VALUE, attrs="danger=true")
    result = run("runbook", "run", str(path), "--answer", "ask=ask", "--input", f"val={payload}")
    assert result.exit_code == 4, result.output
    assert f"[error] ask: {{{{ val }}}} holds {named}: a value typed into a switch CLI must stay " \
        "on its one line; refused before sending anything" in result.stdout
    assert "Capability codes" not in result.output and "LocalPort" not in result.output
    # Nothing was sent: not the first line either (the port is still up), no command journaled.
    assert _shut(state) == []
    assert _events("block_command") == [] and _events("block_output") == []
    assert "x; show lldp table" not in result.output


def test_a_dry_run_refuses_it_too_and_shows_real_lines(
        run: Callable[..., Result], book: Callable[..., Path], state: Path) -> None:
    path = book("show interfaces counters -i {{ val }}\nshow lldp table")
    shown = run("runbook", "run", str(path), "--dry-run")
    assert shown.exit_code == 0, shown.output
    assert "   $ show interfaces counters -i Ethernet0 (on leaf-g00-r0)\n" \
        "   $ show lldp table (on leaf-g00-r0)\n" in shown.stdout
    assert "; " not in shown.stdout.split("[skipped]")[0]
    refused = run("runbook", "run", str(path), "--dry-run", "--input", "val=x\nreboot")
    assert "{{ val }} holds a newline (\\n) at character 2" in refused.stdout
    assert "$ show lldp table" not in refused.stdout


def test_a_local_script_still_takes_a_newline_as_data_and_shows_controls_escaped(
        run: Callable[..., Result], book: Callable[..., Path], state: Path,
        tmp_path: Path) -> None:
    """Only CLI sessions type lines: a local `sh -c` gets the quoted value whole."""
    out = tmp_path / "out.txt"
    path = book(f"printf '%s' {{{{ val }}}} > {out}", on='""')
    value = "a\nb\x1b[31mred"
    result = run("runbook", "run", str(path), "--input", f"val={value}")
    assert result.exit_code == 0, result.output
    assert out.read_text() == value
    assert "\x1b" not in result.stdout and "b\\x1b[31mred" in result.stdout


def test_a_100k_value_is_refused_before_anything_is_sent(
        run: Callable[..., Result], book: Callable[..., Path], state: Path) -> None:
    path = book(SHUT_THEN_VALUE, attrs="danger=true timeout=10")
    result = run("runbook", "run", str(path), "--answer", "ask=ask", "--input",
                 f"val={'E' * 100_000}")
    assert result.exit_code == 4, result.output[:500]
    assert "[error] ask: {{ val }} is 100,000 bytes long; a line sent to a switch CLI may be " \
        f"at most {cli_line.MAX_LINE:,}; refused before sending anything" in result.stdout
    assert _shut(state) == [] and _events("block_command") == []
    assert len(result.output) < 5000  # the value is not printed back


def test_a_line_that_grows_too_long_from_several_values_is_refused(
        run: Callable[..., Result], book: Callable[..., Path], state: Path) -> None:
    path = book("show interfaces counters -i {{ val }}{{ val }}")
    result = run("runbook", "run", str(path), "--input", f"val={'E' * 3000}")
    assert result.exit_code == 4
    assert "line 1 of the command is 6,028 bytes long; a line sent to a switch CLI may be at " \
        "most 4,095; refused before sending anything" in result.stdout


def test_a_4k_line_reaches_the_switch_whole(run: Callable[..., Result],
                                            book: Callable[..., Path], state: Path) -> None:
    port = "E" * 4000
    path = book("show interfaces counters -i {{ val }}",
                attrs='capture="Invalid interface name (?P<got>\\\\S+)"')
    result = run("runbook", "run", str(path), "--input", f"val={port}")
    assert result.exit_code == 0, result.output[-2000:]
    finished = [e for e in _events("block_finished") if "got" in e["vars"]]
    assert [e["vars"]["got"] for e in finished] == [port]  # typed whole, read back whole
    assert _events("block_command")[0]["command"] == f"show interfaces counters -i {port}"
    output = _events("block_output")[0]["output"]
    assert not output.startswith("show interfaces")  # the long echo was recognised and removed
    shown = [line for line in result.stdout.splitlines() if line.startswith("   $ ")]
    assert shown == [f"   $ show interfaces counters -i {port[:132]}... (+3,868 characters) "
                     "(on leaf-g00-r0)"]


def test_prompt_matching_looks_at_bounded_bytes_per_read(state: Path,
                                                         run: Callable[..., Result]) -> None:
    """Linear by construction: however long the echoed line, each prompt search examines at
    most the end of the last line, and the reply comes back whole."""
    assert run("sim", "status").exit_code == 0  # the demo fabric is running
    session = CliSession(CliTarget(ssh=SshTarget(name=LEAF, host=LEAF), flavor="sonic"),
                         SimSshTransport(state))
    searched: list[int] = []

    class Recording:
        def __init__(self, pattern: re.Pattern[bytes]) -> None:
            self.pattern = pattern

        def search(self, data: bytes) -> re.Match[bytes] | None:
            searched.append(len(data))
            return self.pattern.search(data)

    session.connect()
    try:
        spy = Recording(session.flavor.prompt)
        # deliberately not an re.Pattern (which cannot be subclassed): a spy with its `search`
        session.flavor = dataclasses.replace(session.flavor, prompt=spy)  # type: ignore[arg-type]
        collector, error = session.run("show interfaces counters -i " + "E" * 4000, 30)
    finally:
        session.close()
    assert error is None
    assert collector.text().count("E" * 4000) == 2  # the echo and the reply, both whole
    assert searched and max(searched) <= 512


def test_the_transport_refuses_a_line_whoever_built_it(state: Path,
                                                       run: Callable[..., Result]) -> None:
    assert run("sim", "status").exit_code == 0
    transport = SimCliTransport(state)
    leaf = CliTarget(ssh=SshTarget(name=LEAF, host=LEAF), flavor="sonic")

    async def go() -> tuple[list[Any], dict[str, bool]]:
        try:
            results = [await transport.run(leaf, command, timeout=10)
                       for command in ("show version\nshow lldp table", "show " + "x" * 5000)]
            return results, transport.sessions()
        finally:
            await transport.close()

    (newline, long), sessions = asyncio.run(go())
    assert newline.error is ErrorKind.UNSUPPORTED and long.error is ErrorKind.UNSUPPORTED
    assert newline.error_message == f"{LEAF}: refused to send a command that holds a newline " \
        "(\\n) at character 13 (a CLI takes one line at a time)"
    assert long.error_message is not None and "is 5,005 bytes long" in long.error_message
    assert newline.output == "" and sessions == {LEAF: False}  # it never logged in


def test_probe_parameters_cannot_add_a_line(run: Callable[..., Result], state: Path) -> None:
    for param, message in [
            ("port=Ethernet0\nshow lldp table", "is not safe in a switch CLI command"),
            (f"port={'E' * 100_000}", "is 100,028 bytes long; a line sent to a switch CLI may "
             "be at most 4,095")]:
        result = run("probe", "run", "switch.port_counters", "--target", f"{LEAF}:Ethernet0",
                     "--param", param)
        assert result.exit_code == 2, result.output[:300]
        assert message in result.stderr and "LocalPort" not in result.output


def test_an_input_pattern_refuses_a_value_when_it_is_given(
        run: Callable[..., Result], book: Callable[..., Path], state: Path) -> None:
    path = book("show interfaces counters -i {{ val }}",
                extra="    pattern: 'Ethernet[0-9]+'\n")
    refused = run("runbook", "run", str(path), "--input", "val=x\nshow lldp table")
    assert refused.exit_code == 2
    assert "val: 'x\\nshow lldp table' does not match Ethernet[0-9]+" in refused.stderr
    assert run("runbook", "run", str(path), "--input", "val=Ethernet4").exit_code == 0


LINT_BOOK = """\
---
id: lint-leaf
title: Lint leaf
summary: free-form strings and switch lines
symptoms: [test]
inputs:
  - name: text
  - name: port
    type: port
  - name: name
    pattern: '[A-Za-z0-9_-]+'
  - name: mode
    choices: [brief, detail]
  - name: host
    type: node
tests:
  - name: t
    expect: {outcome: ok}
---

# Lint leaf

## Switch

```note {id=derive set="label=text.upper()"}
derived
```

```sh {id=sw on="{{ leaf_of(port) }}"}
show interfaces counters -i {{ port }}
show {{ mode }} {{ name }}
config interface description {{ port }} {{ text }}
show {{ label }}
```

```sh {id=node on="{{ host }}"}
echo {{ text }}
```

```sh {id=local}
echo {{ text }}
```
"""


def test_lint_warns_where_a_free_form_string_reaches_a_switch_line(
        run: Callable[..., Result], tmp_path: Path) -> None:
    path = tmp_path / "lint-leaf.md"
    path.write_text(LINT_BOOK)
    result = run("runbook", "lint", str(path))
    assert result.exit_code == 0, result.output
    warned = [line for line in result.output.splitlines() if "free-form" in line]
    text = LINT_BOOK.splitlines()
    line_of = {needle: next(i for i, t in enumerate(text, start=1) if t == needle)
               for needle in ("config interface description {{ port }} {{ text }}",
                              "show {{ label }}")}
    suffix = "(a string with no pattern or choices) is typed into a switch CLI line on " \
        "{{ leaf_of(port) }}: a newline or control character in it stops the run there; give " \
        "it a pattern, choices or a fabric type (port, switch, node)"
    assert warned == [
        f"{path}:{line_of['config interface description {{ port }} {{ text }}']}: warning: sw: "
        f"free-form input 'text' {suffix}",
        f"{path}:{line_of['show {{ label }}']}: warning: sw: free-form input 'label' {suffix}"]


def test_lint_refuses_a_pattern_that_is_no_regex(run: Callable[..., Result],
                                                 tmp_path: Path) -> None:
    path = tmp_path / "lint-leaf.md"
    path.write_text(LINT_BOOK.replace("'[A-Za-z0-9_-]+'", "'[unclosed'"))
    result = run("runbook", "lint", str(path))
    assert result.exit_code == 1, result.output
    assert f"{path}:11" in result.output and "pattern is not a valid regex" in result.output
