"""The library and the probe catalog are read again for every workspace, reusing what was parsed
from unchanged text (fabtui/textmemo.py): an edit is seen at once, even one that keeps the
file's size and modification time, and a broken file is reported every time it is read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fabtui.errors import InputError
from fabtui.paths import shipped_dir
from fabtui.probes.catalog import load_catalog
from fabtui.runbooks.library import load_library

SHIPPED_RUNBOOK = shipped_dir("runbooks") / "link-flap.md"
SHIPPED_PROBES = shipped_dir("probes") / "nic.toml"


def _same_stat_edit(path: Path, old: str, new: str) -> None:
    """Replace `old` by `new` (same length) and put the modification time back."""
    assert len(old) == len(new)
    stat = path.stat()
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size


def test_an_edited_runbook_is_read_anew_and_an_unchanged_one_is_the_same(tmp_path: Path) -> None:
    copy = tmp_path / SHIPPED_RUNBOOK.name
    copy.write_text(SHIPPED_RUNBOOK.read_text(encoding="utf-8"), encoding="utf-8")
    first = load_library([tmp_path]).runbooks["link-flap"]
    assert load_library([tmp_path]).runbooks["link-flap"] == first
    _same_stat_edit(copy, f"title: {first.meta.title}", f"title: {first.meta.title.upper()}")
    assert load_library([tmp_path]).runbooks["link-flap"].meta.title == first.meta.title.upper()


def test_a_runbook_broken_after_reading_is_reported_on_each_read(tmp_path: Path) -> None:
    copy = tmp_path / SHIPPED_RUNBOOK.name
    copy.write_text(SHIPPED_RUNBOOK.read_text(encoding="utf-8"), encoding="utf-8")
    assert "link-flap" in load_library([tmp_path]).runbooks
    _same_stat_edit(copy, "id: link-flap", "id: Link_Flap")
    for _ in range(2):
        library = load_library([tmp_path])
        assert "link-flap" not in library.runbooks
        assert library.broken and all(issue.path.endswith("link-flap.md")
                                      for issue in library.broken)


def test_an_edited_catalog_file_is_read_anew_and_its_problems_every_time(tmp_path: Path) -> None:
    copy = tmp_path / SHIPPED_PROBES.name
    copy.write_text(SHIPPED_PROBES.read_text(encoding="utf-8"), encoding="utf-8")
    names = set(load_catalog([tmp_path]))
    assert names and set(load_catalog([tmp_path])) == names
    text = copy.read_text(encoding="utf-8")
    assert "[[probe]]" in text
    _same_stat_edit(copy, "[[probe]]", "[[prube]]")
    for _ in range(2):
        with pytest.raises(InputError) as raised:
            load_catalog([tmp_path])
        assert any(p.source == str(copy) for p in raised.value.problems)
