"""Parsers hand out tables as data; only `fabtui.render.table` turns them into text.

The check on the source keeps padding code (`ljust`, `f"{x:<{w}}"`, `"%-10s"`) from coming back
into fabtui/parsers, where a TUI could not reuse it and wide characters would misalign.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import fabtui.cli.parse as parse_cli
from fabtui.cli.app import cli
from fabtui.model.table import Table
from fabtui.parsers import registry
from fabtui.render.table import render_tables

PARSERS = Path(__file__).parent.parent / "fabtui" / "parsers"
FIXTURES = Path(__file__).parent / "fixtures"
_PADDING_CALLS = {"ljust", "rjust", "center"}
_WIDTH_SPEC = re.compile(r"^(?:.?[<>^=])|^[+\- ]?#?0?(?:\d|\{\})")
"""A format spec that aligns or sets a width (`<12`, `>{w}`, `10`, `{}`); `g`, `.2f`, `x` pass."""
_PERCENT_WIDTH = re.compile(r"%[-+ #0]*\d+[sdifge]")
_FORMAT_WIDTH = re.compile(r"\{[^{}]*:[^{}]*?(?:[<>^]|\d)[^{}]*\}")


def _spec_text(spec: ast.JoinedStr) -> str:
    """A format spec as text, a nested `{w}` standing as `{}`."""
    return "".join(part.value if isinstance(part, ast.Constant) and isinstance(part.value, str)
                   else "{}" for part in spec.values)


def padding_in(source: str) -> list[str]:
    """Where `source` pads text to a width: `line: what`."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _PADDING_CALLS:
                found.append(f"{node.lineno}: .{node.func.attr}()")
            elif (node.func.attr == "format" and isinstance(node.func.value, ast.Constant)
                  and isinstance(node.func.value.value, str)
                  and _FORMAT_WIDTH.search(node.func.value.value)):
                found.append(f"{node.lineno}: str.format with a width")
        elif isinstance(node, ast.FormattedValue) and isinstance(node.format_spec, ast.JoinedStr):
            spec = _spec_text(node.format_spec)
            if _WIDTH_SPEC.match(spec):
                found.append(f"{node.lineno}: format spec {spec!r}")
        elif (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod)
              and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
              and _PERCENT_WIDTH.search(node.left.value)):
            found.append(f"{node.lineno}: %-format with a width")
    return found


@pytest.mark.parametrize("sample", [
    "x = name.ljust(10)", "x = name.rjust(w)", "x = name.center(9)", 'x = f"{name:<12}"',
    'x = f"{value:>{width}}"', 'x = f"{value:10}"', 'x = f"{value:08.2f}"',
    'x = "{:<10}".format(name)', 'x = "%-10s" % name',
])
def test_the_check_finds_padding(sample: str) -> None:
    assert padding_in(sample), sample


@pytest.mark.parametrize("sample", [
    'x = f"{value:g}"', 'x = f"{value:.2f}"', 'x = f"{value:x}"', 'x = "{}".format(v)',
    'x = "%s" % v', 'x = "  ".join(cells)', r'x = re.compile(r"\d{1,3}:\d{2}")',
])
def test_the_check_lets_value_formatting_pass(sample: str) -> None:
    assert not padding_in(sample), sample


def test_no_parser_module_formats_text_tables() -> None:
    found = {path.name: hits for path in sorted(PARSERS.glob("*.py"))
             if (hits := padding_in(path.read_text(encoding="utf-8")))}
    assert found == {}, "parsers return Table data; fabtui.render.table draws it"


def test_no_parser_exports_a_text_table_function() -> None:
    assert [k for k, p in registry.parsers().items() if hasattr(p.module, "table")] == []


def _fixtures_with_a_parse() -> list[tuple[str, Path]]:
    return [(folder.name, path) for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir())
            for path in sorted(folder.iterdir())
            if not path.name.endswith(".expected.json")
            and path.with_name(path.name.rsplit(".", 1)[0] + ".expected.json").exists()]


CASES = _fixtures_with_a_parse()


@pytest.mark.parametrize("kind, path", CASES, ids=[f"{k}/{p.name}" for k, p in CASES])
def test_every_fixture_gives_tables_that_render(kind: str, path: Path) -> None:
    parser = registry.get(kind)
    tables = parser.tables(parser.parse(path.read_text(encoding="utf-8", errors="replace")))
    if tables is None:
        return  # the CLI lists the fields of kinds without tables
    assert tables and all(isinstance(t, Table) for t in tables)
    names = [[c.name for c in t.columns] for t in tables]
    assert all(len(set(n)) == len(n) for n in names), f"column names repeat: {names}"
    # One line per row: no cell of real output breaks its row apart.
    lines = render_tables(tables).splitlines()
    expected = sum(len(t.title) + len(t.notes) + (1 + max(1, len(t.rows)) if t.columns else 0)
                   for t in tables) + len(tables) - 1
    assert len(lines) == expected


def test_parse_table_prints_the_rendered_tables() -> None:
    path = FIXTURES / "ibstat" / "felixfu-ibstat-cx3-fdr10.txt"
    result = CliRunner().invoke(cli, ["parse", "--table", str(path)])
    assert result.exit_code == 0, result.output
    parser = registry.get("ibstat")
    tables = parser.tables(parser.parse(path.read_text()))
    assert tables is not None
    assert result.output == render_tables(tables) + "\n"
    assert result.output.splitlines()[1].split() == ["mlx4_0", "1", "Active", "LinkUp", "40",
                                                     "FDR10", "7", "InfiniBand"]


def test_parse_table_on_a_narrow_terminal_cuts_cells_to_fit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = FIXTURES / "kernel-log" / "slurmv4-dmesg-mlx5-link-flap-bond-slave.txt"
    piped = CliRunner().invoke(cli, ["parse", "--table", str(path)])
    assert "link status definitely down, disabling slave" in piped.output
    monkeypatch.setattr(parse_cli, "_terminal_width", lambda: 72)
    narrow = CliRunner().invoke(cli, ["parse", "--table", str(path)])
    assert narrow.exit_code == 0, narrow.output
    rows = [line for line in narrow.output.splitlines() if line[:1].isdigit() or
            line.startswith("line")]
    assert len(rows) == 19 and all(len(line) <= 72 for line in rows)
    assert any(line.endswith("…") for line in rows)
    assert "link_flaps: enp83s0f0np0=3" in narrow.output  # summaries are not cut
