"""Decoded posting lists of frequent words, kept on disk beside the index they were decoded from.

The scorer decodes a word's whoosh posting blocks into numpy arrays (`_scoring._leaf_postings`)
and keeps them in memory, which serves a long-lived process (the app) well; but every
`fabtui cases search` is a new process, and decoding the blocks of a query's frequent words
(pickle, zlib, ~1,700 blocks for a four-word query at 100,000 cases) was most of a cold search:
150 ms p50 against a goal of 100 (`benchmarks/cases_search.py`, cold row). So a list of
`MIN_STORED` postings or more is written here once decoded, and the next process loads it.

A segment never changes once written, so a list stored under its segment id stays right; a
merge makes new segments (their lists decoded and stored anew) and `forget_others` removes the
lists of segments gone. Deletions are not in these lists (the scorer masks them). Side
effects: a search may write files into `<index>/decoded/` (each written to a temporary name and
renamed, so a reader never sees half of one); a folder that cannot be written (read-only data)
only means nothing is stored, and a file that cannot be read is decoded again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

MIN_STORED = 2048
"""Postings a list needs to be stored: shorter ones decode in well under a millisecond (one or
a few blocks of 128), and storing every word would fill the folder with small files."""

MAX_FOLDER_BYTES = 64 * 1024 * 1024
"""The folder holds at most this much (a list that would go past it is not stored): 12 bytes
a posting, and the app's warm-up decodes the 100 most frequent words, which at 100,000 cases
would be ~90 MB beside a 238 MB index; the benchmark's ten queries stored 6.4 MB."""


_STORED_NAME = re.compile(r"(\w+)-[0-9a-f]{24}\.npz")
"""A stored list's file name: its segment id (whoosh's `MAIN_` and 16 of [0-9a-z]), a digest."""
STALE_PART_S = 3600
"""A temporary file (`*.part`) older than this was left by a process that died writing it."""


class DecodedStore:
    """The folder of one index's stored posting lists."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, segment: str, field: str, term: str) -> Path:
        digest = hashlib.blake2b(f"{field}\0{term}".encode(), digest_size=12).hexdigest()
        return self.folder / f"{segment}-{digest}.npz"

    def load(self, segment: str, field: str, term: str) -> tuple[Any, Any] | None:
        """(doc numbers, weights) stored for `term` of `field` in `segment`, or None."""
        try:
            with np.load(self._path(segment, field, term)) as stored:
                ids, weights = stored["ids"], stored["weights"]
        except Exception:  # only a cache: a file cut short (BadZipFile) or damaged is decoded
            return None
        if ids.dtype != np.int64 or weights.dtype != np.float32 or len(ids) != len(weights):
            return None
        return ids, weights

    def save(self, segment: str, field: str, term: str, ids: Any, weights: Any) -> None:
        """Store a decoded list of `MIN_STORED` postings or more (shorter ones, and one that
        would take the folder past `MAX_FOLDER_BYTES`: nothing)."""
        if len(ids) < MIN_STORED:
            return
        with contextlib.suppress(OSError):
            self.folder.mkdir(exist_ok=True)
            held = sum(path.stat().st_size for path in self.folder.iterdir())
            if held + ids.nbytes + weights.nbytes > MAX_FOLDER_BYTES:
                return
            handle, temporary = tempfile.mkstemp(dir=self.folder, suffix=".part")
            try:
                with os.fdopen(handle, "wb") as out:
                    np.savez(out, ids=ids, weights=weights)
                os.chmod(temporary, 0o644)  # mkstemp's 0600 would keep other users decoding
                os.replace(temporary, self._path(segment, field, term))
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise

    def forget_others(self, segments: set[str]) -> None:
        """Remove the lists of segments not in `segments` (merged away), and temporary files
        a dead writer left (`STALE_PART_S`); nothing else (another writer's file in progress,
        a name this store did not make)."""
        with contextlib.suppress(OSError):
            for path in self.folder.iterdir():
                named = _STORED_NAME.fullmatch(path.name)
                with contextlib.suppress(OSError):
                    gone = named is not None and named.group(1) not in segments
                    dead = path.suffix == ".part" and \
                        time.time() - path.stat().st_mtime > STALE_PART_S
                    if gone or dead:
                        path.unlink()
