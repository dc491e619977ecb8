"""What the CLI and the Cases screen show alike: typed filters, the as-you-type prefix, the
sections of a case and the runbook inputs a case fills."""

from __future__ import annotations

from fabtui.cases.present import as_you_type, runbook_inputs, sections, split_filters, why
from fabtui.model.case import Case, EvidenceRow
from fabtui.paths import shipped_dir
from fabtui.runbooks.library import load_library


def test_filters_beside_the_words_are_checked_and_a_wrong_one_is_named() -> None:
    typed = split_filters("pfc storm rail:4 status:resolved since:2026-03-02 tag:")
    assert typed.text == "pfc storm"
    assert typed.filters == {"rail": 4, "status": "resolved", "since": "2026-03-02"}
    assert typed.error is None
    bad = split_filters("optic rail:300 severity:sev9 until:2026-02-30 node:node003")
    assert bad.text == "optic" and bad.filters == {"node": "node003"}
    assert bad.error == "rail:300: expected a rail number 0-255"
    assert split_filters("until:2026-02-30").error == \
        "until:'2026-02-30': expected a date like 2026-03-02"
    # A component id is a word, not a filter; quotes keep a phrase together.
    assert split_filters('leaf-g00-r4:Ethernet40 "pause storm"').text == \
        'leaf-g00-r4:Ethernet40 "pause storm"'


def test_the_word_being_typed_matches_as_a_prefix() -> None:
    assert as_you_type("pfc sto") == "pfc sto*"
    assert as_you_type("pfc st") == "pfc st"  # two letters would expand to too much
    assert as_you_type("pfc storm ") == "pfc storm "
    assert as_you_type("光模块 误码") == "光模块 误码"
    assert as_you_type("nccl AND") == "nccl AND"
    assert as_you_type('"pause storm"') == '"pause storm"'


def test_sections_follow_the_format_and_why_names_fields() -> None:
    case = Case(id="c1", title="t", symptom="seen", root_cause="cause", lessons="learned",
                evidence=[EvidenceRow(component="node1", metric="m", value="1")],
                evidence_notes="log lines", sections={"Appendix": "more"})
    assert sections(case) == [("Symptom", "seen"), ("Evidence", "log lines"),
                              ("Root cause", "cause"), ("Lessons", "learned"),
                              ("Appendix", "more")]
    assert why({"title": ["pfc", "storm"], "tags": ["pfc-storm"]}) == \
        "title: pfc, storm; tags: pfc-storm"


def test_a_case_fills_the_fabric_inputs_of_the_runbooks_it_references() -> None:
    books = load_library([shipped_dir("runbooks")]).runbooks
    case = Case(id="c1", title="t", components=["node006:mlx5_4", "leaf-g00-r4:Ethernet40",
                                                "rail4"])
    assert runbook_inputs(case, books["pfc-storm"]) == {"leaf": "leaf-g00-r4"}
    filled = runbook_inputs(case, books["optic-replacement"])
    assert filled and set(filled.values()) <= {"node006", "node006:mlx5_4", "leaf-g00-r4",
                                               "leaf-g00-r4:Ethernet40"}


def test_a_misspelled_filter_is_named_as_one_not_searched_as_words() -> None:
    # Issue 37: `optic rial:5` was searched as text and answered `did you mean: optic rails:5`
    typed = split_filters("optic rial:5")
    assert typed.text == "optic" and typed.filters == {}
    assert typed.error == "unknown filter rial:; did you mean rail:5?"
    assert split_filters("optic stauts:draft").error == \
        "unknown filter stauts:; did you mean status:draft?"
    # a component id is not a filter, misspelled or not
    for words in ("node003:mlx5_5 down", "leaf-g00-r3:Ethernet16 optic", "optic:MT24000043"):
        assert split_filters(words).text == words and split_filters(words).error is None


def test_a_word_no_case_holds_is_named_with_the_closest_word() -> None:
    from fabtui.lexicon.spelling import no_match

    assert no_match([("optik", "optic")]) == "no match for 'optik'; did you mean optic?"
    assert no_match([("xyzzy", None)]) == "no match for 'xyzzy'"
    assert no_match([]) is None
