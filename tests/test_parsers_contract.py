"""The JSON contract document matches the models, and `fabtui parse` behaves as documented."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import Result

from fabtui.parsers.contract import render

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
MLX5_STATS = FIXTURES / "ethtool-stats" / "lkml-ethtool-S-mlx5-xdp-kernel-5.15-nonzero.txt"


def test_docs_parse_json_is_generated_from_the_models() -> None:
    committed = (REPO / "docs" / "parse-json.md").read_text()
    assert committed == render(), "regenerate: python -m fabtui.parsers.contract > " \
                                  "docs/parse-json.md"


def test_parse_detects_and_prints_json(run: Callable[..., Result]) -> None:
    path = MLX5_STATS
    result = run("parse", str(path))
    assert result.exit_code == 0
    assert '"kind": "ethtool-stats"' in result.stdout


def test_parse_table(run: Callable[..., Result]) -> None:
    path = MLX5_STATS
    result = run("parse", "--table", str(path))
    assert result.exit_code == 0 and "counters.rx_discards_phy" in result.stdout


def test_parse_refuses_unknown_input(run: Callable[..., Result],
                                     write: Callable[[str, str], Path]) -> None:
    result = run("parse", str(write("x.txt", "hello world\n")))
    assert result.exit_code == 2
    assert "x.txt: cannot tell which tool printed this" in result.stderr
    empty = run("parse", str(write("e.txt", "")))
    assert empty.exit_code == 2 and "the input is empty" in empty.stderr


def test_parse_as_a_kind_that_does_not_fit(run: Callable[..., Result],
                                           write: Callable[[str, str], Path]) -> None:
    result = run("parse", "--as", "ethtool-stats", str(write("x.txt", "hello world\n")))
    assert result.exit_code == 2
    assert "no `name: value` counter found (input looked like ethtool-stats)" in result.stderr
    unknown = run("parse", "--as", "nope", str(write("y.txt", "a\n")))
    assert unknown.exit_code == 2 and "unknown kind 'nope'" in unknown.stderr


def test_parse_reads_standard_input(run: Callable[..., Result]) -> None:
    from click.testing import CliRunner

    from fabtui.cli import cli

    text = MLX5_STATS.read_text()
    result = CliRunner().invoke(cli, ["parse", "-"], input=text)
    assert result.exit_code == 0 and '"counters"' in result.stdout
