"""A bounded memo for what is built from a file's text alone (a parsed runbook, a catalog file).

The library and the probe catalog are read again wherever a workspace needs them (every CLI
command, each app refresh, each runbook run in a test process), so that an edited file is seen at
once; parsing the same unchanged text again each time was 0.1 s a library. Keyed on the text
itself (and whatever else the result depends on), never on a modification time: a file edited
within the clock's resolution is still parsed anew. What is kept must be immutable (the frozen
models) or copied by the caller, as every reader of an entry shares it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class TextMemo(Generic[T]):
    """The last `size` results of `build`, by key (least recently used dropped first).

    A `build` that raises keeps nothing: the error is raised again on the next call.
    Thread-safe (the app reads the library on worker threads); two threads missing the same key
    at once may both build it, the first result kept.
    """

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        """The result for `key`, built by `build()` if not kept."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = build()
        with self._lock:
            kept = self._items.setdefault(key, value)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return kept

    def clear(self) -> None:
        """Forget everything kept."""
        with self._lock:
            self._items.clear()
