"""Streaming `fabtui parse`: the lines, the JSON and the results are those of the whole-text path.

Large captures are read line by line and written item by item (fabtui/parsers/streaming.py);
users rely on getting byte-for-byte the output the whole-text path gives, on every fixture.
"""

from __future__ import annotations

import io
import json
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fabtui.parsers import registry
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import (
    FileLines,
    LazyList,
    Plain,
    Streamed,
    flat_rows_encoded,
    read_lines,
    write_json,
)
from fabtui.parsers.text import clean_line_stream, clean_lines, normalize, split_lines
from tests.support.fixture_inputs import FIXTURES, NOT_INPUT

STREAMING = sorted(kind for kind, parser in registry.parsers().items()
                   if hasattr(parser.module, "parse_lines"))
TRICKY = [
    b"", b"\n", b"a", b"a\n", b"a\r\nb\rc\n\r\n", b"\xef\xbb\xbfbom\n\xef\xbb\xbfinner",
    b"nul\x00s\r\x00\n", b"\x1b[31mred\x1b[0m\n\x1b\x1b[0m[0m",
    "caf\u00e9 \u2014 \U0001f600\n".encode(),
    b"bad \xff\xfe bytes \xe2\x82\n\xe2\x82\xac end", b"\r", b"\r\r\n\n",
]


def _inputs() -> list[tuple[str, Path]]:
    return [(kind, path) for kind in STREAMING for path in sorted((FIXTURES / kind).iterdir())
            if path.is_file() and not path.name.endswith(NOT_INPUT)]


@pytest.mark.parametrize("data", TRICKY)
@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 20])
def test_read_lines_is_split_lines_of_the_decoded_text(data: bytes, chunk: int) -> None:
    whole = split_lines(normalize(data.decode("utf-8", errors="replace")))
    assert list(read_lines(io.BytesIO(data), chunk)) == whole


def test_write_json_is_json_dumps_for_every_fixture_result() -> None:
    checked = 0
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        parser = registry.get(folder.name)
        for path in sorted(folder.glob("*.txt")):
            try:
                result = parser.parse(normalize(path.read_text(errors="replace")))
            except ParseError:
                continue
            out = io.StringIO()
            write_json(Streamed(result), out)
            expected = json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False)
            assert out.getvalue() == expected + "\n", path
            checked += 1
    assert checked > 100


@pytest.mark.parametrize("kind, path", _inputs(), ids=[f"{k}/{p.name}" for k, p in _inputs()])
def test_streamed_parse_matches_the_whole_text_parse(kind: str, path: Path) -> None:
    module = registry.get(kind).module
    text = normalize(path.read_bytes().decode("utf-8", errors="replace"))
    try:
        expected = module.parse(text)
    except ParseError as whole:
        with pytest.raises(ParseError) as streamed_error:
            module.parse_lines(read_lines(io.BytesIO(path.read_bytes()), 4096))
        assert (streamed_error.value.line, streamed_error.value.message) == \
            (whole.line, whole.message)
        return
    streamed = module.parse_lines(read_lines(io.BytesIO(path.read_bytes()), 4096))
    out = io.StringIO()
    write_json(streamed, out)
    assert json.loads(out.getvalue()) == expected.model_dump(mode="json")
    assert out.getvalue() == json.dumps(expected.model_dump(mode="json"), indent=2,
                                        ensure_ascii=False) + "\n"


class _Counting(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def write(self, text: str) -> int:
        self.calls += 1
        return super().write(text)


def test_plain_results_are_written_as_json_dumps_a_megabyte_at_a_time() -> None:
    # An unbuffered standard output (PYTHONUNBUFFERED) made each piece a system call.
    data: dict[str, object] = {"kind": "x", "rows": [{"text": "caf\u00e9 \x00" * 9, "n": i,
                                                       "ok": i % 2 == 0, "none": None}
                                                      for i in range(20000)],
                               "empty": [], "nested": {"a": [1, {"b": []}]}}
    out = _Counting()
    write_json(Plain(data, lambda d: d), out)
    assert out.getvalue() == json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    assert len(out.getvalue()) > 3 * 1024 * 1024
    assert out.calls <= 5


@pytest.mark.parametrize("count", [0, 1, 4096, 4097, 9000])
def test_rows_written_from_their_values_are_json_dumps_of_their_dicts(count: int) -> None:
    # A big NCCL log's rank table is written from each entry's values (`flat_rows_encoded`),
    # never as a dict each: the text must be what `json.dumps` writes for the dicts, at any
    # depth, whatever the values (escapes, NUL, non-ASCII, floats, None, booleans).
    names = ("rank", "host", "ratio", "ok", "none", "text")
    rows = [(i, f"gpu-{i}\u00e9\"", i / 7, i % 2 == 0, None, "tab\t nul\x00 \u4e2d")
            for i in range(count)]
    dicts = [dict(zip(names, row, strict=True)) for row in rows]
    data: dict[str, object] = {"kind": "x", "rows": LazyList(lambda: iter(dicts),
                               lambda indent: flat_rows_encoded(names, iter(rows), indent)),
                               "deeper": {"rows": LazyList(lambda: iter(dicts), lambda indent:
                                                           flat_rows_encoded(names, iter(rows),
                                                                             indent))}}
    out = io.StringIO()
    write_json(Plain(data, lambda d: d), out)
    expected = {"kind": "x", "rows": dicts, "deeper": {"rows": dicts}}
    assert out.getvalue() == json.dumps(expected, indent=2, ensure_ascii=False) + "\n"


DECORATED = [
    "0: NIC statistics:\n0:      rx_packets: 1\n1:      tx_packets: 2\nplain: 3\n",
    "[1,0]<stdout>: a: 1\n[1,0]<stdout>: b: 2\n",
    "gpu1: rx: 1\ngpu1: tx: 2\ngpu2: x: 3\n\n",
    "0: gpu1: > a: 1\n0: gpu1: > b: 2\n1: gpu1: c: 3\n",
    "> > quoted: 1\n> x: 2\ny: 3\n", "State: Active\nError: none\n", "", "\n\n  \n",
]


def test_clean_line_stream_is_clean_lines() -> None:
    texts = DECORATED + [path.read_text(errors="replace")
                         for path in sorted(FIXTURES.glob("*/*.txt"))]
    for text in texts:
        expected = clean_lines(text)
        assert list(clean_line_stream(split_lines(text))) == expected
        assert list(clean_line_stream(iter(split_lines(text)))) == expected


def test_file_lines_reads_the_file_again_on_each_pass(tmp_path: Path) -> None:
    path = tmp_path / "capture.txt"
    path.write_bytes(b"0: a: 1\r\n0: b: 2\r\n")
    lines = FileLines(str(path))
    assert list(lines) == list(lines) == ["0: a: 1", "0: b: 2", ""]


class _Null(io.StringIO):
    """A text stream that keeps nothing written to it."""

    def write(self, text: str) -> int:
        return len(text)


def _peak(run: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _repeated(path: Path, times: int) -> Iterator[str]:
    lines = split_lines(normalize(path.read_text(errors="replace")))
    for _ in range(times):
        yield from lines


def test_nccl_tests_rows_cost_their_text_not_a_model_each() -> None:
    sample = sorted((FIXTURES / "nccl-tests").glob("*.txt"))[0]
    module = registry.get("nccl-tests").module
    rows = len(module.parse(sample.read_text(errors="replace")).rows) * 40
    peak = _peak(lambda: write_json(module.parse_lines(_repeated(sample, 40)), _Null()))
    assert rows > 1000
    assert peak / rows < 1000  # a validated row with its two measurements took ~3.5 KB


def test_nccl_log_memory_does_not_grow_with_the_log(monkeypatch: pytest.MonkeyPatch) -> None:
    sample = sorted((FIXTURES / "nccl-log").glob("*.txt"), key=lambda p: p.stat().st_size)[-1]
    module = registry.get("nccl-log").module
    monkeypatch.setattr(module, "MAX_EVENTS", 4)  # events are capped; the rest is tallied
    small = _peak(lambda: write_json(module.parse_lines(_repeated(sample, 4)), _Null()))
    large = _peak(lambda: write_json(module.parse_lines(_repeated(sample, 40)), _Null()))
    assert large < small * 1.2


def _first_readable(kind: str) -> Path:
    """The kind's first sample that the parser reads (one with a `.error` beside it is refused)."""
    return next(p for p in sorted((FIXTURES / kind).glob("*.txt"))
                if not p.with_suffix(".error").exists())


@pytest.mark.parametrize("kind", ["kernel-log", "flight-recorder", "ibdev2netdev", "show-gids",
                                  "perfquery", "rdma-statistic", "ibnetdiscover",
                                  "nvidia-smi-q", "sacct", "scontrol-job"])
def test_large_captures_cost_less_than_their_text(kind: str) -> None:
    # The capture is its first sample repeated to ~200 KB (the same line objects, so what is
    # measured is what the parser builds). A model per row cost 15-75x the text (sacct's
    # `--format ALL` rows, ~100 cells each: 18x).
    sample = _first_readable(kind)
    lines = split_lines(normalize(sample.read_text(errors="replace")))
    times = 200_000 // sum(len(line) + 1 for line in lines) + 1
    many = lines * times
    module = registry.get(kind).module
    write_json(module.parse_lines(lines * 2), _Null())  # first-use imports and caches
    peak = _peak(lambda: write_json(module.parse_lines(many), _Null()))
    assert peak < 2 * times * sum(len(line) + 1 for line in lines)


def test_many_pfcwd_polls_cost_about_their_text() -> None:
    # A capture of the watchdog's tables polled again and again: every table's cells held at
    # once cost 8x the text; one table at a time, the cleaned lines and that table.
    sample = _first_readable("pfcwd")
    text = "\n".join([sample.read_text(errors="replace")] * 2000)
    module = registry.get("pfcwd").module
    peak = _peak(lambda: module.parse(text))
    assert module.parse(text).ports
    assert peak < 3 * len(text)


def test_perftest_rows_of_a_long_sweep_cost_their_text() -> None:
    # One run whose table is the sample's rows printed again and again (a long `-a` sweep or
    # a `--duration` loop): a validated row per line cost ~6x its text.
    sample = sorted((FIXTURES / "perftest").glob("*.txt"))[0]
    lines = split_lines(normalize(sample.read_text(errors="replace")))
    first = next(i for i, line in enumerate(lines) if line.lstrip().startswith("#bytes")) + 1
    end = next(i for i in range(first, len(lines)) if not line_is_row(lines[i]))
    rows = lines[first:end] * 400  # ~9,000 rows: the ratio is the same as at 46,000 (1.8x)
    module = registry.get("perftest").module
    result = module.parse("\n".join(lines[:first] + rows + lines[end:]))
    assert len(result.rows) == len(rows)
    peak = _peak(lambda: write_json(module.parse_lines(lines[:first] + rows + lines[end:]),
                                    _Null()))
    assert peak < 2 * sum(len(line) + 1 for line in rows)


def line_is_row(line: str) -> bool:
    """A perftest result row: numbers only."""
    return bool(line.split()) and all(v.replace(".", "", 1).isdigit() for v in line.split())


def test_lldp_table_costs_its_cleaned_lines_not_a_model_per_neighbor() -> None:
    # The readers work on the cleaned lines (tabs expanded, trailing blanks cut: a copy of
    # the text); the EOS table's rows are those lines read again, not a neighbor each (a
    # model per row took ~7x the text, a tuple with its cut strings ~5x).
    sample = sorted((FIXTURES / "lldp-neighbors").glob("*.txt"))[0]
    lines = split_lines(normalize(sample.read_text(errors="replace")))
    head = next(i for i, line in enumerate(lines) if line.lstrip().startswith("Port"))
    rows = [line for line in lines[head + 2:] if line.split()[-1:] == ["120"]] * 400
    module = registry.get("lldp-neighbors").module
    assert len(module.parse("\n".join(lines[:head + 2] + rows)).neighbors) == len(rows)
    peak = _peak(lambda: write_json(module.parse_lines(lines[:head + 2] + rows), _Null()))
    assert peak < 2.5 * sum(len(line) + 1 for line in rows)
