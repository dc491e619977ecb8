"""`fabtui` commands as processes of their own, for the tests about what a command does.

`real` runs a command forked from the tests' fork server (tests/support/fabtui_fork.py) unless
`binary=True` asks for a new process of the installed console script."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support import fabtui_fork


def fabtui_command() -> list[str]:
    script = Path(sys.executable).parent / "fabtui"
    if script.exists():
        return [str(script)]
    found = shutil.which("fabtui")
    return [found] if found else [sys.executable, "-m", "fabtui"]


def real(*args: str, cwd: Path | None = None,
         binary: bool = False) -> subprocess.CompletedProcess[str]:
    """`fabtui ARGS` as a process of its own, in this environment without FABTUI_CONFIG and
    FABTUI_DEBUG: forked from the tests' fork server (tests/support/fabtui_fork.py: the command,
    its output and exit status, without the interpreter's start-up), or with `binary` a new
    process of the installed console script (start-up and packaging included)."""
    env = {k: v for k, v in os.environ.items() if k not in ("FABTUI_CONFIG", "FABTUI_DEBUG")}
    if not binary:
        return fabtui_fork.run(["fabtui", *args], cwd=cwd, env=env, timeout=120)
    return subprocess.run([*fabtui_command(), *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120, check=False)
