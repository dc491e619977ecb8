"""Files fabtui writes for a user (exported cases, reports, generated topologies) are written
through one helper, `fabtui.paths.write_file`: a random temporary name created with O_EXCL in
the destination folder, then `os.replace`. A symlink someone planted in a shared folder, at the
temporary name an earlier fabtui used or at the destination itself, never makes fabtui write a
file outside that folder (field review M3)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui import paths

CASE = "busbw-alltoall-false-alarm-old-gate"  # a shipped case


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file outside the output folder that nothing may overwrite."""
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "victim"
    target.write_text("ORIGINAL\n")
    return target


def config(tmp_path: Path) -> Path:
    path = tmp_path / "fabtui.toml"
    path.write_text(f'data_dir = "{tmp_path / "data"}"\n')
    return path


def test_cases_export_never_writes_through_a_planted_symlink(
        tmp_path: Path, victim: Path, run: Callable[..., Result]) -> None:
    out = tmp_path / "exp"
    out.mkdir()
    (out / f"{CASE}.md.tmp").symlink_to(victim)  # the temporary name fabtui used to write
    result = run("--config", str(config(tmp_path)), "cases", "export", "-o", str(out),
                 "--id", CASE)
    assert result.exit_code == 0, result.output
    assert victim.read_text() == "ORIGINAL\n"
    exported = out / f"{CASE}.md"
    assert exported.is_file() and not exported.is_symlink()
    assert f"id: {CASE}" in exported.read_text()
    assert sorted(p.name for p in out.iterdir()) == [f"{CASE}.md", f"{CASE}.md.tmp"]


def test_report_output_never_writes_through_a_planted_symlink(
        tmp_path: Path, victim: Path, run: Callable[..., Result]) -> None:
    out = tmp_path / "rout"
    out.mkdir()
    (out / ".r.html.partial").symlink_to(victim)  # the temporary name fabtui used to write
    result = run("--config", str(config(tmp_path)), "report", "--case", CASE,
                 "-o", str(out / "r.html"))
    assert result.exit_code == 0, result.output
    assert victim.read_text() == "ORIGINAL\n"
    assert (out / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in out.iterdir()) == [".r.html.partial", "r.html"]


def test_a_symlink_at_the_destination_is_replaced_not_followed(tmp_path: Path,
                                                              victim: Path) -> None:
    link = tmp_path / "out.txt"
    link.symlink_to(victim)
    paths.write_file(link, "new\n")
    assert victim.read_text() == "ORIGINAL\n"
    assert not link.is_symlink() and link.read_text() == "new\n"


def test_a_new_file_gets_the_mode_open_would_give_it_and_a_replaced_file_keeps_its_own(
        tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        fresh = tmp_path / "fresh.txt"
        paths.write_file(fresh, b"x")
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o640
        kept = tmp_path / "kept.txt"
        kept.write_text("old")
        kept.chmod(0o600)
        paths.write_file(kept, "new")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and kept.read_text() == "new"
    finally:
        os.umask(old)


def test_a_failed_write_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    target.mkdir()  # the replace fails: a folder stands where the file goes
    (target / "kept").write_text("kept\n")
    with pytest.raises(OSError):
        paths.write_file(target, "new\n")
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]
    assert (target / "kept").read_text() == "kept\n"
