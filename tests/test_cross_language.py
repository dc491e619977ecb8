"""Issue 37, Deliver 6: Chinese and English meet. For every shipped case and runbook, a query in
the other language, written by hand (benchmarks/relevance/cross_language.yaml), finds it in the
first three: case search over the shipped library as `fabtui cases search` runs it, `runbook
find` over the shipped runbooks. The field review's own two queries are among them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from fabtui.cases.library import CaseLibrary
from fabtui.paths import shipped_dir
from fabtui.runbooks.library import find, load_library, match

REPO = Path(__file__).resolve().parent.parent
QUERIES = yaml.safe_load((REPO / "benchmarks" / "relevance" / "cross_language.yaml")
                         .read_text(encoding="utf-8"))
RUNBOOKS = load_library([shipped_dir("runbooks")])
CJK = re.compile(r"[\u3400-\u9fff]")


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> CaseLibrary:
    cases = CaseLibrary(tmp_path_factory.mktemp("data"), [shipped_dir("cases")])
    report = cases.sync()
    assert not report.problems, report.problems
    return cases


def _language(path: Path) -> str:
    head = path.read_text(encoding="utf-8").split("\n---", 1)[0]
    found = re.search(r"^lang:\s*(\S+)", head, re.M)
    return found.group(1) if found else "en"


def test_every_shipped_case_and_runbook_has_a_query_in_the_other_language() -> None:
    cases = {p.stem: _language(p) for p in shipped_dir("cases").glob("*.md")
             if p.name != "README.md"}
    asked = {(q["kind"], q["expected"]) for q in QUERIES}
    assert {("case", c) for c in cases} <= asked
    assert {("runbook", r) for r in RUNBOOKS.runbooks} <= asked
    for q in QUERIES:
        written_in = cases[q["expected"]] if q["kind"] == "case" else "en"
        # the query is in the other language: Chinese words for an English text, none for a
        # Chinese one (identifiers such as NCCL or Xid 79 are typed the same in both)
        assert bool(CJK.search(q["query"])) == (written_in == "en"), q


@pytest.mark.parametrize("query", [q for q in QUERIES if q["kind"] == "case"],
                         ids=lambda q: q["expected"])
def test_a_case_is_found_by_a_query_in_the_other_language(library: CaseLibrary,
                                                          query: dict[str, str]) -> None:
    found = [h.id for h in library.search(query["query"], limit=10).hits]
    assert query["expected"] in found[:3], (query["query"], found)


@pytest.mark.parametrize("query", [q for q in QUERIES if q["kind"] == "runbook"],
                         ids=lambda q: q["expected"])
def test_a_runbook_is_found_by_a_query_in_chinese(query: dict[str, str]) -> None:
    found = [book.meta.id for _, book in find(RUNBOOKS, query["query"], limit=10).hits]
    assert query["expected"] in found[:3], (query["query"], found)


def test_the_field_reviews_queries() -> None:
    # `runbook find 作业挂死` found only multi-job-interference
    assert find(RUNBOOKS, "作业挂死").hits[0][1].meta.id == "nccl-hang-triage"


def test_the_english_optic_hang_is_found_in_chinese(library: CaseLibrary) -> None:
    # `NCCL 挂死 光模块` ranked the English optic-hang case 10th; `光模块 没有光` missed it
    for query in ("NCCL 挂死 光模块", "光模块 没有光", "光模組 不發光"):
        top = [h.id for h in library.search(query, limit=3).hits]
        assert "nccl-hang-optic-rail5-node003" in top, (query, top)


def test_runbook_find_names_a_misspelled_word() -> None:
    found = find(RUNBOOKS, "optik replacment")
    assert found.unknown_line() == ("no match for 'optik'; did you mean optic?; "
                                    "no match for 'replacment'; did you mean replacement?")
    assert find(RUNBOOKS, "optic replacement").unknown == []


def test_only_a_shown_spelling_hint_is_worked_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """The spelling search (difflib over every word of the library) runs only for a caller
    that shows it (`fabtui runbook find`), not for an alert's runbook or the guided search,
    which use the hits alone (issue 42)."""
    import difflib

    asked: list[str] = []
    real = difflib.get_close_matches

    def counted(word: str, possibilities: list[str], n: int = 3, cutoff: float = 0.6) \
            -> list[str]:
        asked.append(word)
        return real(word, possibilities, n, cutoff)

    monkeypatch.setattr(difflib, "get_close_matches", counted)
    hits = match(RUNBOOKS, "optik replacment link flap")
    assert hits and asked == []
    found = find(RUNBOOKS, "optik replacment link flap")
    assert found.hits == hits and asked == []
    assert found.unknown == [("optik", "optic"), ("replacment", "replacement")]
    assert found.unknown == found.unknown and asked == ["optik", "replacment"]  # once
