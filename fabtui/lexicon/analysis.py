"""The fabric analyzer: case text -> index terms, in pure Python (no search engine imported).

What an on-call engineer types and what a case says rarely use the same words, so the analyzer
normalizes both sides the same way:

- Latin words are lowercased, stop words dropped and lightly stemmed (`flapping`, `flaps` ->
  `flap`).
- Identifiers are kept whole and spelled one way: `Xid 79` / `xid79` -> `xid-79`, `error 12` /
  `status=12` -> `ib-status-12`, `cuda error 700` -> `cuda-error-700`, `rail 3` / `rail3` ->
  `rail-3`; a word holding a digit or an underscore (`mlx5_3`, `Ethernet16`, `node042`,
  `2.18.3`) is one term; `leaf-g00-r3:Ethernet16` also yields `leaf-g00-r3` and `ethernet16`.
- CJK runs become character bigrams (a lone character stays itself); Traditional characters
  are folded to Simplified first, character for character, so offsets never move.
- The on-call glossary (`glossary.toml`, reviewed data) adds one concept term, `~name`, at the
  position of the phrase that matched: `stuck`, `timed out`, `卡住`, `掛死` all add `~hang`. A
  query searches the concept term, so a synonym costs one posting list, not one per spelling,
  and a query in one language meets a case written in the other.

Every token carries its character span in the original text, which is what snippets highlight.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabtui.lexicon.fold import fold
from fabtui.lexicon.glossary import GLOSSARY

SYNONYMS: dict[str, tuple[str, ...]] = GLOSSARY.synonyms()
"""Concept -> its spellings, from the reviewed glossary (`glossary.toml`). Latin spellings are
matched as word sequences after stemming; Chinese ones as substrings of a run of Chinese
characters, the longest at a place winning."""

STOP_WORDS = frozenset((
    "a", "an", "the", "of", "on", "in", "at", "to", "is", "was", "were", "be", "been", "are",
    "and", "or", "for", "with", "by", "from", "it", "its", "this", "that", "these", "those", "as",
    "after", "before", "then", "there", "their", "we", "our", "us", "i", "me", "my", "you",
    "your", "he", "she", "they", "them", "into", "onto", "about", "over", "under", "than", "so",
    "such", "only", "just", "also", "very", "can", "could", "would", "should", "will", "did",
    "does", "do", "has", "have", "had", "when", "while", "which", "who", "whom", "what", "where",
    "why", "how", "all", "any", "some", "each", "per", "via",
))

IRREGULAR = {"hung": "hang", "fell": "fall", "fallen": "fall", "ran": "run", "went": "go",
              "lost": "lose", "froze": "freeze", "frozen": "freeze", "brought": "bring",
              "seen": "see", "saw": "see", "kept": "keep", "rebooted": "reboot"}

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# One scan over the text; alternatives in priority order. Multi-word identifiers come first
# so `Xid 79` is one term, not `xid` and `79`.
_SCAN = re.compile(
    rf"(?P<xid>\b(s?xid)[ \t:#=-]*(\d+)\b)"
    rf"|(?P<cuda>\bcuda[ \t_-]*error[ \t:#=-]*(\d+)\b)"
    rf"|(?P<status>\b(?:(?:ib|wc|ibv|completion)[ \t_-]*)?(?:error|status|err|syndrome)"
    rf"[ \t]*[:#=]?[ \t]*(\d+)\b)"
    rf"|(?P<rail>\brail[ \t_-]*(\d+)\b)"
    rf"|(?P<word>[A-Za-z0-9\u00c0-\u024f](?:[A-Za-z0-9\u00c0-\u024f_.:/+-]*[A-Za-z0-9\u00c0-\u024f])?)"
    rf"|(?P<cjk>[{_CJK}]+)",
    re.IGNORECASE,
)
_SPLIT_ID = re.compile(r"[:/,=]+")
_SPLIT_WORD = re.compile(r"[-_./:+]+")
_NORM_ID = re.compile(r"^(?:(s?xid)-?(\d+)|rail-?(\d+))$")


@dataclass(frozen=True, slots=True)
class Token:
    """One index term. `start`/`end` are character offsets into the analyzed text; `span` is
    how many positions a synonym term covers (1 for everything else)."""

    text: str
    pos: int
    start: int
    end: int
    span: int = 1


def stem(word: str) -> str:
    """A light English stemmer: plural, -ing and -ed, then a final `e`, so `time`, `timed` and
    `timing` share `tim`. Deliberately conservative: it never merges unrelated words as
    aggressively as Porter does, and it leaves words of three letters or fewer alone."""
    if word in IRREGULAR:
        return IRREGULAR[word]
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            root = word[: -len(suffix)]
            if any(c in "aeiouy" for c in root):
                word = root
                if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                    word = word[:-1]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def _normalize_identifier(word: str) -> str:
    m = _NORM_ID.match(word)
    if m is None:
        return word
    if m.group(1):
        return f"{m.group(1)}-{m.group(2)}"
    return f"rail-{m.group(3)}"


def _base_tokens(text: str) -> list[tuple[str, int, int, str]]:
    """(term, start, end, kind) before positions and synonyms; kind is `id`, `word`, `part`
    (a sub-term at the same position as the previous one) or `cjk`."""
    out: list[tuple[str, int, int, str]] = []
    for m in _SCAN.finditer(text):
        kind = m.lastgroup
        start, end = m.start(), m.end()
        if kind == "xid":
            out.append((f"{m.group(2).lower()}-{m.group(3)}", start, end, "id"))
        elif kind == "cuda":
            out.append((f"cuda-error-{m.group(5)}", start, end, "id"))
        elif kind == "status":
            out.append((f"ib-status-{m.group(7)}", start, end, "id"))
        elif kind == "rail":
            out.append((f"rail-{m.group(9)}", start, end, "id"))
        elif kind == "word":
            raw = m.group(0)
            cached = _WORD_CACHE.get(raw)
            if cached is None:
                made: list[tuple[str, int, int, str]] = []
                _word_tokens(raw, 0, made)
                cached = tuple(made)  # not a list: tuples of plain values leave the collector
                if len(_WORD_CACHE) > 100_000:  # bounded: a huge import must not hoard memory
                    _WORD_CACHE.clear()
                _WORD_CACHE[raw] = cached
            out.extend((t, a + start, b + start, k) for t, a, b, k in cached)
        else:
            run = m.group(0)
            if len(run) == 1:
                out.append((run, start, end, "cjk"))
            for i in range(len(run) - 1):
                out.append((run[i : i + 2], start + i, start + i + 2, "cjk"))
    return out


# The terms of a word depend on the word alone, and case text repeats its vocabulary.
_WORD_CACHE: dict[str, tuple[tuple[str, int, int, str], ...]] = {}
_DIGIT = re.compile(r"\d")


def _word_tokens(raw: str, start: int, out: list[tuple[str, int, int, str]]) -> None:
    word = raw.lower()
    if "_" in word or _DIGIT.search(word):
        whole = _normalize_identifier(word)
        out.append((whole, start, start + len(raw), "id"))
        parts = _SPLIT_ID.split(word)
        if len(parts) > 1:
            offset = 0
            for part in parts:
                offset = word.index(part, offset)
                if part and part != whole:
                    out.append((_normalize_identifier(part), start + offset,
                                start + offset + len(part), "part"))
                offset += len(part)
        elif "_" in word and not _DIGIT.search(word):
            # NCCL_IB_HCA: the whole name, and its words for someone who types "ib hca".
            offset = 0
            for part in word.split("_"):
                if part and part not in STOP_WORDS:
                    at = word.index(part, offset)
                    out.append((stem(part), start + at, start + at + len(part), "part"))
                    offset = at + len(part)
        return
    if word.isalpha():
        if word not in STOP_WORDS and len(word) > 1:
            out.append((stem(word), start, start + len(raw), "word"))
        return
    offset = 0
    for piece in _SPLIT_WORD.split(word):
        if not piece:
            continue
        at = word.index(piece, offset)
        offset = at + len(piece)
        if piece not in STOP_WORDS and len(piece) > 1:
            out.append((stem(piece), start + at, start + at + len(piece), "word"))
    joined = "".join(_SPLIT_WORD.split(word))
    if joined.isalpha():  # all-reduce also reads as allreduce
        out.append((stem(joined), start, start + len(raw), "part"))


def _compile_synonyms() -> tuple[dict[str, list[tuple[tuple[str, ...], str]]], re.Pattern[str]]:
    latin: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    cjk: list[tuple[str, str]] = []
    for canon, spellings in SYNONYMS.items():
        for spelling in spellings:
            spelling = fold(spelling.lower())
            if re.search(f"[{_CJK}]", spelling):
                cjk.append((spelling, canon))
                continue
            seq = tuple(t for t, _, _, kind in _base_tokens(spelling) if kind != "part")
            if seq:
                latin.setdefault(seq[0], []).append((seq, canon))
    for entries in latin.values():
        entries.sort(key=lambda e: -len(e[0]))  # longest phrase first
    cjk.sort(key=lambda e: -len(e[0]))
    _CJK_CANON.update(cjk)
    pattern = re.compile("|".join(re.escape(s) for s, _ in cjk)) if cjk else re.compile(r"(?!)")
    return latin, pattern


_CJK_CANON: dict[str, str] = {}
_LATIN_SYN, _CJK_SYN = _compile_synonyms()


Plain = tuple[str, int, int, int, int]
"""A token as plain values: (text, pos, start, end, span), the fields of `Token` in order."""


def analyze(text: str) -> list[Token]:
    """The index terms of `text`: the plain terms in position order, then the synonym terms
    in position order (each at the position of the phrase it stands for). Safe on any
    string."""
    return [Token(*t) for t in analyze_plain(text)]


def analyze_plain(text: str) -> list[Plain]:
    """`analyze` as tuples of plain values, for the callers that analyze much text (the
    index's tokenizer, the snippets of a search's hits): building a frozen `Token` for each
    term was about a quarter of the analysis."""
    folded = fold(text)
    base = _base_tokens(folded)
    tokens: list[Plain] = []
    pos = -1
    # Latin synonym matching runs over the main terms (not identifier parts), in order.
    mains: list[tuple[str, int, int, int]] = []  # term, start, end, pos
    cjk_at: dict[int, int] = {}  # start offset of a bigram -> its position
    for term, start, end, kind in base:
        if kind != "part":
            pos += 1
            if kind == "cjk":
                cjk_at.setdefault(start, pos)
            else:
                mains.append((term, start, end, pos))
        tokens.append((term, pos if pos > 0 else 0, start, end, 1))
    synonyms: list[Plain] = []
    for i, (term, start, _, at) in enumerate(mains):
        entries = _LATIN_SYN.get(term)
        if not entries:
            continue
        seen: set[str] = set()
        for seq, canon in entries:
            n = len(seq)
            if canon in seen:
                continue
            window = mains[i : i + n]
            if len(window) == n and all(w[0] == s for w, s in zip(window, seq, strict=True)) \
                    and window[-1][3] - at == n - 1:
                synonyms.append(("~" + canon, at, start, window[-1][2], n))
                seen.add(canon)
    if cjk_at:
        lowered = folded.lower() if len(folded.lower()) == len(folded) else folded
        for m in _CJK_SYN.finditer(lowered):
            found = cjk_at.get(m.start())
            if found is None and m.start() - 1 in cjk_at:  # the last character of a run
                found = cjk_at[m.start() - 1] + 1
            if found is None:
                continue
            at = found
            span = max(1, len(m.group(0)) - 1)
            synonyms.append(("~" + _CJK_CANON[m.group(0)], at, m.start(), m.end(), span))
    if synonyms:  # after the plain terms, in position order among themselves
        synonyms.sort(key=lambda t: t[1])
        tokens.extend(synonyms)
    return tokens


def terms(text: str) -> list[str]:
    """Just the terms of `text` (for tests and debugging)."""
    return [t.text for t in analyze(text)]
