"""The jobs behind an incident from a real Slurm (issue 40, point 1): Debian's slurmctld 22.05
(tests/support/slurm_server.py) and one slurmd standing for node003 run a real batch job; the
receiver asks `squeue --json --states=RUNNING` on this machine (a fabric not simulated, no
`[slurm] host`) and an incident on node003's NIC lists that job's ranks. A pending job is not
listed: Slurm 22.05's `--json` ignores `--states` (seen here), fabtui keeps RUNNING jobs only.

slurmd is started with `SlurmdParameters=config_overrides` (the test machine has fewer CPUs than
the 8 the controller's slurm.conf gives each node) and the job is cancelled before it stops.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from fabtui.alerts.present import account
from fabtui.config import load_settings
from fabtui.paths import demo_topology
from fabtui.workspace import Workspace
from fabtui.workspace.alerting import Receiver
from fabtui.workspace.slurm import running_jobs
from tests.support.slurm_server import require_slurm, slurm_controller
from tests.test_alerts_grouping import nic, payload

SLURMD = "/usr/sbin/slurmd"
NODES = [f"node{n:03d}" for n in range(1, 9)]


def wait(check: Callable[[], bool], what: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_an_incident_lists_the_real_slurm_job_behind_it(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    require_slurm()
    if not Path(SLURMD).exists():
        if os.environ.get("FABTUI_REQUIRE_SLURM") == "1":
            pytest.fail(f"{SLURMD} required (apt-get install slurmd)")
        pytest.skip(f"{SLURMD} not installed (apt-get install slurmd)")
    topology = "SwitchName=leaf Nodes=node[001-008]\n"
    (tmp_path / "slurm").mkdir()
    with slurm_controller(tmp_path / "slurm", NODES, topology) as ctl:
        with ctl.conf.open("a") as conf:
            conf.write("SlurmdParameters=config_overrides\n")
        assert ctl.scontrol("reconfigure").returncode == 0, ctl.log()
        slurmd_log = (tmp_path / "slurmd.out").open("wb")
        slurmd = subprocess.Popen([SLURMD, "-D", "-N", "node003", "-f", str(ctl.conf)],
                                  env=ctl.env, stdout=slurmd_log, stderr=subprocess.STDOUT)
        try:
            wait(lambda: "idle" in subprocess.run(
                ["sinfo", "-h", "-n", "node003", "-o", "%t"], env=ctl.env,
                capture_output=True, text=True).stdout, "node003 idle")

            def sbatch(*args: str) -> str:
                done = subprocess.run(["sbatch", "--parsable", *args], env=ctl.env,
                                      capture_output=True, text=True, cwd=tmp_path)
                assert done.returncode == 0, done.stderr
                return done.stdout.strip().split(";")[0]

            running = sbatch("-J", "pretrain", "-N1", "-w", "node003", "-n", "8",
                             "--wrap", "sleep 300")
            pending = sbatch("-J", "waiting", "-N1", "-w", "node005", "--wrap", "true")
            states = {}

            def listed() -> bool:
                out = subprocess.run(["squeue", "--json", "--states=RUNNING"], env=ctl.env,
                                     capture_output=True, text=True).stdout
                states.update({str(j["job_id"]): j["job_state"]
                               for j in json.loads(out)["jobs"]})
                return states.get(running) == "RUNNING"

            wait(listed, "the job running")
            assert states.get(pending) == "PENDING"  # 22.05's --json ignores --states

            monkeypatch.setenv("SLURM_CONF", str(ctl.conf))
            (tmp_path / "config.toml").write_text(
                f'data_dir = "{tmp_path / "data"}"\ntopology = "{demo_topology()}"\n'
                "simulate = false\n")
            ws = Workspace(load_settings(tmp_path / "config.toml"))
            jobs = running_jobs(ws)
            assert jobs.source == "`squeue --json --states=RUNNING`"
            assert jobs.ranks == {running: {"node003": tuple(range(8))}}
            assert jobs.names == {running: "pretrain"}

            receiver = Receiver(ws, lambda _line: None)
            assert receiver.receive(payload(nic("FabricNicLinkDown", "node003", "mlx5_0",
                                                element="ibport", suspect="link")))[0] == 200
            (incident,) = receiver.book.open_incidents()
            assert f"behind it: job {running} (pretrain): ranks 0-7 on node003" in \
                account(incident)
            ws.close()
        finally:
            subprocess.run(["scancel", "--full", running, pending], env=ctl.env,
                           capture_output=True, check=False)
            def ended() -> bool:  # squeue --json lists ended jobs for MinJobAge too
                out = subprocess.run(["squeue", "--json"], env=ctl.env, capture_output=True,
                                     text=True).stdout or '{"jobs": []}'
                return all(j["job_state"] not in ("RUNNING", "PENDING", "COMPLETING")
                           for j in json.loads(out)["jobs"])

            wait(ended, "the jobs ended", 60.0)
            slurmd.terminate()
            slurmd.wait(timeout=30)
            slurmd_log.close()
