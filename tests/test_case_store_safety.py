"""The case library loses nothing to a case folder that is briefly gone (field review M4), and a
damaged or emptied store is said to be one (L5): never an internal error, never a silent new
store, and `cases export` still saves every case that reads."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

DRAFT = """\
---
id: {id}
title: {title}
status: draft
tags: [x]
---

## Symptom
Slow all-reduce on rail 3.

## Root cause

## Resolution
"""


class Library:
    """A data dir whose config names one case folder, `team/`, holding two draft cases."""

    def __init__(self, tmp_path: Path, run: Callable[..., Result]) -> None:
        self.base = tmp_path
        self.team = tmp_path / "team"
        self.team.mkdir()
        for case_id in ("team-draft", "team-two"):
            (self.team / f"{case_id}.md").write_text(DRAFT.format(id=case_id, title=case_id))
        self.config = tmp_path / "config.toml"
        self.config.write_text(f'data_dir = "{tmp_path / "data"}"\ncase_dirs = ["{self.team}"]\n')
        self._run = run

    def __call__(self, *args: str) -> Result:
        return self._run("--config", str(self.config), *args)

    def case(self, case_id: str) -> dict[str, str]:
        shown = self("cases", "show", case_id, "--json")
        assert shown.exit_code == 0, shown.output
        data: dict[str, str] = json.loads(shown.stdout)
        return data


@pytest.fixture
def library(tmp_path: Path, run: Callable[..., Result]) -> Library:
    return Library(tmp_path, run)


def test_a_briefly_missing_case_folder_deletes_nothing_and_a_completion_survives(
        library: Library, tmp_path: Path) -> None:
    done = library("cases", "complete", "team-draft", "--root-cause", "optic MT1 dead",
                   "--resolution", "swapped optic")
    assert done.exit_code == 0, done.output
    library.team.rename(tmp_path / "elsewhere")  # the share unmounted, a branch switched
    library.team.mkdir()
    listed = library("cases", "list")
    assert listed.exit_code == 0
    assert "team-draft" in listed.stdout and "team-two" in listed.stdout
    assert "case library: case folder team is missing or holds no case file: its 2 cases " \
           "are kept until it does" in listed.stderr.replace(str(tmp_path) + "/", "")
    library.team.rmdir()
    (tmp_path / "elsewhere").rename(library.team)
    case = library.case("team-draft")
    assert case["status"] == "resolved" and case["root_cause"] == "optic MT1 dead"
    assert case["resolution"] == "swapped optic"


def test_a_completed_case_whose_file_left_is_kept_and_an_edited_file_does_not_undo_it(
        library: Library, tmp_path: Path) -> None:
    library("cases", "complete", "team-draft", "--root-cause", "optic MT1 dead")
    saved = (library.team / "team-draft.md").read_text()
    (library.team / "team-draft.md").unlink()  # the folder still holds team-two
    listed = library("cases", "list")
    assert "team-draft" in listed.stdout
    assert "case 'team-draft' was completed or changed here, and its file" in listed.stderr
    (library.team / "team-draft.md").write_text(saved.replace("Slow", "Very slow"))
    case = library.case("team-draft")
    assert case["status"] == "resolved" and case["root_cause"] == "optic MT1 dead"
    # told why, with what to do; importing the file on purpose is the user's call
    said = library("cases", "list").stderr
    assert "team-draft.md: case 'team-draft' was changed in the library (fabtui cases " \
           "complete) since this file was imported, and the file changed too: kept the " \
           "library's case" in said
    imported = library("cases", "import", str(library.team / "team-draft.md"))
    assert imported.exit_code == 0 and library.case("team-draft")["status"] == "draft"


def test_a_case_whose_file_left_a_present_folder_is_removed_and_that_is_said(
        library: Library) -> None:
    library("cases", "list")
    (library.team / "team-two.md").unlink()
    listed = library("cases", "list")
    assert "team-two" not in listed.stdout and "team-draft" in listed.stdout
    assert "case library: removed 1 case whose file left its case folder: team-two" \
        in listed.stderr


def test_an_emptied_store_is_refused_not_silently_replaced(library: Library) -> None:
    assert library("cases", "list").exit_code == 0
    store = library.base / "data" / "cases.sqlite"
    store.write_bytes(b"")  # whatever truncated it took every case with it
    listed = library("cases", "list")
    assert listed.exit_code == 2
    assert listed.stderr.startswith(f"{store}: empty (0 bytes) where the case store was")
    assert store.stat().st_size == 0  # left for the user to restore or move away


def test_a_damaged_store_is_said_to_be_one_and_export_saves_what_reads(
        library: Library, run: Callable[..., Result], tmp_path: Path) -> None:
    assert library("cases", "stats").exit_code == 0
    store = library.base / "data" / "cases.sqlite"
    with sqlite3.connect(store) as db:
        try:
            leaves = [row[0] for row in db.execute(
                "SELECT pageno FROM dbstat WHERE name = 'cases' AND pagetype = 'leaf' "
                "ORDER BY pageno")]
        except sqlite3.OperationalError:
            pytest.skip("this SQLite has no dbstat table")
        size = int(db.execute("PRAGMA page_size").fetchone()[0])
    assert len(leaves) > 2
    with store.open("r+b") as raw:  # one page of case rows overwritten, as a bad disk would
        raw.seek((leaves[len(leaves) // 2] - 1) * size)
        raw.write(b"\xff" * size)
    for command in (("cases", "stats"), ("cases", "list")):
        result = library(*command)
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith(f"{store}: the case store is damaged (database disk "
                                        "image is malformed"), result.stderr
        assert "internal error" not in result.output
    out = tmp_path / "saved"
    exported = library("cases", "export", "-o", str(out))
    assert exported.exit_code == 2
    assert "did not read (" in exported.stderr and f"others are in {out}" in exported.stderr
    saved = sorted(p.stem for p in out.glob("*.md"))
    assert len(saved) > 10
    fresh = tmp_path / "fresh.toml"
    fresh.write_text(f'data_dir = "{tmp_path / "fresh"}"\n')
    rebuilt = run("--config", str(fresh), "cases", "import", str(out))
    assert rebuilt.exit_code == 0, rebuilt.output
