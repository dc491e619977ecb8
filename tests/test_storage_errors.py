"""A full disk or a folder fabtui may not write is named as what it is (field review L1), not as
"internal error ... please report it": the data folder on a real, tiny tmpfs (mounted in a user
namespace of the test's own), a data folder without write permission, a read-only journal, a
data folder whose path runs through a file.

fabtui runs as its own process here. As root (a container), permission bits do not bind, so
those runs happen in a user namespace with no capabilities over the files (`unshare --user`),
where they bind as for anyone else."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO

UNSHARE = shutil.which("unshare")


def fabtui(config: Path, *args: str, wrap: tuple[str, ...] = ()) -> tuple[int, str]:
    """Exit status and stderr of `fabtui --config CONFIG ARGS`, run under `wrap`."""
    done = subprocess.run([*wrap, sys.executable, "-m", "fabtui", "--config", str(config),
                           *args], capture_output=True, text=True, timeout=120, check=False,
                          cwd=config.parent, env={**os.environ, "PYTHONPATH": str(REPO)})
    return done.returncode, done.stderr


@functools.cache
def _works(*argv: str) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=30, check=False).returncode == 0
    except OSError:
        return False


def on_tmpfs(folder: Path, size: str) -> tuple[str, ...]:
    """A wrapper that runs a command with a `size` tmpfs mounted on `folder` (a mount of the
    command's own, in a user and mount namespace): skips where the system allows none."""
    if UNSHARE is None or not _works(UNSHARE, "--user", "--map-root-user", "--mount", "sh",
                                     "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"):
        pytest.skip("no user namespace with a tmpfs mount here")
    return (UNSHARE, "--user", "--map-root-user", "--mount", "sh", "-c",
            f'mount -t tmpfs -o size={size} tmpfs "{folder}" && exec "$@"', "sh")


def unprivileged() -> tuple[str, ...]:
    """A wrapper under which permission bits bind (nothing when not root)."""
    if os.geteuid() != 0:
        return ()
    if UNSHARE is None or not _works(UNSHARE, "--user", "true"):
        pytest.skip("root, and no user namespace to drop the override of permissions")
    return (UNSHARE, "--user")


@pytest.fixture
def data(tmp_path: Path) -> tuple[Path, Path]:
    """A config and its (empty) data folder."""
    folder = tmp_path / "data"
    folder.mkdir()
    config = tmp_path / "config.toml"
    config.write_text('data_dir = "data"\n')
    return config, folder


@pytest.mark.parametrize("command", [("cases", "stats"), ("runbook", "run", "rank-mapping-check")],
                         ids=["cases", "runbook"])
def test_a_full_disk_is_named_with_where_and_what_was_kept(
        data: tuple[Path, Path], command: tuple[str, ...]) -> None:
    config, folder = data
    code, err = fabtui(config, *command, wrap=on_tmpfs(folder, "40k"))
    assert code == 2, err
    assert "internal error" not in err and "please report" not in err
    assert err.strip().splitlines()[-1] == (
        "fabtui: disk full while writing to the data folder data (0 MB free): the command "
        "stopped there; what it had recorded before is kept (an interrupted runbook session "
        "continues with `fabtui runbook resume`)")


def test_a_data_folder_fabtui_may_not_write_is_named(data: tuple[Path, Path]) -> None:
    config, folder = data
    folder.chmod(0o555)
    try:
        code, err = fabtui(config, "cases", "list", wrap=unprivileged())
        assert code == 2, err
        assert err == "fabtui: permission denied: cannot create files in data: check the " \
                      "folder's owner and mode, or set data_dir to a folder you can write\n"
        code, err = fabtui(config, "runbook", "sessions", wrap=unprivileged())
        assert code == 2, err
        assert err.startswith("fabtui: cannot open a database in the data folder data "
                              "(unable to open database file): it must be a folder you can "
                              "write")
    finally:
        folder.chmod(0o755)


def test_a_read_only_journal_is_named(data: tuple[Path, Path]) -> None:
    config, folder = data
    assert fabtui(config, "runbook", "run", "rank-mapping-check")[0] == 0
    (folder / "journal.sqlite").chmod(0o444)
    code, err = fabtui(config, "runbook", "run", "rank-mapping-check", wrap=unprivileged())
    assert code == 2, err
    assert err.strip().splitlines()[-1] == (
        "fabtui: cannot write to the data folder data: a database there is read-only (attempt "
        "to write a readonly database); check the owner and mode of its files, or set "
        "data_dir to a folder you can write")


def test_a_data_folder_whose_path_runs_through_a_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file\n")
    config = tmp_path / "config.toml"
    config.write_text('data_dir = "taken/data"\n')
    code, err = fabtui(config, "cases", "list")
    assert code == 2
    assert err == "fabtui: not a folder: taken/data cannot be made: a file stands in its path\n"
