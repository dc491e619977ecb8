"""The domain core never loads Textual: headless runs, CI and scripts stay light.

Two checks, because each misses what the other catches: the static scan sees every import
statement (even in code paths no test runs), the subprocess sees what importing really drags in
(including imports done by dependencies).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import fabtui

PACKAGE = Path(fabtui.__file__).parent
UI_ONLY = ("textual", "rich")


def _modules_outside_tui() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if "tui" not in p.relative_to(PACKAGE).parts[:1]]


def test_no_module_outside_tui_imports_textual_or_rich() -> None:
    offenders = []
    for path in _modules_outside_tui():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                names = [node.module] if node.module and node.level == 0 else []
            for name in names:
                if name.split(".")[0] in UI_ONLY:
                    offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: imports {name}")
    assert offenders == []


def test_importing_the_headless_product_loads_no_ui_library() -> None:
    modules = sorted(
        "fabtui." + ".".join(p.relative_to(PACKAGE).with_suffix("").parts)
        for p in _modules_outside_tui() if p.name != "__main__.py"
    )
    code = ("import sys\n"
            f"for name in {modules!r}:\n"
            "    __import__(name.removesuffix('.__init__'))\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {UI_ONLY!r}))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "[]"


def test_subcommands_import_on_their_own_and_load_only_when_used() -> None:
    """No import cycle between the root group and its subcommands (each module imports alone,
    in any order), and a command loads only what it uses: `fabtui parse` never imports the
    runbook engine or the simulator; the runbook linter never imports the simulator."""
    from fabtui.cli.app import SUBCOMMANDS

    for subcommand in SUBCOMMANDS.values():
        module = subcommand.target.partition(":")[0]
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
    code = ("import sys\n"
            "from click.testing import CliRunner\n"
            "from fabtui.cli import cli\n"
            "result = CliRunner().invoke(cli, ['parse', '--list'])\n"
            "assert result.exit_code == 0, result.output\n"
            "heavy = ('fabtui.sim', 'fabtui.runbooks', 'fabtui.cli.runbook', 'fabtui.workspace')\n"
            "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
            "import fabtui.runbooks.lint\n"
            "print(sorted(m for m in sys.modules if m.startswith('fabtui.sim')))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.split() == ["[]", "[]"]


def _loaded_after(args: list[str], prefixes: tuple[str, ...]) -> list[str]:
    """The modules (under `prefixes`) that running `fabtui ARGS` imported, in a fresh process."""
    code = ("import sys\n"
            "from fabtui.cli import main\n"
            f"sys.argv = ['fabtui', *{args!r}]\n"
            "try:\n"
            "    main()\n"
            "except SystemExit:\n"
            "    pass\n"
            "print('loaded:', *sorted(m for m in sys.modules\n"
            f"                        if m.startswith({prefixes!r})), file=sys.stderr)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    line = next(line for line in result.stderr.splitlines() if line.startswith("loaded:"))
    return line.split()[1:]


def test_help_imports_click_and_the_root_group_only() -> None:
    """`fabtui --help` must start as fast as click itself: no subcommand module, no config
    models (pydantic), no graph library."""
    loaded = _loaded_after(["--help"], ("fabtui", "pydantic", "networkx", "yaml"))
    assert loaded == ["fabtui", "fabtui.cli", "fabtui.cli.app", "fabtui.cli.context",
                      "fabtui.errors"]


def test_help_lists_each_subcommand_with_its_own_short_help() -> None:
    """The root group's table of short helps says what each real command says, and `--help`
    drawn from the table reads exactly as it does with every subcommand loaded."""

    code = ("import click\n"
            "from click.testing import CliRunner\n"
            "from fabtui.cli.app import SUBCOMMANDS, cli\n"
            "widths = (50, 80, 200)\n"
            "lazy = [CliRunner().invoke(cli, ['--help'], terminal_width=w).output "
            "for w in widths]\n"
            "ctx = click.Context(cli)\n"
            "for name, sub in SUBCOMMANDS.items():\n"
            "    real = cli.get_command(ctx, name)\n"
            "    assert real is not None and not real.hidden, name\n"
            "    assert real.get_short_help_str(10**6) == sub.short_help, name\n"
            "loaded = [CliRunner().invoke(cli, ['--help'], terminal_width=w).output "
            "for w in widths]\n"
            "assert lazy == loaded, (lazy, loaded)\n"
            "print(sum(name in lazy[1] for name in SUBCOMMANDS), len(SUBCOMMANDS))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    listed, table = result.stdout.split()
    assert listed == table  # every subcommand listed


@pytest.mark.parametrize("args", [[], ["topo", "show"]], ids=["overview", "topo-show"])
def test_the_fabric_summary_loads_no_graph_library_parser_or_runbook_engine(
        args: list[str]) -> None:
    """Bare `fabtui` and `topo show` count and look up: networkx is for path search only, and
    no parser, probe, runbook or journal module belongs to a summary."""
    loaded = _loaded_after(args, ("networkx", "fabtui.parsers", "fabtui.probes",
                                  "fabtui.runbooks", "fabtui.journal", "fabtui.cli.parse",
                                  "fabtui.cli.probe", "fabtui.cli.runbook"))
    assert loaded == []
    assert "fabtui.topology.graph" in _loaded_after(args, ("fabtui.topology",))
