"""Small inputs that stand for huge ones, and a `fabtui` process run under a memory cap.

The attacks of the reliability review (finding H4 and its neighbours), and a few of the same
kind: a few bytes that a reader copying or counting naively turns into gigabytes or hours. Each
is written into a folder by its `write` and read by one `fabtui` command; a reader that caps
what it builds refuses it with a `file:line: what is wrong` line in bounded time and memory,
where the code the review tested ran out of memory, aborted or hung.

Shared by tests/test_bounded_input.py (each attack under a memory cap and a hang timeout) and
benchmarks/reliability.py (trials, failures and peak memory per attack), so that what an attack
is, and what its refusal says, is decided once.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MEMORY_CAP_MB = 400
"""Address space a command may map. fabtui's commands map 250-300 MB reading these inputs
(the interpreter, pydantic, numpy's libraries); every attack the review ran took gigabytes."""
HANG_S = 120.0
"""Wall-clock limit of one command: the readers refuse in about a second; the review's runs took
a minute and more (or never ended), so a command still running now has hung."""


@dataclass(frozen=True)
class Outcome:
    """How one capped command ended."""

    status: int
    """Its exit status (128+N: killed by signal N)."""
    stdout: str
    stderr: str
    seconds: float
    peak_mb: float
    """Peak resident memory of the fabtui process, MB (0 when it hung and was killed)."""
    hung: bool

    def ended(self, status: int, expect: str) -> bool:
        """Exit `status`, no traceback, and a line of its output holding `expect` (standard
        error for a refusal, the JSON's warnings for `fabtui parse`)."""
        return self.status == status and not self.hung and "Traceback" not in self.stderr \
            and any(expect in line for line in (self.stderr + self.stdout).splitlines())


_LAUNCHER = """
import os, resource, sys
peak_file, cap = sys.argv[1], int(sys.argv[2])
pid = os.fork()
if pid == 0:
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    sys.argv[:3] = ["fabtui"]
    from fabtui.cli.app import main
    main()
_, status, usage = os.wait4(pid, 0)
with open(peak_file, "w") as out:
    out.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
os._exit(code if code >= 0 else 128 - code)
"""
"""Runs fabtui in a child forked from this small process and writes the child's peak RSS (KB):
a process's peak counts what it inherited from the process it was forked or spawned from, so
measured any closer to a pytest worker it would be the worker's size."""


def run_capped(args: list[str], cwd: Path, *, cap_mb: int = MEMORY_CAP_MB,
               timeout: float = HANG_S) -> Outcome:
    """`fabtui ARGS` in a new process whose address space is capped at `cap_mb`, in `cwd`
    with its own HOME and XDG folders under it (no user config, data or cache), killed after
    `timeout` seconds. Output goes to files (a pipe could fill and stall it). The status is
    the shell's: 128+N for a process killed by signal N."""
    home = cwd / ".home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FABTUI_", "XDG_"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
               XDG_DATA_HOME=str(home / "data"), XDG_CACHE_HOME=str(home / "cache"),
               XDG_STATE_HOME=str(home / "state"), PYTHONUNBUFFERED="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])))
    peak = home / "peak-rss-kb"
    peak.unlink(missing_ok=True)
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(peak),
                                 str(cap_mb * 1024 * 1024), *args], cwd=cwd, env=env,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                start_new_session=True)
        try:
            status = proc.wait(timeout=timeout)
            hung = False
        except subprocess.TimeoutExpired:
            hung = True
            os.killpg(proc.pid, signal.SIGKILL)
            status = proc.wait()
        seconds = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        peak_kb = int(peak.read_text()) if peak.exists() else 0
        return Outcome(status, out.read().decode(errors="replace"),
                       err.read().decode(errors="replace"), seconds, peak_kb / 1024, hung)


# The attacks ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Attack:
    """One hostile input, the command that reads it, and what its refusal says."""

    name: str
    finding: str
    """The review's finding (H4a: pickle, H4b: Slurm, H4c: YAML, L2, L3)."""
    reference: str
    """What the review measured on the code it tested."""
    write: Callable[[Path], list[str]]
    """Writes the input under a folder; returns the `fabtui` arguments that read it."""
    expect: str
    """Words of the refusal line, from its `file:line:` on."""
    status: int = 2
    """The exit status: 2 (bad input) for a refusal, 0 where the reader reads what it can
    and warns about the rest."""


# Flight Recorder (H4a) ------------------------------------------------------------------------

def _dag(levels: int) -> list[object]:
    x: list[object] = []
    for _ in range(levels):
        x = [x, x]
    return x


def _write_bytes(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def _pickle_dag(folder: Path) -> list[str]:
    """The review's 324 bytes: `x = [x, x]` forty times, under `entries`."""
    _write_bytes(folder, "fr_dag.pkl", pickle.dumps({"entries": _dag(40), "pg_config": {}},
                                                    protocol=2))
    return ["triage", "nccl", "fr_dag.pkl"]


def _pickle_wide(folder: Path) -> list[str]:
    """Three levels of a thousand references each: 10**9 values from 6 KB, never too deep."""
    row = ["frame"] * 1000
    table = [row] * 1000
    entries = [table] * 1000
    _write_bytes(folder, "fr_wide.pkl", pickle.dumps({"entries": entries, "pg_config": {}},
                                                     protocol=2))
    return ["triage", "nccl", "fr_wide.pkl"]


def _pickle_deep(folder: Path) -> list[str]:
    """The review's 200 KB pickle: one list nested 100,000 deep under `entries`."""
    n = 100_000
    _write_bytes(folder, "fr_deep.pkl", b"\x80\x02}X\x07\x00\x00\x00entries" + b"]" * n +
                 b"a" * (n - 1) + b"s.")
    return ["triage", "nccl", "fr_deep.pkl"]


def _json_deep(folder: Path) -> list[str]:
    """The same nesting as a JSON dump."""
    n = 100_000
    (folder / "fr_deep.json").write_text('{"version": "2.5", "pg_config": {}, "entries": ' +
                                         "[" * n + "]" * n + "}\n")
    return ["triage", "nccl", "fr_deep.json"]


FLIGHT_RECORDER = (
    Attack("pickle: 2**40 shared references (324 B)", "H4a",
           "MemoryError at the 4.8 GB cap after 97.7 s", _pickle_dag,
           "fr_dag.pkl: nests deeper than 32 levels"),
    Attack("pickle: 10**9 shared references, 3 deep (6 KB)", "H4a",
           "(new) the same bomb, shallow", _pickle_wide,
           "fr_wide.pkl: stands for more than"),
    Attack("pickle: nested 100,000 deep (200 KB)", "H4a",
           "internal error: RecursionError", _pickle_deep,
           "fr_deep.pkl: nests deeper than 32 levels"),
    Attack("Flight Recorder JSON nested 100,000 deep", "H4a",
           "(new) internal error: RecursionError", _json_deep,
           "fr_deep.json:1: the dump nests too deep to read"),
)
"""Pickles and JSON dumps, read by `fabtui triage nccl`."""


# Slurm (H4b, L2) ------------------------------------------------------------------------------

SCONTROL = """JobId=4242 JobName=llm-pretrain
   UserId=mlops(1500) GroupId=mlops(1500) MCS_label=N/A
   JobState=RUNNING Reason=None Dependency=(null)
   NodeList=node[001-008]
   BatchHost=node001
   NumNodes=8 NumCPUs=256 NumTasks=64 CPUs/Task=4 ReqB:S:C:T=0:0:*:*
   Socks/Node=* NtasksPerN:B:S:C=8:0:*:* CoreSpec=*
   JOB_GRES=gpu:64
     Nodes=node[001-008] CPU_IDs=0-31 Mem=0 GRES=gpu:8(IDX:0-7)
"""
"""The review's `scontrol show job -d 4242` on the demo fabric's eight nodes."""


def _slurm(name: str, text: str) -> Callable[[Path], list[str]]:
    def write(folder: Path) -> list[str]:
        (folder / name).write_text(text)
        return ["probe", "launch", "--job", "4242", "--job-file", name, "--dry-run"]
    return write


def _squeue(folder: Path) -> list[str]:
    """`squeue --json` of job 4242 with `tasks.number` 10**18 (the review: 4.7 GB)."""
    job = {"job_id": 4242, "job_state": ["RUNNING"], "nodes": "node[001-008]",
           "tasks": {"set": True, "infinite": False, "number": 10**18}}
    (folder / "sq_tasks.json").write_text(json.dumps({"jobs": [job]}))
    return ["probe", "launch", "--job", "4242", "--job-file", "sq_tasks.json", "--dry-run"]


def _many_lists(folder: Path) -> list[str]:
    """Forty `-d` lines of 100,000 nodes each (a host list's own cap): 4 million names from
    2 KB, read by `fabtui parse`."""
    detail = "     Nodes=n[0-99999] CPU_IDs=0 Mem=0 GRES=gpu:1(IDX:0)\n"
    (folder / "sc_lists.txt").write_text(SCONTROL + detail * 40)
    return ["parse", "--as", "scontrol-job", "sc_lists.txt"]


SLURM = (
    Attack("scontrol NumTasks=99999999999", "H4b",
           "23.6 GB, OOM-killed after 64.8 s", _slurm("sc_tasks.txt", SCONTROL.replace(
               "NumTasks=64", "NumTasks=99999999999").replace("NtasksPerN:B:S:C=8",
                                                              "NtasksPerN:B:S:C=99999999")),
           "sc_tasks.txt:1: job 4242 runs 99,999,999,999 tasks"),
    Attack("scontrol --ntasks-per-node=99999999, no NumTasks", "H4b",
           "(new) the same, from the per-node count", _slurm("sc_pernode.txt", SCONTROL.replace(
               "NumTasks=64", "NumTasks=N/A").replace("NtasksPerN:B:S:C=8",
                                                      "NtasksPerN:B:S:C=99999999")),
           "sc_pernode.txt:1: job 4242 runs 99,999,999 tasks per node on 8 nodes"),
    Attack("scontrol GRES=gpu:99999999(IDX:0-99999999)", "H4b",
           "87.6 s, 10.9 GB (then it succeeded)", _slurm("sc_gres.txt", SCONTROL.replace(
               "GRES=gpu:8(IDX:0-7)", "GRES=gpu:99999999(IDX:0-99999999)")),
           "sc_gres.txt:9: GRES=gpu:99999999(IDX:0-99999999): lists 100,000,000 GPU indexes"),
    Attack("squeue --json tasks.number=10**18", "H4b",
           "MemoryError at 4.7 GB in 4.7 s", _squeue,
           "sq_tasks.json: job 4242 runs 1,000,000,000,000,000,000 tasks"),
    Attack("scontrol cyclic: 200,000 tasks on 1 of 20,000 nodes", "H4b",
           "(new) 4 billion steps to lay out", _slurm("sc_cyclic.txt", SCONTROL.replace(
               "NodeList=node[001-008]", "NodeList=n[00000-19999]").replace(
               "NumTasks=64", "NumTasks=200000").replace(
               "NtasksPerN:B:S:C=8", "NtasksPerN:B:S:C=200000").replace(
               "JOB_GRES=gpu:64", "Dist=cyclic JOB_GRES=gpu:64")),
           "sc_cyclic.txt: job 4242 runs on nodes the topology does not have: n00000"),
    Attack("scontrol NodeList=node[0-99999999]", "L2",
           "refused as 'job 4242 holds no nodes (it is RUNNING)'", _slurm(
               "sc_hugelist.txt", SCONTROL.replace("NodeList=node[001-008]",
                                                   "NodeList=node[0-99999999]")),
           "sc_hugelist.txt:1: job 4242: its node list is not read: 'node[0-99999999]': "
           "stands for more than 100000 hosts"),
    Attack("scontrol: 40 node lists of 100,000 (2 KB)", "H4b",
           "(new) 4 million names built from 2 KB", _many_lists,
           "line 19: node list not expanded: the output's node lists stand for more than "
           "1,000,000 host names together", status=0),
)
"""Slurm outputs, read by `fabtui probe launch --job-file` (or `fabtui parse`)."""


# YAML (H4c) -----------------------------------------------------------------------------------

def _yaml_bigstr(folder: Path) -> list[str]:
    """The review's 1 MB file: one 1 MB string, aliased 2,000 times (2 GB built)."""
    big = "x" * 1_000_000
    (folder / "bigstr.yaml").write_text(f's: &s "{big}"\ncluster: {{name: x}}\nnodes: [' +
                                        ",".join(["*s"] * 2000) + "]\n")
    return ["topo", "check", "bigstr.yaml"]


def _case_bigstr(folder: Path) -> list[str]:
    """The same string as a case file's front matter, imported."""
    big = "x" * 1_000_000
    (folder / "case-bigstr.md").write_text(
        '---\nid: bigstr\ntitle: t\nx: &s "' + big + '"\ntags: [' + ",".join(["*s"] * 2000) +
        "]\n---\n\n## Symptom\na\n\n## Root cause\nb\n\n## Resolution\nc\n")
    return ["cases", "import", "case-bigstr.md"]


YAML = (
    Attack("YAML: a 1 MB string aliased 2,000 times", "H4c",
           "4.3 s, 2.0 GB; 5,000 aliases: Rust panic, SIGABRT", _yaml_bigstr,
           "bigstr.yaml:3: aliases expand to more than 10,000,000 characters"),
    Attack("case front matter: the same aliases", "H4c",
           "2.3 s, 2.0 GB", _case_bigstr,
           "case-bigstr.md:5: aliases expand to more than 10,000,000 characters"),
)
"""YAML aliases, read as a topology and as a case's front matter."""


# redact patterns (L3) -------------------------------------------------------------------------

def _redact(folder: Path) -> list[str]:
    """`redact = ["(a|a?)+b"]`: the review's 26-character line then took 68.5 s to journal."""
    (folder / "fabtui.toml").write_text('redact = ["(a|a?)+b"]\n')
    return ["--config", "fabtui.toml", "config"]


REDACT = (
    Attack('redact = ["(a|a?)+b"]', "L3",
           "accepted; a 26-character line then took 68.5 s", _redact,
           "fabtui.toml:1: redact: '(a|a?)+b' risks catastrophic backtracking"),
)
"""A config's `redact` pattern, judged when the config is read."""


ATTACKS = (*FLIGHT_RECORDER, *SLURM, *YAML, *REDACT)
"""Every attack; `write` each into an empty folder of its own."""
