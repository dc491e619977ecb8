"""The command-line findings of the newcomer review (issue 37, Deliver 7): an output path that
cannot be written is said in one line (not an "internal error" naming a temporary file), a
report is never written under a suffix it is not, `cases list` and `sim list` columns never
run into each other.

(The dry run's rendering and that it is never `last`: tests/test_runbook_engine.py; the scenario
that says once that it persists, and `sim start` as the way back: tests/test_sim_cli.py.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

pytestmark = pytest.mark.usefixtures("sim_in_process")

BOOK = """---
id: tiny
title: Tiny
summary: one note
symptoms: [test]
tests:
  - name: nothing
    expect: {outcome: ok}
---

# Tiny

## Say

```note
hello
```
"""


@pytest.fixture
def session(run: Callable[..., Result], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("FABTUI_SIM_STATE", str(tmp_path / "state.json"))
    monkeypatch.chdir(tmp_path)
    book = tmp_path / "tiny.md"
    book.write_text(BOOK)
    done = run("runbook", "run", str(book))
    assert done.exit_code == 0, done.output
    return done.stdout.split("(session ")[1].split(")")[0]


@pytest.mark.parametrize(("output", "said"), [
    ("missing/dir/r.html", "fabtui: missing/dir/r.html: cannot write: the folder missing/dir "
                           "does not exist (create it first)"),
    ("afile/r.html", "fabtui: afile/r.html: cannot write: afile is a file, not a folder"),
    ("r.pdf", "fabtui: r.pdf: fabtui writes reports as markdown (.md) or HTML (.html), not a "
              ".pdf file: name it r.md or r.html (for a PDF, write .html and print it from a "
              "browser)"),
    ("report", "fabtui: report: fabtui writes reports as markdown (.md) or HTML (.html), not a "
               "file without a suffix: name it report.md or report.html"),
])
def test_a_report_path_that_cannot_be_written_is_said_in_one_line(
        run: Callable[..., Result], session: str, tmp_path: Path, output: str,
        said: str) -> None:
    (tmp_path / "afile").write_text("")
    result = run("report", "last", "-o", output)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [said]
    assert "internal error" not in result.stderr and ".partial" not in result.stderr
    assert not (tmp_path / output).exists()


def test_a_report_format_and_its_suffix_must_agree(run: Callable[..., Result], session: str,
                                                   tmp_path: Path) -> None:
    refused = run("report", "last", "-o", "r.html", "--format", "md")
    assert refused.exit_code == 2
    assert refused.stderr.strip() == "fabtui: r.html: --format md writes markdown, not a .html " \
        "file: name it r.md"
    written = run("report", "last", "-o", "r.html")
    assert written.exit_code == 0 and (tmp_path / "r.html").read_text().startswith("<!")
    assert run("report", "last", "-o", "r.md").exit_code == 0
    assert (tmp_path / "r.md").read_text().startswith("# ")


def test_cases_export_to_a_place_nothing_can_be_written_says_why(
        run: Callable[..., Result], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("")
    for folder, why in (("/proc/x", "nothing can be created in /proc"),
                        ("afile/sub", "afile is a file, not a folder")):
        result = run("cases", "export", "-o", folder)
        assert result.exit_code == 2, result.output
        assert result.stderr.strip() == f"fabtui: {folder}: cannot create the folder: {why}"


def _columns_apart(lines: list[str]) -> None:
    """Every row's first column ends before the next begins (two spaces at least), at the
    same place as the heading's."""
    heading = lines[0]
    second = heading.index("  ") + len(heading[heading.index("  "):]) - \
        len(heading[heading.index("  "):].lstrip())
    for line in lines[1:]:
        assert line[second - 2:second] == "  ", line
        assert line[second] != " ", line


def test_cases_list_and_sim_list_size_their_columns(run: Callable[..., Result]) -> None:
    cases = run("cases", "list")
    assert cases.exit_code == 0
    lines = cases.stdout.splitlines()
    assert lines[0].split() == ["id", "status", "class", "title"]
    assert any(line.startswith("busbw-low-max-nchannels-left-in-template  ") for line in lines)
    _columns_apart(lines)
    scenarios = run("sim", "list")
    lines = scenarios.stdout.splitlines()
    assert lines[0].split() == ["scenario", "description"]
    assert any(line.startswith("pfc-storm-stall-prevention  node006") for line in lines)
    _columns_apart(lines)
