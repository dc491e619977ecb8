"""Shared text helpers: what every parser relies on to see captures the same way."""

from __future__ import annotations

import pytest

from fabtui.parsers.text import clean_lines, normalize, strip_launcher_prefix, to_float, to_int


def test_normalize_removes_crlf_ansi_bom_and_nul() -> None:
    assert normalize("\ufeffa\r\n\x1b[31mb\x1b[0m\r\x00c") == "a\nb\nc"


@pytest.mark.parametrize("line, prefix, rest", [
    ("[1,0]<stdout>: # Rank 0", "[1,0]<stdout>:", "# Rank 0"),
    ("12: #  size", "12", "#  size"),
    ("  size count", None, "  size count"),
])
def test_launcher_prefixes(line: str, prefix: str | None, rest: str) -> None:
    assert strip_launcher_prefix(line) == (prefix, rest)


def test_clean_lines_strips_prefixes_only_when_most_lines_carry_them() -> None:
    srun = "0: CA 'mlx5_0'\n0: \tPort 1:\n1: \t\tState: Active\n"
    assert clean_lines(srun)[:3] == ["CA 'mlx5_0'", "\tPort 1:", "\t\tState: Active"]
    switch = "Port 1:\n  1: not a rank\n  Speed: 400G\n  State: up\n"
    assert clean_lines(switch)[1] == "  1: not a rank"


def test_clean_lines_pdsh_host_only_when_one_host_starts_most_lines() -> None:
    pdsh = "node07: CA 'mlx5_0'\nnode07: State: Active\nnode07: Rate: 400\n"
    assert clean_lines(pdsh)[:3] == ["CA 'mlx5_0'", "State: Active", "Rate: 400"]
    keyvalue = "State: Active\nRate: 400\nError: none\nState: Down\n"
    assert clean_lines(keyvalue)[:4] == ["State: Active", "Rate: 400", "Error: none",
                                         "State: Down"]


def test_clean_lines_unquotes_mail_and_markdown() -> None:
    assert clean_lines("> > a: 1\n> b: 2\n\n>c\n")[:4] == ["a: 1", "b: 2", "", "c"]
    assert clean_lines("x > y\nz\n")[:2] == ["x > y", "z"]


@pytest.mark.parametrize("text, value", [("1,052,612,505", 1052612505), ("N/A", None),
                                         ("42.0", 42), (" 7 ", 7)])
def test_to_int(text: str, value: int | None) -> None:
    assert to_int(text) == value


@pytest.mark.parametrize("text, value", [("-inf", None), ("1.48e-20", 1.48e-20),
                                         ("2,500.5", 2500.5), ("-", None)])
def test_to_float(text: str, value: float | None) -> None:
    assert to_float(text) == value


def test_numbers_that_are_not_numbers_say_so() -> None:
    with pytest.raises(ValueError, match="is not an integer"):
        to_int("12abc")
    with pytest.raises(ValueError, match="is not a number"):
        to_float("fast")
