"""The ssh ControlMaster folder is used only when it is this user's own and nobody else may
write it (field review L6): in a shared temporary folder another user can create
`fabtui-ssh-<uid>` first, as a folder writable to all, or as a symlink to one, and plant a
socket that every command to a host would then run through."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from fabtui.transports.ssh import SshOptions, SshTarget, SshTransport


def control_path(transport: SshTransport) -> Path:
    """The folder of the ControlPath ssh is given."""
    argv = transport.base_argv(SshTarget(name="node001", host="127.0.0.1"), batch=True)
    option = next(a for a in argv if a.startswith("ControlPath="))
    return Path(option.removeprefix("ControlPath=")).parent


def assert_private(folder: Path) -> None:
    found = os.lstat(folder)
    assert stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid()
    assert stat.S_IMODE(found.st_mode) == 0o700


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary folder standing for the shared /tmp (`tempfile.gettempdir()`)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_the_default_folder_is_made_private_and_used(tmp: Path) -> None:
    folder = control_path(SshTransport())
    assert folder == tmp / f"fabtui-ssh-{os.getuid()}"
    assert_private(folder)


def test_a_planted_folder_writable_to_all_is_not_used(tmp: Path) -> None:
    planted = tmp / f"fabtui-ssh-{os.getuid()}"
    planted.mkdir()
    planted.chmod(0o777)
    (planted / "socket-of-someone-else").write_text("")
    folder = control_path(SshTransport())
    assert folder != planted and folder.parent == tmp
    assert_private(folder)
    assert list(folder.iterdir()) == []


def test_a_planted_symlink_is_not_followed(tmp: Path, tmp_path_factory: pytest.TempPathFactory
                                           ) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    elsewhere.chmod(0o777)
    (tmp / f"fabtui-ssh-{os.getuid()}").symlink_to(elsewhere)
    folder = control_path(SshTransport())
    assert folder.resolve() != elsewhere.resolve()
    assert_private(folder)


def test_a_configured_folder_group_writable_is_not_used(tmp_path: Path) -> None:
    shared = tmp_path / "cm"
    shared.mkdir()
    shared.chmod(0o770)
    folder = control_path(SshTransport(SshOptions(control_dir=shared)))
    assert folder != shared
    assert_private(folder)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can make a folder another user owns")
def test_a_folder_another_user_owns_is_not_used(tmp: Path) -> None:
    planted = tmp / f"fabtui-ssh-{os.getuid()}"
    planted.mkdir(mode=0o700)
    os.chown(planted, 65534, 65534)
    folder = control_path(SshTransport())
    assert folder != planted
    assert_private(folder)
