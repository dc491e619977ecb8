"""The fabric analyzer and the query planner: what an engineer types meets what a case says."""

from __future__ import annotations

from fabtui.cases.query import plan
from fabtui.lexicon.analysis import analyze, stem, terms
from fabtui.lexicon.fold import fold


def test_latin_words_are_lowercased_stemmed_and_stop_words_dropped() -> None:
    assert [t for t in terms("The link is Flapping") if not t.startswith("~")] == ["link", "flap"]
    assert stem("flapping") == stem("flaps") == stem("flap") == "flap"
    assert stem("timed") == stem("timing") == stem("time")
    assert stem("hung") == "hang"
    assert stem("bus") == "bus"  # short words are left alone


def test_identifiers_are_kept_whole_and_spelled_one_way() -> None:
    for text in ("Xid 79", "xid79", "XID: 79", "Xid-79"):
        assert "xid-79" in terms(text), text
    for text in ("status 12", "error=12", "IB status: 12", "wc error 12"):
        assert "ib-status-12" in terms(text), text
    assert "cuda-error-700" in terms("CUDA error 700")
    for text in ("rail 3", "rail3", "Rail-3"):
        assert "rail-3" in terms(text), text
    assert {"mlx5_3", "ethernet16", "node042"} <= set(terms("mlx5_3 Ethernet16 node042"))
    compound = terms("leaf-g00-r3:Ethernet16")
    assert {"leaf-g00-r3:ethernet16", "leaf-g00-r3", "ethernet16"} <= set(compound)
    assert "2.18.3" in terms("NCCL 2.18.3")


def test_synonyms_add_one_canonical_term_across_languages() -> None:
    hang = {"stuck", "the job hung", "watchdog fired", "timed out", "训练卡住", "NCCL 超时"}
    for text in hang:
        assert "~hang" in terms(text), text
    for text in ("busbw", "bus bandwidth", "allreduce slow", "带宽低"):
        assert "~busbw" in terms(text), text
    for text in ("flap", "bounce", "link down", "链路抖动", "闪断"):
        assert "~flap" in terms(text), text
    for text in ("optic", "transceiver", "module", "xcvr", "光模块"):
        assert "~optic" in terms(text), text
    for text in ("FEC", "BER", "symbol errors", "误码"):
        assert "~fec" in terms(text), text
    for text in ("PFC", "pause frames", "流控"):
        assert "~pfc" in terms(text), text
    for text in ("丢包", "drops", "discards"):
        assert "~drop" in terms(text), text
    for text in ("掉卡", "GPU fell off the bus", "Xid 79"):
        assert "~gpu-lost" in terms(text), text
    assert "~hang" not in terms("the optic was replaced")


def test_a_multiword_synonym_spans_its_words() -> None:
    tokens = analyze("port link down twice")
    syn = next(t for t in tokens if t.text == "~flap")
    assert "port link down twice"[syn.start:syn.end] == "link down"
    assert syn.span == 2


def test_cjk_runs_become_bigrams_and_latin_runs_words() -> None:
    assert [t for t in terms("链路抖动") if not t.startswith("~")] == ["链路", "路抖", "抖动"]
    assert terms("卡") == ["卡"]
    mixed = terms("nccl超时 on rail 3")
    assert {"nccl", "超时", "~hang", "rail-3"} <= set(mixed)


def test_traditional_and_simplified_forms_give_the_same_terms() -> None:
    assert fold("鏈路抖動 光模塊 誤碼 超時") == "链路抖动 光模块 误码 超时"
    assert terms("鏈路抖動") == terms("链路抖动")
    assert terms("誤碼") == terms("误码")
    assert terms("光模組 頻寬") == terms("光模块 带宽")  # Taiwan words read the mainland way


def test_offsets_point_into_the_original_text() -> None:
    text = "鏈路抖動 after Xid 79 on mlx5_3"
    for tok in analyze(text):
        assert 0 <= tok.start < tok.end <= len(text)
    xid = next(t for t in analyze(text) if t.text == "xid-79")
    assert text[xid.start:xid.end] == "Xid 79"


def test_any_string_analyzes_without_error() -> None:
    for text in ("", "   ", "\x00\x1e\x1f", "İstanbul ǅ ß", "🙂 emoji", "-" * 50, "a" * 10_000):
        analyze(text)


def test_queries_forgive_broken_syntax() -> None:
    for text in ('"unbalanced quote', "AND", "OR OR", "NOT", "( nccl", "- + *", "nccl AND",
                 'a "b" "c', "))(("):
        plan(text)  # never raises
    assert plan("AND OR NOT").empty
    assert not plan('"unbalanced nccl').empty


def test_words_typed_side_by_side_are_analyzed_together() -> None:
    wanted = plan("Xid 79 on rail 3")
    assert {"xid-79", "rail-3"} <= wanted.terms
    assert not wanted.conjunctive


def test_and_or_not_and_prefix() -> None:
    conj = plan("nccl AND hang OR pfc")
    assert conj.conjunctive and len(conj.groups) == 2
    excluded = plan("optic -光模块")
    assert excluded.excluded and all(not t.startswith("~")
                                     for u in excluded.excluded for t, _ in u.alternatives)
    typed = plan("transc*")
    assert typed.prefixes == ["transc"]
