"""Relevance of case search: fabtui beside plain SQLite FTS5 BM25, same files, same queries.

Reads the case files (`cases/*.md`) and the symptom queries (`benchmarks/relevance/queries.yaml`,
a list of {query, expected: case id, lang}), as on-call engineers type them, and scores each
engine as recall@5 (the expected case among the first five) and MRR (mean of 1/rank over the
first ten). The reference is FTS5 with its default unicode61 tokenizer and default bm25(), the
query's words OR'ed. Goal (issue "Relevance"): recall@5 >= 0.9 and an MRR above FTS5's.
Until the shipped library exists it runs on the test fixtures in tests/case_fixtures/.
Prints figures; never fails on them.

    python benchmarks/cases_relevance.py                 # the shipped library
    python benchmarks/cases_relevance.py --smoke         # the same (it takes seconds; CI)
    python benchmarks/cases_relevance.py --cases DIR --queries FILE
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from fabtui.cases.document import IndexDoc
from fabtui.cases.index import CaseIndex

REPO = Path(__file__).resolve().parent.parent
SHIPPED = (REPO / "cases", REPO / "benchmarks" / "relevance" / "queries.yaml")
FIXTURES = (REPO / "tests" / "case_fixtures", REPO / "tests" / "case_fixtures" / "queries.yaml")

SECTIONS = {
    "symptom": ("symptom", "现象", "症状"),
    "root_cause": ("root cause", "根因", "根本原因"),
    "resolution": ("resolution", "解决方案", "处理", "修复"),
}


def read_case(path: Path) -> IndexDoc:
    """A case file as the index sees it: front matter and `##` sections (docs/case-format.md).
    A small reader of the benchmark's own, so that it measures search, not the importer."""
    text = path.read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n(.*)", text, re.S)
    if match is None:
        raise ValueError(f"{path}:1: no front matter")
    meta: dict[str, Any] = yaml.safe_load(match.group(1)) or {}
    fields: dict[str, list[str]] = {"symptom": [], "root_cause": [], "resolution": [], "body": []}
    current = "body"
    for line in match.group(2).splitlines():
        heading = re.match(r"##\s+(.+?)\s*$", line)
        if heading:
            name = heading.group(1).strip().lower()
            current = next((k for k, aliases in SECTIONS.items() if name in aliases), "body")
            continue
        fields[current].append(line)
    components = [str(c) for c in meta.get("components") or []]
    return IndexDoc(
        id=str(meta["id"]), title=str(meta.get("title", "")),
        symptom="\n".join(fields["symptom"]).strip(),
        root_cause="\n".join(fields["root_cause"]).strip(),
        resolution="\n".join(fields["resolution"]).strip(),
        body="\n".join(fields["body"]).strip(),
        components=components, tags=[str(t) for t in meta.get("tags") or []],
        error_codes=[str(e) for e in meta.get("error_codes") or []],
        symptom_class=str(meta.get("symptom_class", "other")),
        severity=meta.get("severity"), status=str(meta.get("status", "resolved")),
        lang=str(meta.get("lang", "en")),
        opened=str(meta["opened"]) if meta.get("opened") else None,
        rails=[int(m.group(1)) for c in components if (m := re.fullmatch(r"rail-?(\d+)", c))],
        nodes=sorted({c.split(":")[0] for c in components if c.startswith("node")}),
    )


def fts_ranking(docs: list[IndexDoc], folder: Path) -> Callable[[str], list[str]]:
    db = sqlite3.connect(folder / "fts.db")
    db.execute("CREATE VIRTUAL TABLE cases USING fts5(id UNINDEXED, title, symptom, root_cause,"
               " resolution, body, keys)")
    with db:
        db.executemany("INSERT INTO cases VALUES (?,?,?,?,?,?,?)", [
            (d.id, d.title, d.symptom, d.root_cause, d.resolution, d.body,
             " ".join([*d.components, *d.tags, *d.error_codes])) for d in docs])

    def rank(query: str) -> list[str]:
        words = re.findall(r"\w+", query)
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        sql = "SELECT id FROM cases WHERE cases MATCH ? ORDER BY bm25(cases) LIMIT 10"
        return [row[0] for row in db.execute(sql, (match,))]

    return rank


def score(rank: Callable[[str], list[str]], queries: list[dict[str, str]]
          ) -> tuple[float, float, list[tuple[str, str, int | None]]]:
    """(recall@5, MRR, [(query, expected, rank or None)])."""
    found, reciprocal, rows = 0, 0.0, []
    for q in queries:
        ranking = rank(q["query"])
        position = ranking.index(q["expected"]) + 1 if q["expected"] in ranking else None
        found += position is not None and position <= 5
        reciprocal += 1 / position if position else 0.0
        rows.append((q["query"], q["expected"], position))
    n = max(1, len(queries))
    return found / n, reciprocal / n, rows


def _shown(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="the same run (it takes seconds)")
    parser.add_argument("--cases", type=Path)
    parser.add_argument("--queries", type=Path)
    parser.add_argument("--misses", action="store_true", help="list the queries either missed")
    args = parser.parse_args()
    cases_dir, queries_file = SHIPPED
    if args.cases or args.queries:
        cases_dir, queries_file = args.cases or cases_dir, args.queries or queries_file
    elif not queries_file.exists() or not list(cases_dir.glob("*.md"))[1:]:
        print("the shipped library or its queries are not there yet: using tests/case_fixtures")
        cases_dir, queries_file = FIXTURES
    paths = sorted(p for p in cases_dir.glob("*.md") if p.name.lower() != "readme.md")
    docs = [read_case(p) for p in paths]
    queries = yaml.safe_load(queries_file.read_text(encoding="utf-8"))
    print(f"{len(docs)} cases from {_shown(cases_dir)}, {len(queries)} queries from "
          f"{_shown(queries_file)}")
    with tempfile.TemporaryDirectory() as tmp:
        index = CaseIndex(Path(tmp) / "index")
        index.ensure(lambda: docs, "relevance")
        engines = {
            "fabtui": lambda q: [h.id for h in index.search(q, limit=10).hits],
            "SQLite FTS5 bm25": fts_ranking(docs, Path(tmp)),
        }
        results = {name: score(rank, queries) for name, rank in engines.items()}
        index.close()
    langs = sorted({q.get("lang", "en") for q in queries})
    for name, (recall, mrr, rows) in results.items():
        per_lang = []
        for lang in langs:
            sub = [r for r, q in zip(rows, queries, strict=True) if q.get("lang", "en") == lang]
            hits = sum(1 for _, _, pos in sub if pos is not None and pos <= 5)
            per_lang.append(f"{lang} {hits}/{len(sub)}")
        goal = "ok" if name != "fabtui" or recall >= 0.9 else "UNDER GOAL (0.9)"
        print(f"  {name:<18} recall@5 {recall:5.2f}   MRR {mrr:5.3f}   "
              f"({', '.join(per_lang)})   {goal}")
    ours, ref = results["fabtui"][1], results["SQLite FTS5 bm25"][1]
    print(f"  MRR fabtui / FTS5: {ours / max(ref, 1e-9):.2f}x "
          f"{'(above the reference)' if ours > ref else '(NOT above the reference)'}")
    if args.misses:
        for name, (_, _, rows) in results.items():
            for query, expected, pos in rows:
                if pos is None or pos > 5:
                    print(f"  {name} missed: {query!r} -> {expected} (rank {pos})")


if __name__ == "__main__":
    main()
