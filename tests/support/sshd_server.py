"""A real OpenSSH server on loopback, started by the tests themselves (Debian `openssh-server`).

Key authentication with throw-away keys; a private known_hosts; everything under a temp folder.
When sshd is not installed the tests that need it are skipped, unless FABTUI_REQUIRE_SSHD=1 (set
by .ci/run), in which case they fail: CI must exercise the real server.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from fabtui.transports.ssh import SshOptions, SshTarget

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


def require_sshd() -> None:
    """Skip (or, in CI, fail) when there is no sshd to test against."""
    if not Path(SSHD).exists():
        if os.environ.get("FABTUI_REQUIRE_SSHD") == "1":
            pytest.fail("sshd is required (apt-get install openssh-server)")
        pytest.skip("sshd not installed")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


class SshServer:
    """One sshd process; `stop()` ends it."""

    def __init__(self, base: Path, *, password_auth: bool = False,
                 force_command: str | None = None) -> None:
        self.base = base
        self.port = _free_port()
        self.user = getpass.getuser()
        self.host_key = base / "host_key"
        self.client_key = base / "client_key"
        self.known_hosts = base / "known_hosts"
        _keygen(self.host_key)
        _keygen(self.client_key)
        (base / "authorized_keys").write_text((base / "client_key.pub").read_text())
        (base / "authorized_keys").chmod(0o600)
        lines = [f"Port {self.port}", "ListenAddress 127.0.0.1", f"HostKey {self.host_key}",
                 f"AuthorizedKeysFile {base / 'authorized_keys'}", f"PidFile {base / 'pid'}",
                 "UsePAM no", "StrictModes no", "PermitRootLogin yes", "LogLevel ERROR",
                 "MaxSessions 64", "MaxStartups 200:30:400", "ClientAliveInterval 0",
                 f"PasswordAuthentication {'yes' if password_auth else 'no'}",
                 "KbdInteractiveAuthentication no", "PermitEmptyPasswords no"]
        if force_command:
            lines.append(f"ForceCommand {force_command}")
        self.config = base / "sshd_config"
        self.config.write_text("\n".join(lines) + "\n")
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} "
                                    f"{(base / 'host_key.pub').read_text()}")
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        self._log = (base / "log").open("w")
        self.process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(self.config)],
                                        stdout=subprocess.DEVNULL, stderr=self._log)
        self._wait_until_listening()

    def _wait_until_listening(self) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"sshd exited: {(self.base / 'log').read_text()}")
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError("sshd did not start listening")

    def options(self, **changes: Any) -> SshOptions:
        """Client options isolated from the user's own ssh setup."""
        values: dict[str, Any] = {
            "config_file": Path("/dev/null"), "known_hosts": self.known_hosts,
            # A short folder of its own: unix socket paths are limited to 108 bytes, and pytest's
            # temporary folders (deeper still under xdist) can exceed that.
            "identity": self.client_key, "control_dir": Path(tempfile.mkdtemp(prefix="fx-cm-")),
            "connect_timeout": 5}
        values.update(changes)
        return SshOptions(**values)

    def target(self, **changes: Any) -> SshTarget:
        values: dict[str, Any] = {"name": "testhost", "host": "127.0.0.1", "port": self.port,
                                     "user": self.user}
        values.update(changes)
        return SshTarget(**values)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self._log.close()
