"""Where fabtui finds its shipped data and keeps the user's files.

The shipped folders (`topology/`, `runbooks/`, `cases/`, `probes/`, `examples/`, `configs/`)
sit at the top of the source tree. A wheel carries them inside the package as
`fabtui/_data/<name>` (see pyproject.toml), so both a source checkout (editable install) and a
plain `pip install .` find them.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import platformdirs

APP_NAME = "fabtui"
SHIPPED = ("topology", "runbooks", "cases", "probes", "examples", "configs")

_PACKAGE = Path(__file__).resolve().parent


def shipped_dir(name: str) -> Path:
    """The shipped data folder `name` (one of `SHIPPED`), installed or in the source tree."""
    if name not in SHIPPED:
        raise ValueError(f"unknown shipped folder {name!r}")
    installed = _PACKAGE / "_data" / name
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / name


def demo_topology() -> Path:
    """The built-in demo fabric every other part of the product runs on by default."""
    return shipped_dir("topology") / "demo.yaml"


def shipped_templates() -> Path:
    """Folder of the shipped topology templates."""
    return shipped_dir("topology") / "templates"


def user_config_file() -> Path:
    """The per-user configuration file (it need not exist)."""
    return platformdirs.user_config_path(APP_NAME) / "config.toml"


def default_data_dir() -> Path:
    """Where journals and the case database live unless configured otherwise."""
    return platformdirs.user_data_path(APP_NAME)


def display_path(path: Path) -> str:
    """The path as messages show it: relative to the working folder when below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def write_file(path: Path, data: str | bytes, *, durable: bool = False) -> None:
    """Write `data` (text as UTF-8) to `path` atomically and without following planted links.

    The bytes go to a new file with a random name in the destination folder, created with
    O_CREAT|O_EXCL (`tempfile.mkstemp`): a symlink or file someone planted at a predictable
    temporary name is never opened, so nothing outside the folder is written. The file then
    replaces `path` (`os.replace`: a symlink at `path` itself is replaced, not followed), so a
    reader sees the old file or the new one, never half of one. `durable` syncs it to disk
    first. The new file gets the mode a plain `open` would give it (0666 less the umask), or
    the replaced file's own mode. Every writer of a file a user reads goes through here.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    folder = path.parent
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial",
                                             dir=folder)
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(payload)
            out.flush()
            os.fchmod(out.fileno(), _mode_for(path))
            if durable:
                os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def write_output(path: Path, data: str | bytes) -> None:
    """`write_file` for a file the user named (`-o PATH`): a folder that does not exist, a file
    standing where a folder should be, a permission, a full disk or a place nothing can be
    written (`/proc`) is a `RequestError` naming `path` and why, never the temporary file."""
    from fabtui.errors import RequestError

    try:
        write_file(path, data)
    except OSError as exc:
        raise RequestError(cannot_write(path, exc)) from None


def make_output_folder(folder: Path) -> None:
    """Create `folder` (and its parents) for files the user asked for; a `RequestError`
    saying why when it cannot be."""
    from fabtui.errors import RequestError

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RequestError(cannot_write(folder, exc, folder=True)) from None


def cannot_write(path: Path, exc: OSError, *, folder: bool = False) -> str:
    """`r.html: cannot write: the folder missing/dir does not exist`: why `path` could not be
    written, in one line."""
    import errno

    shown = display_path(path)
    what = "create the folder" if folder else "write"
    parent = path.parent
    if exc.errno == errno.ENOENT:
        why = f"nothing can be created in {display_path(parent)}" if parent.is_dir() else \
            f"the folder {display_path(parent)} does not exist (create it first)"
    elif exc.errno == errno.ENOTDIR:
        blocker = next((p for p in [parent, *parent.parents] if p.is_file()), parent)
        why = f"{display_path(blocker)} is a file, not a folder"
    elif exc.errno == errno.EISDIR:
        why = "it is a folder; name a file"
    elif exc.errno in (errno.EACCES, errno.EPERM):
        why = f"permission denied in {display_path(parent)}"
    elif exc.errno == errno.EROFS:
        why = "read-only file system"
    elif exc.errno in (errno.ENOSPC, errno.EDQUOT):
        why = "disk full" if exc.errno == errno.ENOSPC else "disk quota exceeded"
    else:
        why = exc.strerror or type(exc).__name__
    return f"{shown}: cannot {what}: {why}"


def _mode_for(path: Path) -> int:
    """The permission bits `path` keeps (an existing regular file's), else a new file's."""
    try:
        found = os.lstat(path)
    except OSError:
        found = None
    if found is not None and (found.st_mode & 0o170000) == 0o100000:
        return found.st_mode & 0o777
    return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read without changing it (Linux reports it in /proc); 022 where it
    cannot be read (setting and restoring it would race with other threads creating files)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022
