"""A real Slurm controller on loopback (Debian's `slurmctld` 22.05 and `munge`), started by the
tests to check that a generated topology.conf is accepted and what `scontrol show topology`
then says.

Everything lives in a temp folder: a fresh munge key, `munged` on a socket there (`--key-file`,
`--socket`, foreground), and `slurmctld -D -i` (foreground, ignoring any saved state) with a
minimal slurm.conf naming the fabric's nodes at 127.0.0.1 (no slurmd runs: the controller only
has to load the tree), `SlurmUser` the user running the tests, state and spool folders in the
temp folder, `AuthType=auth/munge` with `AuthInfo=socket=...`, `TopologyPlugin=topology/tree`,
free ports. When the binaries are missing the tests that need them are skipped, unless
FABTUI_REQUIRE_SLURM=1 (set by .ci/run): then they fail.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.prom_server import free_port

SLURMCTLD = "/usr/sbin/slurmctld"
MUNGED = shutil.which("munged") or "/usr/sbin/munged"
SCONTROL = shutil.which("scontrol") or "/usr/bin/scontrol"


def require_slurm() -> None:
    """Skip (or, in CI, fail) when there is no slurmctld and munged to test against."""
    missing = [p for p in (SLURMCTLD, MUNGED, SCONTROL) if not Path(p).exists()]
    if missing:
        if os.environ.get("FABTUI_REQUIRE_SLURM") == "1":
            pytest.fail(f"{', '.join(missing)} required (apt-get install slurmctld "
                        "slurm-client munge)")
        pytest.skip(f"{', '.join(missing)} not installed (apt-get install slurmctld "
                    "slurm-client munge)")


class SlurmController:
    """munged and slurmctld from `folder`, loading `topology` (topology.conf text) for
    `nodes`; `stop()` ends both."""

    def __init__(self, folder: Path, nodes: Sequence[str], topology: str) -> None:
        self.folder = folder
        (folder / "state").mkdir()
        (folder / "spool").mkdir()
        key = folder / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        self.socket = folder / "munge.sock"
        self.munged_log = (folder / "munged.log").open("wb")
        self.munged = subprocess.Popen(
            [MUNGED, "--foreground", "--force", f"--key-file={key}", f"--socket={self.socket}",
             f"--pid-file={folder / 'munged.pid'}", f"--seed-file={folder / 'munged.seed'}"],
            stdout=self.munged_log, stderr=subprocess.STDOUT)
        user = pwd.getpwuid(os.getuid()).pw_name
        self.conf = folder / "slurm.conf"
        lines = [
            "ClusterName=fabtui", "SlurmctldHost=localhost(127.0.0.1)",
            f"SlurmctldPort={free_port()}", f"SlurmdPort={free_port()}",
            f"SlurmUser={user}", f"SlurmdUser={user}",
            "AuthType=auth/munge", f"AuthInfo=socket={self.socket}",
            "CryptoType=crypto/munge",
            f"StateSaveLocation={folder / 'state'}", f"SlurmdSpoolDir={folder / 'spool'}",
            f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
            f"SlurmctldLogFile={folder / 'slurmctld.log'}", "SlurmctldDebug=info",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "MpiDefault=none",
            "MailProg=/bin/true", "SelectType=select/cons_tres",
            "TopologyPlugin=topology/tree", "ReturnToService=2",
            *(f"NodeName={node} NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=8 "
              "State=UNKNOWN" for node in nodes),
            "PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP"]
        self.conf.write_text("\n".join(lines) + "\n")
        (folder / "topology.conf").write_text(topology)
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}
        self._wait_for_munge()
        self.ctld_log = (folder / "slurmctld.out").open("wb")
        self.slurmctld = subprocess.Popen([SLURMCTLD, "-D", "-i", "-f", str(self.conf)],
                                          stdout=self.ctld_log, stderr=subprocess.STDOUT,
                                          env=self.env, cwd=folder)

    def _wait_for_munge(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.socket.exists():
            if self.munged.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("munged did not start: " + self.log("munged.log"))
            time.sleep(0.05)

    def log(self, name: str = "slurmctld.out") -> str:
        path = self.folder / name
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def scontrol(self, *args: str, timeout: float = 20.0) -> subprocess.CompletedProcess[str]:
        """`scontrol ARGS` against this controller."""
        return subprocess.run([SCONTROL, *args], capture_output=True, text=True,
                              env=self.env, timeout=timeout, check=False)

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Until the controller answers `scontrol ping` (or exits: RuntimeError with its log)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.slurmctld.poll() is not None:
                raise RuntimeError("slurmctld exited: " + self.log())
            if "is UP" in self.scontrol("ping", timeout=5).stdout:
                return
            time.sleep(0.2)
        raise RuntimeError("slurmctld did not answer: " + self.log())

    def stop(self) -> None:
        for process in (self.slurmctld, self.munged):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.ctld_log.close()
        self.munged_log.close()


@contextmanager
def slurm_controller(folder: Path, nodes: Sequence[str], topology: str) -> \
        Iterator[SlurmController]:
    """A ready controller loading `topology` for `nodes`, stopped on leaving."""
    require_slurm()
    controller = SlurmController(folder, nodes, topology)
    try:
        controller.wait_ready()
        yield controller
    finally:
        controller.stop()
