"""Flight Recorder dumps as PyTorch writes them (pickles), read without running any code.

A dump is a pickled dict of plain data (dicts, lists, tuples, strings, numbers). The unpickler
here refuses every global lookup, so a pickle that names a class or a function (`os.system`,
`builtins.eval`: how a malicious pickle runs code) is rejected before anything is called. The
plain data is read as the Flight Recorder parser reads a dump's JSON form.

Unpickling is linear in the input, but what it gives is a graph: a memo reference (`BINGET`)
puts one object in many places, and PyTorch's own dumps use that (each entry's stack frames are
shared dicts). Read as plain JSON, every reference is a copy, so 324 bytes (`x = [x, x]` forty
times) stand for 2**40 values. The conversion counts every value it writes, shared references
each time they are reached, and stops at a budget (`value_budget`) and at `MAX_DEPTH`, so
a reference bomb or a pickle nested 100,000 deep is refused in bounded time and memory.
"""

from __future__ import annotations

import io
import math
import pickle
from typing import Any

from fabtui.model.parsed.flight_recorder import FlightRecorder
from fabtui.parsers import flight_recorder
from fabtui.parsers.errors import ParseError

MAX_BYTES = 256 * 1024 * 1024
MAX_DEPTH = 32
"""Deepest nesting a dump may have. A real one nests six levels (the dump, `entries`, an entry,
its `frames` or `input_sizes`, a frame dict or a size list, a value)."""
MAX_VALUES = 16_000_000
"""Most values (containers and leaves, a shared one counted each time it is reached) a dump
may stand for. A dump of the default 2,000 entries (`TORCH_NCCL_TRACE_BUFFER_SIZE`), each of
some 25 fields and an 80-frame stack (4 values a frame), stands for about 700,000; ten times
that buffer, about 7 million (1.2 GB to read, its frames shared as PyTorch shares them). The
cap is over twice that; a pickle must be 1 MB to reach it (`VALUES_PER_BYTE`)."""
VALUES_PER_BYTE = 16
"""Values a dump may stand for per byte of pickle. A value costs at least a 2-byte memo
reference (`BINGET`), and a shared frame dict (4 values) is the densest real case: about 2 a
byte; 16 leaves room eight times over, and refuses a small bomb before it costs anything."""
MIN_VALUES = 100_000
DUMP_KEYS = frozenset({"entries", "pg_config", "pg_status"})
"""A pickled dict with none of these at its top is not a Flight Recorder dump."""


class UnsafePickle(ValueError):
    """The pickle is not plain data (it names a class or function), or is not a pickle."""


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise UnsafePickle(f"refers to {module}.{name}: not a plain-data Flight Recorder dump "
                           "(refused without loading it)")

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafePickle("uses persistent ids: not a plain-data Flight Recorder dump")


def is_pickle(head: bytes) -> bool:
    """True when `head` starts like a pickle (protocol 2+)."""
    return len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5


def load_plain(data: bytes) -> Any:
    """The plain data of a pickle; raises `UnsafePickle` for anything else."""
    if len(data) > MAX_BYTES:
        raise UnsafePickle(f"larger than {MAX_BYTES // (1024 * 1024)} MiB")
    try:
        return _PlainUnpickler(io.BytesIO(data)).load()
    except UnsafePickle:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError,
            AttributeError, MemoryError, RecursionError, OverflowError) as exc:
        raise UnsafePickle(f"not a readable pickle ({type(exc).__name__})") from None


def read_dump(data: bytes) -> FlightRecorder:
    """A pickled Flight Recorder dump, as the Flight Recorder parser reads its JSON form
    (`ParseError` when the dict has none of `DUMP_KEYS`)."""
    plain = load_plain(data)
    if not isinstance(plain, dict):
        raise UnsafePickle("the pickle is not a dict: not a Flight Recorder dump")
    if not DUMP_KEYS & plain.keys():
        raise ParseError(flight_recorder.KIND, None, "no Flight Recorder dump keys "
                         "(entries, pg_config, pg_status) in the pickle")
    return flight_recorder.from_dump(_Jsonable(value_budget(len(data))).convert(plain, 0))


def value_budget(size: int) -> int:
    """How many values a pickle of `size` bytes may stand for once its shared references are
    copied (see `MAX_VALUES`, `VALUES_PER_BYTE`)."""
    return min(MAX_VALUES, MIN_VALUES + VALUES_PER_BYTE * size)


class _Jsonable:
    """Plain data as JSON gives it: tuples to lists, bytes and other leaves to strings, keys
    to strings, NaN to None; raises `UnsafePickle` past `budget` values or `MAX_DEPTH`."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.left = budget

    def convert(self, value: Any, depth: int) -> Any:
        self.left -= 1
        if self.left < 0:
            raise UnsafePickle(f"stands for more than {self.budget:,} values once its shared "
                               "references are copied (a reference bomb?): not a Flight "
                               "Recorder dump PyTorch writes")
        if isinstance(value, dict | list | tuple | set | frozenset) and depth >= MAX_DEPTH:
            raise UnsafePickle(f"nests deeper than {MAX_DEPTH} levels: not a Flight Recorder "
                               "dump (a real one nests six)")
        if isinstance(value, dict):
            return {_key(k): self.convert(v, depth + 1) for k, v in value.items()}
        if isinstance(value, list | tuple | set | frozenset):
            return [self.convert(v, depth + 1) for v in value]
        return _leaf(value)


def _key(key: Any) -> str:
    """A dict key as a string; a tuple or frozenset key (never in a dump: PyTorch's keys are
    strings) is refused rather than printed, which could copy shared references unbounded."""
    if isinstance(key, tuple | frozenset):
        raise UnsafePickle(f"has a {type(key).__name__} as a dict key: not a Flight Recorder "
                           "dump PyTorch writes")
    try:
        return str(key)
    except ValueError:  # an int of more than 4,300 digits (Python's limit for printing one)
        raise UnsafePickle("has a dict key too long to print: not a Flight Recorder dump "
                           "PyTorch writes") from None


def _leaf(value: Any) -> Any:
    """A leaf value as JSON would hold it."""
    if isinstance(value, bytes | bytearray):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, float) and not math.isfinite(value):
        return None  # as the parser reads NaN and infinities in a dump's JSON
    if isinstance(value, int) and value.bit_length() > 64:
        raise UnsafePickle(f"holds a {value.bit_length()}-bit integer: not a Flight Recorder "
                           "dump (PyTorch writes 64-bit ones)")
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)
