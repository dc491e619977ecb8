"""The case store: idempotent import by content hash, `file:line` for a failing file while the
others import, migrations, the generation the index compares, and masking on the way in."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from fabtui.cases.library import CaseLibrary
from fabtui.cases.markdown import parse_case
from fabtui.cases.store import SCHEMA_VERSION, CaseStore, store_path
from fabtui.errors import InputError, RequestError
from fabtui.model.case import Case
from fabtui.runbooks.redact import Redactor


def case_text(case_id: str, *, cause: str = "A dead optic.", tags: str = "[optic]",
              extra: str = "") -> str:
    return (f"---\nid: {case_id}\ntitle: Case {case_id}\ntags: {tags}\n{extra}---\n\n"
            f"## Symptom\nThe job hung.\n\n## Root cause\n{cause}\n\n## Resolution\n"
            "Replaced it.\n")


def test_the_same_file_twice_is_one_case_and_an_edit_updates_it(tmp_path: Path) -> None:
    folder = tmp_path / "cases"
    folder.mkdir()
    (folder / "a.md").write_text(case_text("a"))
    (folder / "README.md").write_text("# not a case\n")
    library = CaseLibrary(tmp_path / "data", engine=None)
    first = library.import_paths([folder])
    assert first.added == ["a"] and not first.problems
    generation = library.store.generation()
    again = library.import_paths([folder])
    assert again.unchanged == ["a"] and not again.added and not again.updated
    assert library.store.generation() == generation  # nothing written: the index stays fresh
    (folder / "a.md").write_text(case_text("a", cause="A dirty connector."))
    edited = library.import_paths([folder / "a.md"])
    assert edited.updated == ["a"]
    assert library.get("a").root_cause == "A dirty connector."
    assert library.store.count() == 1 and library.store.generation() != generation


def test_a_failing_file_is_reported_and_the_others_import(tmp_path: Path) -> None:
    for name in ("a", "c"):
        (tmp_path / f"{name}.md").write_text(case_text(name))
    (tmp_path / "b.md").write_text(case_text("b").replace("## Root cause", "## Root casue"))
    (tmp_path / "dup.md").write_text(case_text("a"))
    library = CaseLibrary(tmp_path / "data", engine=None,
                          label=lambda p: p.name)
    report = library.import_paths([tmp_path / n for n in ("a.md", "b.md", "c.md", "dup.md")])
    assert report.added == ["a", "c"]
    assert [str(p).split(": ")[0] for p in report.problems] == ["b.md:10", "dup.md:2"]
    assert "already used by a.md" in str(report.problems[1])
    with pytest.raises(RequestError, match=r"nope\.md: no such file"):
        library.import_paths([tmp_path / "nope.md"])


def test_a_store_is_migrated_and_a_newer_one_refused(tmp_path: Path) -> None:
    path = store_path(tmp_path)
    CaseStore(path).close()
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        db.execute("DROP INDEX cases_by_update")
        db.execute("PRAGMA user_version = 1")  # as the first version left it
    store = CaseStore(path)
    assert store.migrated_from == 1
    with contextlib.closing(sqlite3.connect(path)) as db:
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        assert "cases_by_update" in names
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    store.close()
    with pytest.raises(InputError, match="newer than this fabtui reads"):
        CaseStore(path)


def test_a_file_that_is_not_a_store_is_refused_in_one_line(tmp_path: Path) -> None:
    path = store_path(tmp_path)
    path.write_bytes(b"this is not SQLite" * 100)
    with pytest.raises(InputError, match="not a readable case store"):
        CaseStore(path)


def test_each_store_has_its_own_generations(tmp_path: Path) -> None:
    one, two = CaseStore(tmp_path / "1.sqlite"), CaseStore(tmp_path / "2.sqlite")
    assert one.generation() != two.generation()  # an index built for a lost store is stale
    before = one.generation()
    assert one.put(parse_case(case_text("a"), "a.md"))
    assert one.generation() != before
    assert one.last_write == (before, one.generation())
    assert not one.put(parse_case(case_text("a"), "a.md"))  # the same case: no write


def test_secrets_are_masked_in_everything_stored(tmp_path: Path) -> None:
    token = "corp-" + "A1b2C3d4" * 3
    (tmp_path / "s.md").write_text(case_text(
        "s", cause=f"The switch password=hunter2 and {token} were in the log.",
        extra=f"authors: [\"{token}\"]\n"))
    library = CaseLibrary(tmp_path / "data", engine=None,
                          mask=Redactor(extra=("corp-[A-Za-z0-9]{24}",)).text)
    library.import_paths([tmp_path / "s.md"])
    case = library.get("s")
    assert "hunter2" not in case.root_cause and token not in case.root_cause
    assert case.authors == ["***"]
    with contextlib.closing(sqlite3.connect(library.store.path)) as db:
        dump = "\n".join(db.iterdump())
    assert "hunter2" not in dump and token not in dump


def test_complete_turns_a_draft_into_a_resolved_case(tmp_path: Path) -> None:
    library = CaseLibrary(tmp_path / "data", engine=None)
    library.put(Case(id="draft-1", title="a draft", symptom="hung"))
    with pytest.raises(RequestError, match="no case 'draft-2'; did you mean draft-1"):
        library.complete("draft-2", root_cause="x")
    done = library.complete("draft-1", root_cause="optic", resolution="replaced")
    assert done.status.value == "resolved" and library.get("draft-1").resolution == "replaced"
    with pytest.raises(InputError, match="root cause is empty"):
        library.complete("draft-1", root_cause=" ")
