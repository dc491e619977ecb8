"""Giving the memory a refresh freed back to the system (glibc's `malloc_trim`).

A full read decodes every series' JSON answer on the source's 32 threads; glibc gives each thread
its own arena and keeps what is freed in it for reuse, so the process's RSS grew each refresh
(`benchmarks/prom_memory.py --mode full`: 128 nodes, +10 MB a refresh with what Python holds
flat, glibc's free-but-kept memory growing). `trim()` hands the free pages of every arena back
once a refresh. Elsewhere than glibc (musl, macOS) it does nothing.

Side effect: the `malloc_trim(0)` call (a walk over the heap's free chunks: milliseconds).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        found: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    return found


def trim() -> bool:
    """Return the free memory of every glibc arena to the system; whether it could."""
    call = _malloc_trim()
    if call is None:
        return False
    call(0)
    return True
