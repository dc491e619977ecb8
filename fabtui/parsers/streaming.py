"""Large inputs with bounded memory: lines read from a file, JSON written as it is produced.

`read_lines` yields the same lines as `split_lines(normalize(text))` of the whole decoded file
without ever holding the file. `Streamed` is a parse result whose biggest lists are produced
on demand (each item built, dumped and dropped); `write_json` writes it as exactly the text of
`json.dumps(model.model_dump(mode="json"), indent=2, ensure_ascii=False)` of the full result.
Parsers that offer `parse_lines(lines) -> Streamed` are read this way by `fabtui parse`.

A parser of a long list of rows keeps the rows' lines (`KeptLines`) instead of a model per row
and reads them again, as plain JSON dicts (`row_defaults`), when the result is written
(`with_rows`): memory is the rows' text, not 15-75x it. `write_json` also writes lists of
models item by item, so a whole-text result is never held a second time as dicts or text.
A parser whose models cost more than its parse returns `Plain`: the result as that plain JSON
data from the start, written as it is and validated into its model only when asked.
"""

from __future__ import annotations

import codecs
import json
import math
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain, islice
from json.encoder import encode_basestring  # what json.dumps uses with ensure_ascii=False
from operator import itemgetter
from typing import IO, TYPE_CHECKING, Any, Generic, TypeVar

from fabtui.gcpause import gc_paused
from fabtui.parsers.counter_table import CounterTable
from fabtui.parsers.text import normalize

if TYPE_CHECKING:
    from pydantic import BaseModel

_CHUNK = 1 << 20
Model = TypeVar("Model", bound="BaseModel")


def read_lines(handle: IO[bytes], chunk: int = _CHUNK) -> Iterator[str]:
    """The normalised lines of a binary file (UTF-8, undecodable bytes replaced), streamed."""
    # Chained in C from lists of a chunk's lines: a generator resumed per line costs more
    # than a parser's whole look at most lines.
    return chain.from_iterable(_line_batches(handle, chunk))


def _line_batches(handle: IO[bytes], chunk: int) -> Iterator[list[str]]:
    """The normalised lines of a binary file, one list per chunk read."""
    return map(itemgetter(1), text_batches(handle, chunk))


def text_batches(handle: IO[bytes], chunk: int) -> Iterator[tuple[str, list[str]]]:
    """`_line_batches` with each batch's text: its lines joined by newlines, as they were
    split (for a reader that hands a batch on whole, see `parsers/nccl_log/_prefetch.py`)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""
    first = True
    while True:
        data = handle.read(chunk)
        final = not data
        text = pending + decoder.decode(data, final=final)
        if first and text:
            first = False
            text = text.removeprefix("\ufeff")
        held = ""
        if not final and text.endswith("\r"):  # may be the first half of a CRLF
            text, held = text[:-1], "\r"
        text = _normalize_body(text)
        if final:
            yield text, text.split("\n")
            return
        lines = text.split("\n")
        tail = lines.pop()
        pending = tail + held  # the start of a line the next chunk ends
        if lines:
            yield text[:len(text) - len(tail) - 1], lines


class FileLines:
    """The lines of a regular file (as `read_lines` gives them), re-read on each iteration:
    parsers whose cleaning needs counts over the whole capture go over it more than once."""

    def __init__(self, path: str, chunk: int = _CHUNK) -> None:
        self.path = path
        self.chunk = chunk

    def __iter__(self) -> Iterator[str]:
        return chain.from_iterable(self.batches())

    def batches(self) -> Iterator[list[str]]:
        """The same lines, one list per chunk of the file read."""
        with open(self.path, "rb") as handle:
            yield from _line_batches(handle, self.chunk)


_BATCH_LINES = 4096


def line_batches(lines: Iterable[str]) -> Iterator[list[str]]:
    """`lines` as lists of consecutive lines (a file's chunks when `lines` is `FileLines`), for
    parsers that look at many lines at a time."""
    if isinstance(lines, FileLines):
        return lines.batches()
    if isinstance(lines, list):
        return (lines[start:start + _BATCH_LINES] for start in range(0, len(lines), _BATCH_LINES))
    source = iter(lines)
    return iter(lambda: list(islice(source, _BATCH_LINES)), [])


class KeptLines:
    """Numbered lines kept to be read again (rows re-read into JSON when written): a long
    capture's row lines cost their text and 8 bytes each, not a model per row."""

    def __init__(self) -> None:
        self.numbers = array("Q")
        self.texts: list[str] = []

    def add(self, number: int, text: str) -> None:
        """Keep line `number`."""
        self.numbers.append(number)
        self.texts.append(text)

    def __iter__(self) -> Iterator[tuple[int, str]]:
        return zip(self.numbers, self.texts, strict=True)

    def __len__(self) -> int:
        return len(self.texts)


def with_rows(head: Model, name: str, row_model: type[BaseModel],
              rows: Callable[[], Iterable[dict[str, object]]]) -> Streamed[Model]:
    """`head` whose list field `name` is produced on demand by `rows`, each row a plain
    `model_dump(mode="json")` of `row_model` (validated into one only when assembled)."""

    def models() -> Iterator[BaseModel]:
        return (row_model.model_validate(row) for row in rows())

    return Streamed(head, {name: models}, {name: rows})


class LazyList:
    """A list inside a dumped item (`Streamed.dumped`) that `write_json` writes item by item:
    a block with a long table of rows never holds them all as dicts or as text.

    `encoded`, where given, writes the same items faster: called with the indentation of the
    items' own lines, it gives their JSON text in pieces (each one or more consecutive items,
    joined as `write_json` joins them, see `flat_rows_encoded`)."""

    def __init__(self, produce: Callable[[], Iterable[object]],
                 encoded: Callable[[str], Iterable[str]] | None = None) -> None:
        self.produce = produce
        self.encoded = encoded

    def __iter__(self) -> Iterator[object]:
        return iter(self.produce())


class Encoded(str):
    """A list item already encoded as the JSON `write_json` would write for it (indented as an
    item of a result's top-level list), written as it is: for parsers that must build each item
    to check the input, so that keeping it costs its JSON text, not a model or a second read."""

    @classmethod
    def of(cls, item: dict[str, object]) -> Encoded:
        """`item` (a `model_dump(mode="json")`) encoded for its place in the list."""
        return cls(_indented(item, "    "))


class _Buffered:
    """What `_encode` appends its pieces to when they go to a stream a megabyte at a time:
    a piece per write made a system call each where standard output is unbuffered
    (PYTHONUNBUFFERED), ~20,000 for the 100 MB NCCL log's result."""

    __slots__ = ("_pieces", "_size", "_write")

    def __init__(self, write: Callable[[str], object]) -> None:
        self._pieces: list[str] = []
        self._size = 0
        self._write = write

    def append(self, text: str) -> None:
        """Add a piece; write what is gathered once it reaches a megabyte."""
        self._pieces.append(text)
        self._size += len(text)
        if self._size >= _CHUNK:
            self.flush()

    def flush(self) -> None:
        """Write what is gathered."""
        if self._pieces:
            self._write("".join(self._pieces))
            self._pieces.clear()
            self._size = 0


class _Sink:
    """What `_encode` appends its pieces to when they go straight to a stream."""

    __slots__ = ("append",)

    def __init__(self, write: Callable[[str], object]) -> None:
        self.append = write


def row_defaults(model: type[BaseModel]) -> dict[str, object]:
    """A row model's fields with their defaults, in the order `model_dump` writes them: the
    start of a row built as plain JSON (fields without a default must be filled in)."""
    return {name: info.default for name, info in model.model_fields.items()}


def _normalize_body(text: str) -> str:
    # The CLI normalises the text once and most parsers split it with `split_lines`, which
    # normalises again: twice here too, where it can matter (escapes that hid escapes).
    # A leading space keeps a BOM that starts a later chunk (inside the file).
    text = normalize(" " + text)[1:] if text.startswith("\ufeff") else normalize(text)
    return normalize(" " + text)[1:] if "\x1b" in text else text


@dataclass
class Streamed(Generic[Model]):
    """A result whose `lazy` list fields are left empty in `head` and produced on demand."""

    head: Model
    lazy: dict[str, Callable[[], Iterable[BaseModel]]] = field(default_factory=dict)
    dumped: dict[str, Callable[[], Iterable[dict[str, object] | Encoded]]] = \
        field(default_factory=dict)
    """For some lazy fields, their items as `model_dump(mode="json")` would give them, built
    without a model per item, or already `Encoded`: what `write_json` writes when it is
    there."""

    def assemble(self) -> Model:
        """The whole result as one model (every lazy list materialised)."""
        for name, produce in self.lazy.items():
            setattr(self.head, name, list(produce()))
        self.lazy = {}
        self.dumped = {}
        return self.head


class Plain(Generic[Model]):
    """A result held as the plain JSON data its model would dump (`model_dump(mode="json")`),
    built without pydantic: `write_json` writes the data as it is, and the model is validated
    from it only when asked for (`assemble`, `head`). For parsers whose models cost more to
    import and build than the parse itself (nccl-log)."""

    def __init__(self, data: dict[str, object], build: Callable[[dict[str, object]], Model]) \
            -> None:
        self.data = data
        self._build = build
        self._model: Model | None = None

    def assemble(self) -> Model:
        """The result as its model (validated from the data once)."""
        if self._model is None:
            self._model = self._build(self.data)
        return self._model

    @property
    def head(self) -> Model:
        """The same as `assemble()` (what a `Streamed` result offers)."""
        return self.assemble()


def write_json(streamed: Streamed[Any] | Plain[Any], out: IO[str]) -> None:
    """Write the result as indented JSON (and a final newline), one list item at a time.

    Lists of models (lazy or not) are dumped and written one item at a time, so the output
    never costs a second copy of the result, only the item being written.
    """
    if isinstance(streamed, Plain):
        buffered = _Buffered(out.write)
        with gc_paused():  # the data's many dicts would be rescanned for nothing
            _encode(streamed.data, "", buffered)  # type: ignore[arg-type]
            buffered.append("\n")
            buffered.flush()
        return
    from pydantic import BaseModel

    head = streamed.head
    rows = {key: value for key, value in head.__dict__.items()
            if key not in streamed.lazy and type(value) is list and value
            and all(isinstance(item, BaseModel) for item in value)}
    data = head.model_dump(mode="json", exclude=set(rows) if rows else None)
    keys = [key for key in type(head).model_fields if key in data or key in rows]
    out.write("{")
    for index, key in enumerate(keys):
        out.write(("," if index else "") + "\n  " + json.dumps(key, ensure_ascii=False) + ": ")
        produce = streamed.lazy.get(key)
        if produce is None and key not in rows:
            out.write(_indented(data[key], "  "))
            continue
        dumped = streamed.dumped.get(key)
        models = rows[key] if produce is None else produce()
        items = dumped() if dumped is not None and produce is not None else \
            (item.model_dump(mode="json") for item in models)
        empty = True
        sink = _Sink(out.write) if dumped is not None and produce is not None else None
        for item in items:
            out.write(("[" if empty else ",") + "\n    ")
            if isinstance(item, Encoded):
                out.write(item)
            elif sink is not None:  # may hold a `LazyList`: written as it is encoded
                _encode(item, "    ", sink)  # type: ignore[arg-type]
            else:
                out.write(_indented(item, "    "))
            empty = False
        out.write("[]" if empty else "\n  ]")
    out.write("\n}\n" if keys else "}\n")


def _indented(value: object, indent: str) -> str:
    """`json.dumps(value, indent=2, ensure_ascii=False)`, nested at `indent`, only faster.

    The standard library encodes indented JSON in pure Python; this walks dicts and lists
    itself and encodes each scalar with the C string encoder or `repr`, as `json` does.
    """
    out: list[str] = []
    _encode(value, indent, out)
    return "".join(out)


_SCALARS = frozenset({str, int, float, bool, type(None)})
_EMPTY_ALIKE = frozenset({list, dict})  # empty, `[]` and `{}` whatever the indentation
_STR = frozenset({str})


@lru_cache(maxsize=64)
def _flat_encoder(inner: str) -> Callable[[object], str]:
    """`encode` of a C-accelerated encoder writing the items of a flat container one per line
    at `inner` (the standard library uses its C encoder only when `indent` is None)."""
    return _separated_encoder(",\n" + inner)


_ROWS_PER_PIECE = 4096


def flat_rows_encoded(names: tuple[str, ...], rows: Iterable[tuple[object, ...]],
                      indent: str) -> Iterator[str]:
    """The JSON `write_json` writes for dicts of the scalar values `rows` under the keys
    `names`, as list items whose lines are indented by `indent`: pieces of up to
    `_ROWS_PER_PIECE` items joined by a comma and a line break. Each piece's values are
    encoded in one call of the C encoder, and placed in a template (a rank table of 200,000
    rows costs a fraction of encoding each row's dict)."""
    inner = indent + "  "
    template = "{\n" + inner + (",\n" + inner).join(
        encode_basestring(name) + ": %s" for name in names) + "\n" + indent + "}"
    joiner = ",\n" + indent
    values = _separated_encoder("\x00")
    width = len(names)
    source = iter(rows)
    while True:
        piece = list(islice(source, _ROWS_PER_PIECE))
        if not piece:
            return
        # Every value encoded, separated by NUL (which JSON text never holds raw: a string's
        # NUL is written escaped), then split and put in place, in C.
        texts = values(list(chain.from_iterable(piece)))[1:-1].split("\x00")
        yield joiner.join(map(template.__mod__, zip(*[iter(texts)] * width, strict=True)))


@lru_cache(maxsize=64)
def _separated_encoder(separator: str) -> Callable[[object], str]:
    """`json.dumps` (ensure_ascii off) of a flat container, `separator` between its items."""
    standard = json.JSONEncoder(ensure_ascii=False, separators=(separator, ": "))
    c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if c_make_encoder is None:  # not CPython
        return standard.encode
    # The one C encoder `standard.encode` would build on every call (with a closure and a
    # dict of markers): made once, it halves the cost of a row. A flat container holds no
    # container, so there is no cycle for the markers to catch.
    encoder = c_make_encoder(None, standard.default, encode_basestring, None, ": ", separator,
                             False, False, True)

    def encode(value: object) -> str:
        return "".join(encoder(value, 0))

    return encode


def _encode(value: object, indent: str, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif type(value) is int:
        out.append(int.__repr__(value))
    elif type(value) is float:
        out.append(float.__repr__(value) if math.isfinite(value) else json.dumps(value))
    elif type(value) is dict and _STR.issuperset(map(type, value)):
        if not value:
            out.append("{}")
            return
        inner = indent + "  "
        # The set test runs in C: rows are thousands of dicts of tens of scalars each.
        if _SCALARS.issuperset(map(type, value.values())) \
                or all(type(item) in _SCALARS or (type(item) in _EMPTY_ALIKE and not item)
                       for item in value.values()):
            # A flat mapping (most rows are): the C encoder with the indentation as its item
            # separator writes the same text several times faster than walking it here.
            body = _flat_encoder(inner)(value)
            out.append("{\n" + inner + body[1:-1] + "\n" + indent + "}")
            return
        # Runs of flat items between the nested ones go to the C encoder too (an entry with
        # twenty fields and one list of frames is one C call, the list and a second call).
        encode = _flat_encoder(inner)
        separator = "{\n" + inner
        run: dict[str, object] = {}
        for key, item in value.items():
            if type(item) in _SCALARS or (type(item) in _EMPTY_ALIKE and not item):
                run[key] = item
                continue
            if run:
                out.append(separator + encode(run)[1:-1])
                separator = ",\n" + inner
                run = {}
            out.append(separator + encode_basestring(key) + ": ")
            _encode(item, inner, out)
            separator = ",\n" + inner
        if run:
            out.append(separator + encode(run)[1:-1])
        out.append("\n" + indent + "}")
    elif type(value) is list:
        if not value:
            out.append("[]")
            return
        inner = indent + "  "
        if _SCALARS.issuperset(map(type, value)) \
                or all(type(item) in _SCALARS or (type(item) in _EMPTY_ALIKE and not item)
                       for item in value):
            body = _flat_encoder(inner)(value)
            out.append("[\n" + inner + body[1:-1] + "\n" + indent + "]")
            return
        separator = "[\n" + inner
        for item in value:
            out.append(separator)
            _encode(item, inner, out)
            separator = ",\n" + inner
        out.append("\n" + indent + "]")
    elif type(value) is CounterTable:
        # Written a block at a time with the C encoder: the table is never a dict as a whole.
        inner = indent + "  "
        encode = _flat_encoder(inner)
        separator = "{\n" + inner
        for batch in value.batches():
            if batch:
                out.append(separator + encode(batch)[1:-1])
                separator = ",\n" + inner
        out.append("{}" if separator[0] == "{" else "\n" + indent + "}")
    elif type(value) is LazyList:
        separator = "[\n" + indent + "  "
        pieces = value.encoded(indent + "  ") if value.encoded is not None else None
        for item in value if pieces is None else pieces:
            out.append(separator)
            if pieces is None:
                _encode(item, indent + "  ", out)
            else:
                out.append(item)  # type: ignore[arg-type]  # (text of items, see `LazyList`)
            separator = ",\n" + indent + "  "
        out.append("[]" if separator[0] == "[" else "\n" + indent + "]")
    else:  # anything unusual: the standard encoder (json escapes newlines inside strings)
        out.append(json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent))
