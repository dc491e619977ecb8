"""Decoded posting lists, kept on disk beside the index they were decoded from.

The scorer decodes a word's whoosh posting blocks into numpy arrays (`_scoring._leaf_postings`)
and keeps them in memory, which serves a long-lived process (the app) well; but every
`fabtui cases search` is a new process, and decoding the blocks of a query's words (pickle,
zlib: ~0.7 us a posting, ~1,700 blocks for a four-word query at 100,000 cases) was most of a
cold search (`benchmarks/cases_search.py`, cold row). So a list of `MIN_STORED` postings or
more is written here once decoded, and the next process reads it back in one read.

Layout: one folder per segment (`<segment id>/`), one file per word (`<digest>.bin`: a magic,
the count, the doc numbers as int64, the weights as float32, native byte order). A segment
never changes once written, so a list stored under its id stays right; a merge makes new
segments (their lists decoded and stored anew) and `forget_others` removes the folders of
segments gone, so a cold search lists only this folder's top level, never every stored file.
Deletions are not in these lists (the scorer masks them). Side effects: a search may write
files under `<index>/decoded/` (each written to a temporary `*.part` at the top level and
renamed into place, so a reader never sees half of one) and, the folder full, remove the
lists read longest ago (a read touches its file's mtime); a folder that cannot be written
(read-only data) only means nothing is stored, and a file that cannot be read is decoded again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

MIN_STORED = 256
"""Postings a list needs to be stored: decoding 256 takes ~0.2 ms, reading them back ~0.03;
shorter lists (one or two blocks of 128) decode about as fast as a file opens."""

MAX_FOLDER_BYTES = 64 * 1024 * 1024
"""The folder holds at most this much: 12 bytes a posting, and the app's warm-up decodes the
100 most frequent words, which at 100,000 cases would be ~90 MB beside a 238 MB index; the
benchmark's ten queries stored 6.4 MB. A list that would go past it makes room by removing the
lists read longest ago (`EVICT_TO`); one larger than the whole cap is not stored."""
EVICT_TO = 0.75
"""Eviction empties the folder down to this share of the cap, so a full folder is not listed
again at every save."""

_MAGIC = b"FTPL\x01\x00\x00\x00"
_HEADER = len(_MAGIC) + 8  # the magic, then the count as uint64
_SEGMENT = re.compile(r"\w+")
"""A segment folder's name: whoosh's segment id (`MAIN_` and 16 of [0-9a-z])."""
_OLD_FORMAT = re.compile(r"\w+-[0-9a-f]{24}\.npz")
"""A list stored by an earlier version, flat in the folder as .npz: removed, never read."""
STALE_PART_S = 3600
"""A temporary file (`*.part`) older than this was left by a process that died writing it."""


class DecodedStore:
    """The folder of one index's stored posting lists."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._held: int | None = None  # bytes in the folder, counted at the first save

    def _path(self, segment: str, field: str, term: str) -> Path:
        digest = hashlib.blake2b(f"{field}\0{term}".encode(), digest_size=12).hexdigest()
        return self.folder / segment / f"{digest}.bin"

    def load(self, segment: str, field: str, term: str) -> tuple[Any, Any] | None:
        """(doc numbers, weights) stored for `term` of `field` in `segment`, or None. The
        arrays are read-only (views of the file's bytes)."""
        path = self._path(segment, field, term)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # read now: the last a full folder evicts (atime is often not kept)
        if len(data) < _HEADER or data[:len(_MAGIC)] != _MAGIC:
            return None  # only a cache: a file cut short or not ours is decoded again
        count = int.from_bytes(data[len(_MAGIC):_HEADER], "little")
        if len(data) != _HEADER + 12 * count:
            return None
        ids = np.frombuffer(data, np.int64, count, _HEADER)
        weights = np.frombuffer(data, np.float32, count, _HEADER + 8 * count)
        return ids, weights

    def save(self, segment: str, field: str, term: str, ids: Any, weights: Any) -> None:
        """Store a decoded list of `MIN_STORED` postings or more (shorter ones: nothing);
        where it would take the folder past `MAX_FOLDER_BYTES`, the lists read longest ago
        are removed first (one larger than the cap: not stored)."""
        if len(ids) < MIN_STORED or len(ids) != len(weights) or not _SEGMENT.fullmatch(segment):
            return
        size = _HEADER + 12 * len(ids)
        if size > MAX_FOLDER_BYTES * EVICT_TO:
            return
        with contextlib.suppress(OSError):
            if self._held is None:
                self._held = _bytes_under(self.folder)
            if self._held + size > MAX_FOLDER_BYTES:
                self._held = _evict(self.folder, int(MAX_FOLDER_BYTES * EVICT_TO) - size)
            target = self._path(segment, field, term)
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.folder, suffix=".part")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(_MAGIC + len(ids).to_bytes(8, "little"))
                    out.write(np.ascontiguousarray(ids, dtype=np.int64).tobytes())
                    out.write(np.ascontiguousarray(weights, dtype=np.float32).tobytes())
                os.chmod(temporary, 0o644)  # mkstemp's 0600 would keep other users decoding
                os.replace(temporary, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
            self._held += size

    def forget_others(self, segments: set[str]) -> None:
        """Remove the folders of segments not in `segments` (merged away), lists an earlier
        version stored, and temporary files a dead writer left (`STALE_PART_S`); nothing else
        (another writer's file in progress, a name this store did not make). Lists only the
        folder's top level."""
        with contextlib.suppress(OSError):
            for path in self.folder.iterdir():
                with contextlib.suppress(OSError):
                    if path.suffix == ".part":
                        if time.time() - path.stat().st_mtime > STALE_PART_S:
                            path.unlink()
                    elif _OLD_FORMAT.fullmatch(path.name):
                        path.unlink()
                    elif path.is_dir() and _SEGMENT.fullmatch(path.name) \
                            and path.name not in segments:
                        shutil.rmtree(path, ignore_errors=True)
                        self._held = None  # counted again at the next save


def _bytes_under(folder: Path) -> int:
    """The bytes of every file in `folder` and its segment folders (0 when it is missing)."""
    total = 0
    with contextlib.suppress(OSError):
        for path in folder.iterdir():
            with contextlib.suppress(OSError):
                if path.is_dir():
                    total += sum(f.stat().st_size for f in path.iterdir())
                else:
                    total += path.stat().st_size
    return total


def _evict(folder: Path, keep: int) -> int:
    """Remove stored lists, the least recently read first, until the folder holds at most
    `keep` bytes; the bytes it holds after."""
    lists: list[tuple[float, int, Path]] = []
    other = 0
    with contextlib.suppress(OSError):
        for path in folder.iterdir():
            with contextlib.suppress(OSError):
                if not path.is_dir():
                    other += path.stat().st_size
                    continue
                for stored in path.iterdir():
                    info = stored.stat()
                    lists.append((info.st_mtime, info.st_size, stored))
    held = other + sum(size for _, size, _ in lists)
    for _, size, path in sorted(lists, key=lambda item: item[0]):
        if held <= keep:
            break
        with contextlib.suppress(OSError):
            path.unlink()
            held -= size
    return held
