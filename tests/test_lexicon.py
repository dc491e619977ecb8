"""The on-call glossary (fabtui/lexicon/glossary.toml): every spelling it lists reaches its
concept through the analyzer, in English, Simplified and Traditional Chinese, and a broken
glossary file is refused with the line of the entry that breaks a rule."""

from __future__ import annotations

import pytest

from fabtui.errors import InputError
from fabtui.lexicon.analysis import analyze, terms
from fabtui.lexicon.glossary import GLOSSARY, parse_glossary
from fabtui.lexicon.units import LITERAL_WEIGHT, units

SPELLINGS = [(c.id, lang, s) for c in GLOSSARY.concepts
             for lang, spellings in (("en", c.en), ("zh-Hans", c.zh_hans), ("zh-Hant", c.zh_hant))
             for s in spellings]


@pytest.mark.parametrize(("concept", "lang", "spelling"), SPELLINGS,
                         ids=[f"{c}-{lang}-{s}" for c, lang, s in SPELLINGS])
def test_every_spelling_reaches_its_concept(concept: str, lang: str, spelling: str) -> None:
    assert f"~{concept}" in terms(spelling), (lang, spelling, terms(spelling))


def test_the_on_call_words_of_the_field_review_meet_their_english() -> None:
    pairs = {"挂死": "hang", "掛死": "hang", "卡住": "hang", "光模块": "optic", "光模組": "optic",
             "没有光": "no-light", "不发光": "no-light", "无光": "no-light", "丢包": "drop",
             "误码": "fec", "拥塞": "congestion", "降速": "slow", "链路抖动": "flap",
             "闪断": "flap", "网卡": "nic", "交换机": "switch", "显卡": "gpu"}
    for chinese, concept in pairs.items():
        assert f"~{concept}" in terms(chinese), chinese
    english = {"hang": "stuck", "optic": "transceiver", "no-light": "dark", "drop": "packet loss",
               "fec": "bit errors", "flap": "link flap", "nic": "hca"}
    for concept, word in english.items():
        assert f"~{concept}" in terms(word), word


def test_a_glossary_phrase_is_one_unit_whatever_the_language() -> None:
    chinese = units(analyze("光模块"))  # two character pairs, one concept
    assert len(chinese) == 1 and chinese[0][0] == ("~optic", 1.0)
    assert sum(w for t, w in chinese[0] if not t.startswith("~")) == pytest.approx(
        LITERAL_WEIGHT)
    english = units(analyze("no light"))  # two words, one concept
    assert len(english) == 1 and english[0][0] == ("~no-light", 1.0)
    assert units(analyze("node042:gpu3"))[0][0] == ("node042:gpu3", 1.0)  # not a concept


def test_one_spelling_of_one_character_does_not_swallow_longer_words() -> None:
    assert "~gpu" not in terms("卡住了")  # stuck, not a card
    assert "~hang" in terms("训练卡了")
    assert "~nic" in terms("网卡") and "~gpu" not in terms("网卡")


GOOD = '''
[[concept]]
id = "hang"
en = ["hang"]
zh-Hans = ["挂死"]
'''


@pytest.mark.parametrize(("text", "message"), [
    (GOOD + '\n[[concept]]\nid = "stuck"\nen = ["stuck"]\nzh-Hant = ["掛死"]\n',
     "glossary.toml:7: '掛死' is already a spelling of 'hang' (line 2)"),
    ('[[concept]]\nid = "x"\nen = ["x"]\n', "glossary.toml:1: concept 'x' needs an English"),
    ('\n[[concept]]\nid = "Hang"\nen = ["hang"]\nzh-Hans = ["挂死"]\n',
     "glossary.toml:2: id 'Hang'"),
    ('[[concept]]\nid = "a"\nen = ["a"]\nzh-Hans = ["GID 索引"]\n',
     "glossary.toml:1: zh-Hans spelling 'GID 索引' must be Chinese characters only"),
    ('[[concept]]\nid = "a"\nen = ["卡"]\nzh-Hans = ["卡"]\n', "glossary.toml:1: en spelling"),
    ('[[concept]]\nid = "a"\nen = ["a"]\nzh = ["卡"]\n', "glossary.toml:1: unknown key 'zh'"),
    ('[[concept]\n', "glossary.toml:1: invalid TOML"),
])
def test_a_broken_glossary_names_the_entry_and_the_rule(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_glossary(text, "glossary.toml")
    assert any(str(p).startswith(message) for p in caught.value.problems), caught.value


def test_the_shipped_glossary_reads_and_covers_both_scripts() -> None:
    assert parse_glossary(GOOD, "g.toml").concepts[0].spellings == ("hang", "挂死")
    assert len(GLOSSARY.concepts) >= 60
    assert all(c.zh_hans and c.zh_hant for c in GLOSSARY.concepts)
