"""A big library's index is built in the background: a search never waits for it, and says
where its answer comes from meanwhile (issue 42: the first search after importing 100,000
cases rebuilt the index for 153 s)."""

from __future__ import annotations

import contextlib
import fcntl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabtui.cases import library as library_module
from fabtui.cases.library import CaseLibrary
from fabtui.model.case import Case

REPO = Path(__file__).resolve().parent.parent


def _case(case_id: str, title: str) -> Case:
    return Case.model_validate({"id": case_id, "title": title, "symptom": "the job hung",
                                "root_cause": "a bad part", "status": "resolved"})


@contextlib.contextmanager
def _a_build_under_way(library: CaseLibrary) -> Iterator[None]:
    """The index's write lock held, as a rebuild in another process holds it."""
    library.index_dir.mkdir(parents=True, exist_ok=True)
    with open(library.index_dir / ".write.lock", "a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _until_current(library: CaseLibrary, query: str, seconds: float = 60) -> list[str]:
    """The hits of `query` once a search answers from an index built from the store."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = library.search(query)
        if result.note is None:
            return [h.id for h in result.hits]
        time.sleep(0.2)
    raise AssertionError(f"the index was not built within {seconds} s")


@pytest.fixture
def big(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three cases count as a big library (the rule is the same at 2,000)."""
    monkeypatch.setattr(library_module, "BACKGROUND_FROM", 3)


@pytest.mark.usefixtures("big")
def test_before_the_first_index_exists_a_plain_word_match_answers(tmp_path: Path) -> None:
    library = CaseLibrary(tmp_path)
    for n, title in enumerate(("optic dark on rail 3", "PFC storm on leaf 4", "Xid 79")):
        library.put(_case(f"c{n}", title))
    with _a_build_under_way(library):
        result = library.search("optic rail")
        assert [h.id for h in result.hits] == ["c0"]
        assert result.note is not None and "being built from 3 cases" in result.note
    assert _until_current(library, "optic") == ["c0"]  # the search started the build


@pytest.mark.usefixtures("big")
def test_a_stale_index_answers_while_the_new_one_is_built(tmp_path: Path) -> None:
    library = CaseLibrary(tmp_path)
    for n in range(3):
        library.put(_case(f"old{n}", f"optic failure number {n}"))
    assert len(_until_current(library, "optic")) == 3
    folder = tmp_path / "import"
    folder.mkdir()
    from fabtui.cases.markdown import write_case

    for n in range(3):
        (folder / f"new{n}.md").write_text(write_case(_case(f"new{n}", f"optic swap {n}")))
    with _a_build_under_way(library):
        report = library.import_paths([folder])
        assert len(report.added) == 3 and library.indexing_in_background
        result = library.search("optic")
        assert {h.id for h in result.hits} == {"old0", "old1", "old2"}  # the previous index
        assert result.note is not None and "previous index" in result.note
    assert len(_until_current(library, "optic")) == 6


def test_a_command_leaves_the_build_to_a_detached_process(tmp_path: Path) -> None:
    """Where nothing else runs in the process (the CLI), the build is a process of its own
    that outlives the command: the command returns at once, the index arrives after."""
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from fabtui.cases import library as m\n"
        "from fabtui.model.case import Case\n"
        "m.BACKGROUND_FROM = 2\n"
        "lib = m.CaseLibrary(Path(sys.argv[1]))\n"
        "for n in range(2):\n"
        "    lib.put(Case.model_validate({'id': f'c{n}', 'title': f'optic {n}',"
        " 'symptom': 's', 'root_cause': 'r', 'status': 'resolved'}))\n"
        "result = lib.search('optic')\n"
        "print(result.note is not None, len(result.hits))\n")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "2"]  # answered by the plain match, not waiting
    assert sorted(_until_current(CaseLibrary(tmp_path), "optic")) == ["c0", "c1"]
