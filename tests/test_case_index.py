"""The case index: ranking in English and Chinese, filters, snippets, suggestions, and an index
that is always derived (missing, stale, corrupt or half-built by a killed process -> rebuilt)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from fabtui.cases.document import IndexDoc, SearchFilters
from fabtui.cases.index import CaseIndex, CaseIndexError

REPO = Path(__file__).resolve().parent.parent

CORPUS = [
    IndexDoc("nccl-hang-optic",
             "NCCL all-reduce hangs at 512 ranks; retry exceeded on a rail-5 NIC",
             "Training hung at step 1832; the watchdog fired on every rank after 600 s. "
             "NET/IB: Got completion with status=12 on node042 mlx5_5.",
             "The transceiver on leaf-g00-r5 Ethernet16 was failing: rx power -11 dBm.",
             "Replaced the optic and soaked all_reduce_perf for 30 minutes.", "",
             ["node042", "node042:mlx5_5", "leaf-g00-r5:Ethernet16", "rail5"],
             ["nccl-hang", "optic"], ["ib-status-12"], "nccl-hang", "sev2", "resolved", "en",
             "2026-03-02", [5], ["node042"]),
    IndexDoc("busbw-rail3", "all_reduce_perf bus bandwidth halves on rail 3",
             "nccl-tests busbw fell from 390 to 182 GB/s; only rings through rail 3 were slow.",
             "leaf-g01-r3 Ethernet40 negotiated 200G after a firmware upgrade.",
             "Forced 400G on the port and reran nccl-tests.", "",
             ["leaf-g01-r3", "leaf-g01-r3:Ethernet40", "rail3"], ["busbw-low"], [], "busbw-low",
             "sev3", "resolved", "en", "2026-04-11", [3], ["node077"]),
    IndexDoc("pfc-storm", "PFC pause storm from one host freezes a pod",
             "Every job in pod 0 slowed down; leaf-g00-r1 counted rx pause frames by the million.",
             "node013's NIC had a stuck receive queue and paused without end.",
             "Enabled the PFC watchdog and replaced the NIC.", "",
             ["node013", "leaf-g00-r1"], ["pfc-storm"], [], "pfc-storm", "sev1", "resolved",
             "en", "2026-02-20", [1], ["node013"]),
    IndexDoc("xid79", "GPU fell off the bus (Xid 79) on node101",
             "The job crashed with CUDA error 999; dmesg: Xid 79, GPU has fallen off the bus.",
             "GPU 6 failed in hardware after a thermal event.", "RMA of the GPU board.", "",
             ["node101", "node101:gpu6"], ["gpu-xid"], ["xid-79"], "gpu-xid", "sev2",
             "unresolved", "en", "2026-05-03", [], ["node101"]),
    IndexDoc("optic-zh", "光模块老化导致误码上升与链路抖动",
             "训练任务反复卡住，NCCL 超时；leaf-g02-r6 的 Ethernet8 端口一小时内闪断 12 次。",
             "光模块 MT23001234 老化，收光功率 -12.5 dBm。", "更换光模块并清理光纤端面。", "",
             ["leaf-g02-r6", "leaf-g02-r6:Ethernet8"], ["optic", "link-flap"], [],
             "optic-failure", "sev2", "resolved", "zh", "2026-03-18", [6], []),
    IndexDoc("slow-node-zh", "一台慢节点拖慢整个训练：风扇故障导致 GPU 降频",
             "整个作业的 step 时间上升 35%，rank 700 总是最后到达。",
             "node088 风扇故障，GPU 时钟被 HW Slowdown 限制。", "更换风扇模组。", "",
             ["node088"], ["slow-node"], [], "slow-node", "sev3", "draft", "zh", None, [],
             ["node088"]),
]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> CaseIndex:
    ix = CaseIndex(tmp_path_factory.mktemp("index"))
    assert ix.ensure(lambda: CORPUS, "g1") is True
    return ix


def ids(index: CaseIndex, query: str, filters: SearchFilters | None = None) -> list[str]:
    return [h.id for h in index.search(query, filters).hits]


@pytest.mark.parametrize(("query", "expected"), [
    ("allreduce slow rail 3", "busbw-rail3"),
    ("training stuck, watchdog timeout", "nccl-hang-optic"),
    ("completion error 12", "nccl-hang-optic"),
    ("gpu missing xid 79", "xid79"),
    ("pause frames flooding", "pfc-storm"),
    ("flapping transceiver", "optic-zh"),
])
def test_english_queries_rank_the_matching_case_first(index: CaseIndex, query: str,
                                                      expected: str) -> None:
    assert ids(index, query)[0] == expected


@pytest.mark.parametrize(("query", "expected"), [
    ("光模块 误码", "optic-zh"),
    ("鏈路抖動 光模組", "optic-zh"),  # Traditional forms
    ("慢节点 降频", "slow-node-zh"),
    ("gpu 掉卡", "xid79"),
])
def test_chinese_queries_rank_the_matching_case_first(index: CaseIndex, query: str,
                                                      expected: str) -> None:
    assert ids(index, query)[0] == expected


def test_a_chinese_query_finds_the_english_case_through_synonyms(index: CaseIndex) -> None:
    assert set(ids(index, "nccl 超时")[:2]) == {"nccl-hang-optic", "optic-zh"}


def test_filters(index: CaseIndex) -> None:
    assert ids(index, "", SearchFilters(rail=3)) == ["busbw-rail3"]
    assert ids(index, "optic", SearchFilters(component="leaf-g02-r6")) == ["optic-zh"]
    assert ids(index, "gpu", SearchFilters(node="node101")) == ["xid79"]
    assert ids(index, "", SearchFilters(tag="PFC-storm")) == ["pfc-storm"]
    assert set(ids(index, "", SearchFilters(severity="sev2"))) == {"nccl-hang-optic", "xid79",
                                                                    "optic-zh"}
    assert ids(index, "gpu", SearchFilters(status="unresolved")) == ["xid79"]
    dated = ids(index, "", SearchFilters(since="2026-03-01", until="2026-04-11"))
    assert set(dated) == {"nccl-hang-optic", "optic-zh", "busbw-rail3"}  # until is inclusive
    assert ids(index, "nccl", SearchFilters(rail=3, status="draft")) == []


def test_snippets_highlight_the_matching_words(index: CaseIndex) -> None:
    hit = index.search("watchdog hung").hits[0]
    marked = [hit.snippet[a:b].lower() for a, b in hit.highlights]
    assert "watchdog" in marked and "hung" in marked
    zh = index.search("闪断").hits[0]
    assert [zh.snippet[a:b] for a, b in zh.highlights] == ["闪断"]


def test_a_word_typed_half_way_matches_its_irregular_and_stemmed_forms(index: CaseIndex) -> None:
    # A field is only analyzed when it holds a substring its matches must contain: `fall*`
    # must still find the `fell` and `fallen` of the Xid 79 case, `hang*` its `hung`.
    fell = index.search("fall*").hits[0]
    assert fell.id == "xid79"
    assert fell.matched["title"] == ["fell"] and "fallen" in fell.matched["symptom"]
    hung = {h.id: h for h in index.search("hang*").hits}["nccl-hang-optic"]
    assert "hung" in hung.matched["symptom"]
    assert "root_cause" not in hung.matched  # a field without the word matches nothing


def test_each_hit_says_which_fields_and_words_matched(index: CaseIndex) -> None:
    hit = index.search("stuck xid 79").hits[0]
    assert hit.id == "xid79"
    assert hit.matched["error_codes"] == ["xid-79"]
    assert "xid 79" in hit.matched["symptom"]
    hang = index.search("training stuck").hits[0]  # the synonym is the reason
    assert hang.id == "nccl-hang-optic"
    assert "hung" in hang.matched["symptom"]


def test_misspelled_words_get_a_suggestion(index: CaseIndex) -> None:
    result = index.search("tranceiver failng")
    assert result.suggestion in ("transceiver failing", "transceiver failed")
    assert index.search("transceiver").suggestion is None
    assert result.unknown[0] == ("tranceiver", "transceiver")  # named word by word
    assert index.search("transceiver").unknown == []


@pytest.mark.parametrize("query", ['"unbalanced quote', "AND", "OR nccl", "nccl AND", "NOT",
                                   "( rail 3", "***", '""', "- -", "\x00", "a" * 500])
def test_broken_queries_are_searched_as_plain_text(index: CaseIndex, query: str) -> None:
    index.search(query)  # never raises
    assert ids(index, '"unbalanced nccl')[0] == "nccl-hang-optic"


def test_and_or_not_phrase_and_prefix(index: CaseIndex) -> None:
    assert ids(index, "gpu AND bus") == ["xid79"]
    assert set(ids(index, "pfc OR xid")) == {"pfc-storm", "xid79"}
    assert "optic-zh" not in ids(index, "optic -光模块")
    assert ids(index, '"bus bandwidth halves"') == ["busbw-rail3"]
    assert ids(index, '"halves bandwidth bus"') == []
    assert ids(index, "firmw*")[0] == "busbw-rail3"


def test_total_counts_every_match_and_limit_caps_hits(index: CaseIndex) -> None:
    result = index.search("gpu", limit=1)
    assert len(result.hits) == 1 and result.total == 2


def _docs(*extra: IndexDoc) -> list[IndexDoc]:
    return [*CORPUS, *extra]


def test_upsert_and_delete_are_seen_by_an_open_searcher(tmp_path: Path) -> None:
    reader = CaseIndex(tmp_path)
    reader.ensure(_docs, "g1")
    assert ids(reader, "mtu") == []
    writer = CaseIndex(tmp_path)
    writer.upsert([IndexDoc("mtu", "RoCE MTU mismatch", "active_mtu 1024")], "g2")
    assert ids(reader, "mtu") == ["mtu"]
    writer.upsert([IndexDoc("mtu", "RoCE GID index wrong", "show_gids")], "g3")
    assert ids(reader, "mtu") == [] and ids(reader, "gid") == ["mtu"]
    writer.delete(["mtu"], "g4")
    assert ids(reader, "gid") == []
    assert reader.ensure(_docs, "g4") is False  # the generation followed every change


def test_stale_missing_and_corrupt_indexes_are_rebuilt(tmp_path: Path) -> None:
    ix = CaseIndex(tmp_path)
    with pytest.raises(CaseIndexError):
        ix.search("nccl")
    assert ix.ensure(_docs, "g1") is True
    assert ix.ensure(_docs, "g1") is False
    assert ix.ensure(_docs, "g2") is True  # stale: SQLite moved on
    live = tmp_path / (tmp_path / "CURRENT").read_text()
    for path in live.iterdir():
        if path.suffix in (".seg", ".toc"):
            path.write_bytes(b"garbage")
    assert ix.ensure(_docs, "g2") is True
    assert ids(ix, "xid 79") == ["xid79"]
    (tmp_path / "CURRENT").unlink()
    assert ix.ensure(_docs, "g2") is True
    assert len(list(tmp_path.glob("ix-*"))) == 1  # old builds are cleaned up


def test_an_open_index_is_not_opened_again_for_each_search(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from whoosh import index as windex  # the module fabtui.cases.index opens indexes with

    ix = CaseIndex(tmp_path)
    ix.ensure(_docs, "g1")
    assert ids(ix, "nccl hang")[0] == "nccl-hang-optic"
    opened: list[str] = []
    real = windex.open_dir

    def open_dir(*args: Any, **kwargs: Any) -> Any:
        opened.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(windex, "open_dir", open_dir)
    for _ in range(3):  # search-as-you-type: ensure, then search, per keystroke
        assert ix.ensure(_docs, "g1") is False
        assert ids(ix, "nccl hang")[0] == "nccl-hang-optic"
    assert opened == []
    assert ix.ensure(_docs, "g2") is True  # the store moved on: still rebuilt


def test_warming_opens_the_index_then_decodes_the_frequent_postings_step_by_step(
        tmp_path: Path) -> None:
    import fabtui.cases.index._scoring as module

    ix = CaseIndex(tmp_path)
    ix.ensure(_docs, "g1")
    with module._CACHE_LOCK:
        module._CACHE.clear()
        module._CACHE_SIZE[0] = 0
    steps = ix.warm()
    next(steps)  # opened (the first keystroke's cost): nothing decoded yet
    assert ix._scorer is not None and not module._CACHE
    for _ in steps:
        pass
    warmed = {term for _, field, term in module._CACHE if field == "text"}
    assert {"nccl", "hang", "optic"} <= warmed
    assert ids(ix, "nccl hang")[0] == "nccl-hang-optic"


def test_an_index_that_fails_to_read_is_rebuilt_by_the_next_ensure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fabtui.cases.index._scoring import Scorer

    ix = CaseIndex(tmp_path)
    ix.ensure(_docs, "g1")

    def unreadable(*args: object) -> None:  # damage deeper than opening the index shows
        raise OSError("bad block")

    with monkeypatch.context() as patch:
        patch.setattr(Scorer, "run", unreadable)
        with pytest.raises(CaseIndexError, match="unreadable case index"):
            ix.search("nccl hang")
    assert ix.ensure(_docs, "g1") is True
    assert ids(ix, "nccl hang")[0] == "nccl-hang-optic"


KILLED_BUILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from fabtui.cases.document import IndexDoc
    from fabtui.cases.index import CaseIndex

    def docs():
        for i in range(100000):
            if i == 50:
                Path(sys.argv[2]).write_text("building")
            if i >= 50:
                time.sleep(0.01)
            yield IndexDoc(f"case-{i}", f"case {i} nccl hang", "symptom")

    CaseIndex(sys.argv[1]).ensure(docs, "g2")
""")


def test_kill_9_during_a_rebuild_leaves_an_index_that_ensure_rebuilds(tmp_path: Path) -> None:
    ix = CaseIndex(tmp_path / "index")
    ix.ensure(_docs, "g1")
    marker = tmp_path / "marker"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen([sys.executable, "-c", KILLED_BUILD, str(tmp_path / "index"),
                              str(marker)], env=env)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert child.poll() is None, "the rebuild ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait()
    assert child.returncode == -signal.SIGKILL
    assert ids(ix, "xid 79") == ["xid79"]  # readers still see the last complete index
    assert ix.ensure(_docs, "g2") is True
    assert ids(ix, "xid 79") == ["xid79"]
    assert len(list((tmp_path / "index").glob("ix-*"))) == 1


CONCURRENT = textwrap.dedent("""
    import sys
    from fabtui.cases.document import IndexDoc
    from fabtui.cases.index import CaseIndex

    ix = CaseIndex(sys.argv[1])
    role, n = sys.argv[2], int(sys.argv[3])
    for i in range(n):
        if role == "writer":
            ix.upsert([IndexDoc(f"w{sys.argv[4]}-{i}", f"filed case {i}", "nccl hang")],
                      f"g-{sys.argv[4]}-{i}")
        else:
            assert ix.search("nccl hang").hits
""")


def test_concurrent_readers_and_writers_in_several_processes(tmp_path: Path) -> None:
    CaseIndex(tmp_path).ensure(_docs, "g1")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [subprocess.Popen([sys.executable, "-c", CONCURRENT, str(tmp_path), "writer", "6",
                               str(w)], env=env) for w in range(3)]
    procs += [subprocess.Popen([sys.executable, "-c", CONCURRENT, str(tmp_path), "reader", "30",
                                "r"], env=env) for _ in range(2)]
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    found = {h.id for h in CaseIndex(tmp_path).search("filed", limit=100).hits}
    assert found == {f"w{w}-{i}" for w in range(3) for i in range(6)}


def test_decoded_postings_agree_with_whoosh_across_blocks(tmp_path: Path) -> None:
    """The scorer decodes whoosh's posting blocks itself; a change in the block format of a
    whoosh release (or fork) must fail here, not rank silently wrong."""
    from fabtui.cases.index._scoring import _leaf_postings

    docs = [IndexDoc(f"c{i}", f"case {i} nccl", "hang" * (1 + i % 3), tags=[f"t{i % 7}"])
            for i in range(700)]  # > 128 postings a term: several blocks
    ix = CaseIndex(tmp_path)
    ix.ensure(lambda: docs, "g1")
    reader = ix._open_scorer().searcher.reader()
    for term in ("nccl", "~hang", "t3", "5"):
        for leaf, _ in reader.leaf_readers():
            ids, weights = _leaf_postings(leaf, "text", term)
            matcher = leaf.postings("text", term)
            expected = []
            while matcher.is_active():
                expected.append((matcher.id(), matcher.weight()))
                matcher.next()
            assert ids.tolist() == [d for d, _ in expected], term
            assert weights.tolist() == pytest.approx([w for _, w in expected]), term
    assert ix.search("case 5").hits[0].id == "c5"


def test_lengths_read_as_one_column_agree_with_whoosh_per_document(tmp_path: Path) -> None:
    """The scorer reads every document's field length from whoosh's length column in one read
    (one call a document was most of a cold search at 100,000 cases); a whoosh whose column
    differs must fail here, not normalize BM25 by the wrong lengths. Two segments, one with a
    document deleted, documents of very different lengths."""
    import numpy as np

    from fabtui.cases.index._scoring import _leaf_lengths, _length_bytes

    docs = [IndexDoc(f"c{i}", f"case {i}", "optic " * (1 + i * 37 % 300)) for i in range(300)]
    ix = CaseIndex(tmp_path)
    ix.ensure(lambda: docs, "g1")
    ix.upsert([IndexDoc("c7", "case seven again", "a much shorter body")], "g2")
    reader = ix._open_scorer().searcher.reader()
    leaves = list(reader.leaf_readers())
    assert len(leaves) >= 2
    seen: set[float] = set()
    for leaf, _ in leaves:
        count = leaf.doc_count_all()
        assert _length_bytes(leaf, count) is not None  # the one-read path, not the fallback
        expected = [leaf.doc_field_length(i, "text", 0) for i in range(count)]
        assert _leaf_lengths(leaf).tolist() == expected
        assert np.asarray(_leaf_lengths(leaf)).dtype == np.float32
        seen.update(expected)
    assert len(seen) > 10
    assert ix.search("case seven").hits[0].id == "c7"


def test_long_posting_lists_are_stored_decoded_for_the_next_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold search (a new process, as every `fabtui cases search`) loads the long posting
    lists an earlier one decoded, with the same doc numbers and weights as whoosh's blocks and
    the same hits; a stored file that is damaged is decoded again; the lists of segments
    merged away are removed, and short lists are not stored, nor any past the folder's cap."""
    import numpy as np

    from fabtui.cases.index import _decoded, _scoring

    monkeypatch.setattr(_decoded, "MIN_STORED", 50)
    docs = [IndexDoc(f"c{i}", f"case {i} nccl", "hang " * (1 + i % 5), tags=[f"t{i % 3}"])
            for i in range(400)]
    ix = CaseIndex(tmp_path)
    ix.ensure(lambda: docs, "g1")
    first = ix.search("nccl hang")
    scorer = ix._open_scorer()
    folder = scorer.store.folder if scorer.store is not None else None
    assert folder is not None
    stored = sorted(folder.glob("*/*.bin"))
    assert stored  # "nccl" and "hang" are in every case: stored
    leaf = scorer.leaves[0][0]
    expected = _scoring._decode(leaf, "text", "nccl")
    loaded = scorer.store.load(leaf.segment().segment_id(), "text", "nccl")  # type: ignore[union-attr]
    assert loaded is not None
    assert loaded[0].tolist() == expected[0].tolist()
    assert loaded[1].tolist() == pytest.approx(expected[1].tolist())

    _scoring._CACHE.clear()  # as a new process: nothing decoded in memory
    _scoring._CACHE_SIZE[0] = 0
    ix.close()
    again = CaseIndex(tmp_path).search("nccl hang")
    assert [(h.id, h.score) for h in again.hits] == [(h.id, h.score) for h in first.hits]

    for number, path in enumerate(stored):  # cut short, or not a list at all
        path.write_bytes(path.read_bytes()[:40] if number % 2 == 0 else b"not a posting list")
    _scoring._CACHE.clear()
    _scoring._CACHE_SIZE[0] = 0
    damaged = CaseIndex(tmp_path).search("nccl hang")
    assert [(h.id, h.score) for h in damaged.hits] == [(h.id, h.score) for h in first.hits]

    store = _decoded.DecodedStore(tmp_path / "alone")
    ids, weights = np.arange(60, dtype=np.int64), np.ones(60, np.float32)
    for segment in ("MAIN_kept", "MAIN_merged"):
        store.save(segment, "text", "nccl", ids, weights)
    assert all(p.stat().st_mode & 0o044 for p in store.folder.glob("*/*"))  # others may read
    store.save("MAIN_kept", "text", "short", ids[:5], weights[:5])  # too short to store
    writing = store.folder / "tmp1234.part"  # another process's file, being written
    writing.write_bytes(b"...")
    left = store.folder / "tmp5678.part"  # one a killed writer left an hour ago
    left.write_bytes(b"...")
    os.utime(left, (time.time() - 7200, time.time() - 7200))
    older = store.folder / f"MAIN_kept-{'0' * 24}.npz"  # a list an earlier version stored
    older.write_bytes(b"PK...")
    store.forget_others({"MAIN_kept"})
    assert writing.exists() and not left.exists() and not older.exists()
    assert not (store.folder / "MAIN_merged").exists()
    assert store.load("MAIN_merged", "text", "nccl") is None
    assert store.load("MAIN_kept", "text", "short") is None
    kept = store.load("MAIN_kept", "text", "nccl")
    assert kept is not None and kept[0].tolist() == ids.tolist()
    assert kept[1].dtype == np.float32 and kept[1].tolist() == weights.tolist()

    # A full folder makes room by removing the lists read longest ago.
    store.save("MAIN_kept", "text", "hang", ids, weights)
    long_ago = time.time() - 600
    for path in (store.folder / "MAIN_kept").iterdir():
        os.utime(path, (long_ago, long_ago))
    assert store.load("MAIN_kept", "text", "nccl") is not None  # read now
    held = sum(path.stat().st_size for path in store.folder.rglob("*") if path.is_file())
    one = 16 + 12 * len(ids)
    monkeypatch.setattr(_decoded, "MAX_FOLDER_BYTES", held + one - 100)  # no room for one more
    fresh = _decoded.DecodedStore(store.folder)  # counts what the folder holds
    fresh.save("MAIN_kept", "text", "pfc", ids, weights)
    assert fresh.load("MAIN_kept", "text", "pfc") is not None
    assert fresh.load("MAIN_kept", "text", "hang") is None  # read longest ago: removed
    assert fresh.load("MAIN_kept", "text", "nccl") is not None
    assert writing.exists()  # not a stored list: never evicted
    monkeypatch.setattr(_decoded, "MAX_FOLDER_BYTES", one)  # a list near the whole cap
    fresh.save("MAIN_kept", "text", "big", ids, weights)
    assert fresh.load("MAIN_kept", "text", "big") is None
    assert fresh.load("MAIN_kept", "text", "pfc") is not None  # nothing evicted for it


def test_a_draft_ranks_below_a_reviewed_case_that_matches_as_well(tmp_path: Path) -> None:
    # Issue 38 Deliver 4: a filed draft ranked first for `optic rail:5`, above curated cases.
    same = dict(title="Dead optic on rail 5, no light", symptom="NCCL hang, optic dark",
                components=["leaf-g00-r5:Ethernet16"], rails=[5])
    ix = CaseIndex(tmp_path / "ix")
    ix.ensure(lambda: [IndexDoc("a-draft", status="draft", **same),  # type: ignore[arg-type]
                       IndexDoc("z-reviewed", status="resolved", **same)],  # type: ignore[arg-type]
              "g1")
    hits = ix.search("optic no light", SearchFilters(rail=5)).hits
    assert [h.id for h in hits] == ["z-reviewed", "a-draft"]  # the id order alone says a-draft
    assert hits[1].score < hits[0].score


_PARALLEL_BUILD = textwrap.dedent("""
    import dataclasses, json, pathlib, sys, tempfile
    from fabtui.cases import index as case_index
    from tests.test_case_index import CORPUS
    docs = [dataclasses.replace(doc, id=f"{doc.id}-{n}", title=f"{doc.title} {n}")
            for n in range(20) for doc in CORPUS]
    case_index._workers = lambda: 2  # whatever this machine has
    found, segments = {}, []
    for parallel_from in (10, 10**9):
        case_index.PARALLEL_FROM = parallel_from
        folder = pathlib.Path(tempfile.mkdtemp())
        ix = case_index.CaseIndex(folder)
        ix.ensure(lambda: docs, "g1")
        segments.append(len(list((folder / (folder / "CURRENT").read_text()).glob("*.seg"))))
        # Every hit with its score: equal scores may come in another order (segments differ).
        found[parallel_from] = [sorted((h.id, round(h.score, 9))
                                       for h in ix.search(q, limit=500).hits)
                                for q in sys.argv[1:]]
    print(json.dumps([found[10] == found[10**9], [len(hits) for hits in found[10]], segments]))
""")


def test_a_rebuild_spread_over_worker_processes_answers_as_one_built_alone() -> None:
    # A process of its own: the workers are forked, which the test runner's threads forbid.
    queries = ["nccl hang optic", "光模块", "rail 3", "xid 79", "pause storm node013"]
    done = subprocess.run([sys.executable, "-c", _PARALLEL_BUILD, *queries], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    same, hits, segments = json.loads(done.stdout)
    assert segments[0] >= 2 and segments[1] == 1  # the first build did spread
    assert same and hits[0] >= 20 and all(hits)
