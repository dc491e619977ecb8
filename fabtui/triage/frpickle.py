"""Flight Recorder dumps as PyTorch writes them (pickles), read without running any code.

A dump is a pickled dict of plain data (dicts, lists, tuples, strings, numbers). The unpickler
here refuses every global lookup, so a pickle that names a class or a function (`os.system`,
`builtins.eval`: how a malicious pickle runs code) is rejected before anything is called. The
plain data is read as the Flight Recorder parser reads a dump's JSON form.
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
    return flight_recorder.from_dump(_jsonable(plain))


def _jsonable(value: Any) -> Any:
    """Tuples to lists, bytes and other leaves to strings, keys to strings, NaN to None."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if isinstance(value, bytes | bytearray):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, float) and not math.isfinite(value):
        return None  # as the parser reads NaN and infinities in a dump's JSON
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)
