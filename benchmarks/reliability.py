"""Reliability under hostile input, crashes and concurrency: trials and failures.

What holds (issue 9, "Must show"); each line prints `trials` and `failures`, and any failure
makes the script exit 1 (these are correctness figures, not timings):
  - fuzz:        random and mutated parser input (the fixtures of tests/fixtures, cut, garbled,
                 swapped) never raises anything but ParseError: no traceback;
  - injection:   shell-breaking payloads through six entry points (a runbook input rendered bare
                 and inside double quotes in a `sh` block, an `input` block's answer, a probe
                 block's parameter, `probe run --param` and `--target` on the demo fabric)
                 run nothing: a marker file named in the payload never appears;
  - sigkill:     `fabtui runbook run` killed (SIGKILL) at a random moment loses no event it
                 showed, and `fabtui runbook resume` finishes every session, re-running at most
                 the block that was cut short;
  - concurrency: N processes running runbooks against one data dir at once: every session and
                 every event is in the journal;
  - bounded:     small hostile inputs that stand for huge ones (tests/support/hostile_inputs.py:
                 pickle reference bombs, Slurm task counts and GRES ranges, YAML aliases of a big
                 string, a backtracking `redact` pattern), each read by `fabtui` under a memory
                 cap, end with their one clear `file:line` line, no traceback; each attack's
                 peak memory and time is printed beside what the reliability review measured.
  - danger:      every destructive form of tests/test_destructive.py (the review's 28 variants
                 and more) in a block not marked danger=true: lint refuses the runbook; and
                 each destructive word as the value of `sudo {{ action }}` on the demo fabric:
                 the typed gate stops it (exit 5, waiting). No `command_sent` is journaled;
  - resend:      a run killed after it confirmed and sent a dangerous command, resumed with the
                 first run's answer: the command is never sent again and the resume says it may
                 already have run (the review: 8 of 78 resumes re-sent one).

    python benchmarks/reliability.py            # full counts (about 6 minutes on 2 cores)
    python benchmarks/reliability.py --smoke    # small counts, < 60 s on 2 cores (CI)

Full counts on the 2-core machine (2026-12-01): 702 fuzzed inputs, 102 injection trials (17
payloads x 6 entry points; 51 reached their sh command intact), 72 SIGKILLs (51 mid-run),
24 concurrent runs (8 processes x 3 rounds): 0 failures. Hostile inputs (2026-12-05, the
machine shared, load 13): 70 trials (14 attacks x 5), 0 failures; every attack peaked under
100 MB and refused in under 2 s, but the 40 node lists (157 MB, 17 s: the million names the
cap lets an output expand to), where the review measured up to 23.6 GB, 98 s and a SIGABRT.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shlex
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fabtui.parsers import registry
from fabtui.parsers.errors import ParseError

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from tests.support.fixture_inputs import samples  # noqa: E402  (what counts as an input: once)
from tests.support.hostile_inputs import (  # noqa: E402  (what an attack is: once)
    ATTACKS,
    MEMORY_CAP_MB,
    run_capped,
)


@dataclass
class Tally:
    """Trials and failures of one check, with the first few failures described."""

    name: str
    trials: int = 0
    failures: int = 0
    examples: list[str] = field(default_factory=list)
    seconds: float = 0.0
    reached: int = 0
    """Injection: payloads that reached their command intact (as data)."""
    cut: int = 0
    """SIGKILL: runs killed before their end (the rest ended before the kill)."""
    details: list[str] = field(default_factory=list)
    """Lines printed under the check's own (bounded input: one per attack)."""

    def record(self, ok: bool, what: str = "") -> None:
        self.trials += 1
        if not ok:
            self.failures += 1
            if len(self.examples) < 3:
                self.examples.append(what)


# fuzz ---------------------------------------------------------------------------------------

def _mutate(rng: random.Random, text: str) -> str:
    """The mutations of tests/test_parsers_fuzz.py, drawn from a seeded generator."""
    lines = text.split("\n")
    for _ in range(rng.randint(1, 6)):
        if not lines:
            break
        i = rng.randrange(len(lines))
        action = rng.choice(["drop", "dup", "cut", "garble", "swap", "truncate"])
        if action == "drop":
            del lines[i]
        elif action == "dup":
            lines.insert(i, lines[i])
        elif action == "cut":
            lines[i] = lines[i][:rng.randint(0, len(lines[i]))]
        elif action == "garble":
            lines[i] = "".join(chr(rng.choice([rng.randint(32, 126), rng.randint(0, 0x2FFF)]))
                               for _ in range(rng.randint(0, 40)))
        elif action == "swap":
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines = lines[:i]
    return "\n".join(lines)


def fuzz(per_kind: int, rng: random.Random) -> Tally:
    """Every parser, called directly (the registry would turn a crash into a ParseError)."""
    tally = Tally("fuzzed parser inputs (no traceback)")
    for kind in sorted(registry.parsers()):
        module = registry.get(kind).module
        texts = samples(kind)
        for trial in range(per_kind):
            text = _mutate(rng, rng.choice(texts)) if trial % 2 else \
                "".join(chr(rng.randint(0, 0x2FFF)) for _ in range(rng.randint(0, 500)))
            try:
                score = module.detect(text)
                with contextlib.suppress(ParseError):
                    module.parse(text)
                tally.record(0.0 <= score <= 1.0, f"{kind}: detect() gave {score}")
            except Exception as exc:  # the point: anything but ParseError is a failure
                tally.record(False, f"{kind}: {type(exc).__name__}: {exc} "
                             f"({traceback.extract_tb(exc.__traceback__)[-1].name})")
    return tally


# injection ----------------------------------------------------------------------------------

PAYLOADS = [
    "; touch {m}", "$(touch {m})", "`touch {m}`", "| touch {m}", "&& touch {m}",
    "x\ntouch {m}", "'; touch {m}; '", '"; touch {m}; "', '\\"; touch {m}; \\"',
    ";touch${{IFS}}{m}", "-oProxyCommand=touch {m}", "--help; touch {m}", "x\r\ntouch {m}",
    "{{{{ value }}}}; touch {m}", "> {m}", "x\x1b[2J; touch {m}", "$'\\x3b' touch {m}",
]
"""Shell-breaking payloads; `{m}` is the marker file that must never appear."""

INJECTION_BOOK = """---
id: injection-bench
title: Injection bench
inputs:
  - name: bare
    default: plain
  - name: quoted
    default: plain
  - name: param
    default: /var/log/fabtui-sim/job.log
tests: [{{name: t, expect: {{outcome: ok}}}}]
---

# Injection bench

## Use

```sh {{id=use-bare on_error=continue on_fail=continue}}
printf '%s' {{{{ bare }}}} > {out}/bare
```

```sh {{id=use-quoted on_error=continue on_fail=continue}}
echo "got {{{{ quoted }}}}" > {out}/quoted
```

```input {{id=ask name=answer}}
A value?
```

```sh {{id=answered on_error=continue on_fail=continue}}
printf '%s' {{{{ answer }}}} > {out}/answered
```

```probe {{id=use-param on_error=continue}}
probe: logs.nccl
target: node001
params: {{path: "{{{{ param }}}}"}}
```
"""


def _cli(args: list[str], env: dict[str, str], timeout: float = 120,
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fabtui", *args], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=timeout, check=False)


def injection(payloads: list[str], work: Path, env: dict[str, str]) -> Tally:
    """Each payload through each entry point, with its own marker file."""
    tally = Tally("injection payloads x entry points (nothing runs)")
    out = work / "out"
    out.mkdir()
    book = work / "injection-bench.md"
    book.write_text(INJECTION_BOOK.format(out=out))
    for number, payload in enumerate(payloads):
        marker = {point: work / f"marker-{number}-{point}" for point in
                  ("bare", "quoted", "answer", "probe-block", "param", "target")}
        value = {point: payload.format(m=path) for point, path in marker.items()}
        for name in ("bare", "quoted", "answered"):
            (out / name).unlink(missing_ok=True)
        _cli(["runbook", "run", str(book), "--input", f"bare={value['bare']}",
              "--input", f"quoted={value['quoted']}", "--input",
              f"param={value['probe-block']}", "--answer", f"ask={value['answer']}"], env)
        # The payload must have reached the command, as data: else nothing was tested.
        intact = {}
        for point, name, expected in (("bare", "bare", value["bare"]),
                                      ("answer", "answered", value["answer"]),
                                      ("quoted", "quoted", f"got {value['quoted']}\n")):
            written = (out / name).read_bytes().decode() if (out / name).exists() else None
            intact[point] = written == expected
            tally.reached += intact[point]
        _cli(["probe", "run", "logs.nccl", "--target", "node001",
              "--param", f"path={value['param']}"], env)
        _cli(["probe", "run", "nic.ethtool", "--target", value["target"]], env)
        time.sleep(0.05)  # anything a payload started in the background has had its chance
        for point, path in marker.items():
            tally.record(not path.exists() and intact.get(point, True),
                         f"{point}: {payload!r} " + ("created its marker" if path.exists()
                                                     else "did not reach the command intact"))
    return tally


# SIGKILL ------------------------------------------------------------------------------------

def _crash_book(blocks: int, counter: Path) -> str:
    parts = ["---\nid: crash-bench\ntitle: Crash bench\n"
             "tests: [{name: t, expect: {outcome: ok}}]\n---\n\n# Crash bench\n"]
    for i in range(blocks):
        if i % 4 == 0:
            parts.append(f"\n## Step {i // 4}\n")
        parts.append(f"\n```sh {{id=b{i}}}\necho b{i} >> {counter}; sleep 0.02\n```\n")
    return "".join(parts)


def _events(journal: Path, session: str) -> list[tuple[str, str | None]]:
    with contextlib.closing(sqlite3.connect(journal)) as db:
        return [(kind, block) for kind, block in db.execute(
            "SELECT kind, block FROM events WHERE session = ? ORDER BY seq", (session,))]


def sigkill(trials: int, work: Path, env: dict[str, str], rng: random.Random) -> Tally:
    """Kill a run at a random moment; what it showed is journaled, and resume finishes it."""
    tally = Tally("SIGKILL at random points (no event lost, every session resumes)")
    blocks = 24
    for trial in range(trials):
        folder = work / f"crash-{trial}"
        folder.mkdir()
        counter = folder / "count"
        book = folder / "crash-bench.md"
        book.write_text(_crash_book(blocks, counter))
        run_env = {**env, "XDG_DATA_HOME": str(folder / "data"), "PYTHONUNBUFFERED": "1"}
        proc = subprocess.Popen([sys.executable, "-m", "fabtui", "runbook", "run", str(book)],
                                env=run_env, cwd=REPO, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        deadline = time.monotonic() + 60
        while not counter.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0, blocks * 0.04))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        shown, _ = proc.communicate()
        journal = folder / "data" / "fabtui" / "journal.sqlite"
        with contextlib.closing(sqlite3.connect(journal)) as db:
            rows = db.execute("SELECT id FROM sessions").fetchall()
        if len(rows) != 1:
            tally.record(False, f"trial {trial}: {len(rows)} sessions in the journal")
            continue
        session = rows[0][0]
        journaled = {block for kind, block in _events(journal, session)
                     if kind == "block_finished"}
        printed = {line.split("]", 1)[1].split(":", 1)[0].strip() for line in
                   shown.splitlines() if line.startswith("   [")}
        lost = printed - journaled
        ended = any(kind == "session_finished" for kind, _ in _events(journal, session))
        tally.cut += not ended
        # Killed after its end (the random moment came late): nothing to resume.
        resumed = subprocess.CompletedProcess([], 0, "", "") if ended else \
            _cli(["runbook", "resume", session], run_env)
        ran = counter.read_text().split() if counter.exists() else []
        repeated = len(ran) - len(set(ran))
        finished = [b for kind, b in _events(journal, session) if kind == "block_finished"]
        complete = set(finished) == {f"b{i}" for i in range(blocks)}
        ok = not lost and resumed.returncode == 0 and complete and repeated <= 1 and \
            set(ran) == {f"b{i}" for i in range(blocks)}
        tally.record(ok, f"trial {trial}: lost {sorted(lost)}, resume exit "
                     f"{resumed.returncode}, complete {complete}, {repeated} block(s) ran "
                     f"twice: {resumed.stderr.strip()[-200:]}")
    return tally


# concurrency --------------------------------------------------------------------------------

def concurrency(processes: int, rounds: int, work: Path, env: dict[str, str]) -> Tally:
    """N runs at once into one data dir; every session and every event is there after."""
    tally = Tally(f"{processes} processes writing one data dir (nothing lost)")
    blocks = 12
    shared = {**env, "XDG_DATA_HOME": str(work / "shared-data")}
    for round_ in range(rounds):
        books = []
        for n in range(processes):
            book = work / f"concurrent-{round_}-{n}.md"
            book.write_text(_crash_book(blocks, work / f"concurrent-{round_}-{n}.count")
                            .replace("id: crash-bench", f"id: concurrent-{n}"))
            books.append(book)
        procs = [subprocess.Popen([sys.executable, "-m", "fabtui", "runbook", "run", str(b),
                                   "--json"], env=shared, cwd=REPO, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for b in books]
        outputs = [p.communicate(timeout=300) for p in procs]
        journal = work / "shared-data" / "fabtui" / "journal.sqlite"
        for proc, (stdout, stderr) in zip(procs, outputs, strict=True):
            session = stdout.split('"session": "', 1)[1].split('"', 1)[0] \
                if '"session": "' in stdout else None
            events = _events(journal, session) if session else []
            finished = sum(1 for kind, _ in events if kind == "block_finished")
            ok = proc.returncode == 0 and finished == blocks and \
                events[-1][0] == "session_finished"
            tally.record(ok, f"round {round_}: exit {proc.returncode}, {finished}/{blocks} "
                         f"blocks journaled: {stderr.strip()[-200:]}")
    return tally


# bounded input ------------------------------------------------------------------------------

def bounded(trials: int, work: Path) -> Tally:
    """Each attack `trials` times, under the memory cap; its worst peak and time beside the
    figure the review measured on the code it tested."""
    tally = Tally(f"hostile inputs under a {MEMORY_CAP_MB} MB cap (refused, clear line)")
    tally.details.append(f"{'':4}{'attack':<58}{'peak':>8}{'time':>8}   review")
    for number, attack in enumerate(ATTACKS):
        peaks, times = [], []
        for trial in range(trials):
            folder = work / f"attack-{number}-{trial}"
            folder.mkdir()
            outcome = run_capped(attack.write(folder), folder)
            peaks.append(outcome.peak_mb)
            times.append(outcome.seconds)
            said = (outcome.stderr.strip().splitlines() or ["(nothing)"])[-1]
            tally.record(outcome.ended(attack.status, attack.expect),
                         f"{attack.name}: exit {outcome.status}"
                         f"{' (hung)' if outcome.hung else ''}: {said}")
        tally.details.append(f"{attack.finding:<4}{attack.name:<58}{max(peaks):>5.0f} MB"
                             f"{max(times):>6.1f} s   {attack.reference}")
    return tally


# danger: what really runs ---------------------------------------------------------------------

DANGER_BOOK = """---
id: danger-bench
title: Danger bench
summary: runs a destructive command without saying so
symptoms: [bench]
inputs:
  - name: action
    default: hostname
    description: the command
---

# Danger bench

## Act {{#act}}

```sh {{id=act on=node001}}
{body}
```
"""
DESTRUCTIVE_WORDS = ("reboot", "poweroff", "halt", "shutdown", "ifdown", "kexec", "fast-reboot",
                     "scancel", "pkill", "killall")
"""Values that are a destructive command on their own: a value is quoted into one word, so
this is what a value can do (`sudo {{ action }}`)."""


def danger(work: Path, env: dict[str, str], smoke: bool) -> Tally:
    """Every destructive form of the reliability review (H3) and of tests/test_destructive.py
    in a block that does not say danger=true: lint refuses the runbook (exit 2, naming the
    block); and each destructive word given as the value of `sudo {{ action }}`: the engine's
    typed gate stops it (exit 5: the session waits at the gate). Nothing is sent either way
    (no `command_sent`)."""
    from tests.test_destructive import REVIEWED

    tally = Tally("destructive commands, literal or as values (refused, nothing sent)")
    trials = [(command, None) for command in (REVIEWED[::4] if smoke else REVIEWED)]
    trials += [("sudo {{ action }}", word) for word in
               (DESTRUCTIVE_WORDS[::3] if smoke else DESTRUCTIVE_WORDS)]
    for number, (body, value) in enumerate(trials):
        data = work / f"danger-{number}"
        book = work / f"danger-{number}.md"
        book.write_text(DANGER_BOOK.format(body=body))
        run_env = {**env, "XDG_DATA_HOME": str(data),
                   "FABTUI_SIM_STATE": str(work / "danger-state.json")}
        args = ["runbook", "run", str(book)] + (["--input", f"action={value}"] if value else [])
        done = _cli(args, run_env)
        journal = data / "fabtui" / "journal.sqlite"
        sent = 0
        if journal.exists():
            with contextlib.closing(sqlite3.connect(journal)) as db:
                sent = db.execute("SELECT count(*) FROM events WHERE kind = 'command_sent'"
                                  ).fetchone()[0]
        said = done.stdout + done.stderr
        refused = (done.returncode == 2 and "act: " in said and "danger=true" in said) \
            if value is None else \
            (done.returncode == 5 and "needs typed confirmation" in said)
        tally.record(refused and sent == 0,
                     f"{body!r} {value or ''}: exit {done.returncode}, {sent} sent")
    return tally


RESEND_BOOK = """---
id: resend-bench
title: Resend bench
summary: a dangerous command killed in flight
symptoms: [bench]
---

# Resend bench

## Shut {{#shut}}

```sh {{id=shut danger=true}}
echo sent >> {counter}; sleep 30
```
"""


def resend(trials: int, work: Path, env: dict[str, str]) -> Tally:
    """A run killed (SIGKILL) after it confirmed and sent a dangerous command, resumed with
    the first run's answer: the command is never sent again (the review: 8 of 78 resumes
    re-sent one), and the resume says it may already have run."""
    tally = Tally("resume after a kill mid dangerous command (never re-sent)")
    for trial in range(trials):
        folder = work / f"resend-{trial}"
        folder.mkdir()
        counter = folder / "count"
        book = folder / "resend-bench.md"
        book.write_text(RESEND_BOOK.format(counter=counter))
        run_env = {**env, "XDG_DATA_HOME": str(folder / "data")}
        proc = subprocess.Popen([sys.executable, "-m", "fabtui", "runbook", "run", str(book),
                                 "--answer", "shut=shut"], env=run_env, cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (counter.exists() and counter.read_text()):
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        journal = folder / "data" / "fabtui" / "journal.sqlite"
        with contextlib.closing(sqlite3.connect(journal)) as db:
            session = db.execute("SELECT id FROM sessions").fetchone()[0]
        again = _cli(["runbook", "resume", session, "--answer", "shut=shut"], run_env)
        lines = counter.read_text().splitlines()
        tally.record(lines == ["sent"] and "may already have run" in again.stdout + again.stderr,
                     f"trial {trial}: sent {len(lines)} times, exit {again.returncode}")
    return tally


# main ---------------------------------------------------------------------------------------

def _timed(step: Callable[[], Tally]) -> Tally:
    began = time.perf_counter()
    tally = step()
    tally.seconds = time.perf_counter() - began
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="small counts (CI)")
    parser.add_argument("--seed", type=int, default=9)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    smoke = args.smoke
    with tempfile.TemporaryDirectory(prefix="fabtui-reliability-") as tmp:
        work = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("FABTUI_")}
        env.update(HOME=str(work), XDG_CONFIG_HOME=str(work / "config"),
                   XDG_DATA_HOME=str(work / "data"),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(REPO),
                                                            env.get("PYTHONPATH")])))
        payloads = PAYLOADS[::5] if smoke else PAYLOADS
        tallies = [
            _timed(lambda: fuzz(6 if smoke else 26, rng)),
            _timed(lambda: injection(payloads, work, env)),
            _timed(lambda: sigkill(3 if smoke else 72, work, env, rng)),
            _timed(lambda: concurrency(3 if smoke else 8, 1 if smoke else 3, work, env)),
            _timed(lambda: bounded(1 if smoke else 5, work)),
            _timed(lambda: danger(work, env, smoke)),
            _timed(lambda: resend(1 if smoke else 10, work, env)),
        ]
    print(f"{'check':<66}{'trials':>8}{'failures':>10}{'seconds':>9}")
    for tally in tallies:
        print(f"{tally.name:<66}{tally.trials:>8}{tally.failures:>10}{tally.seconds:>9.1f}")
        if tally.reached:
            print(f"    {tally.reached} payloads reached their sh command intact, as data")
        if tally.cut:
            print(f"    {tally.cut} runs killed before their end")
        for line in tally.details:
            print(f"    {line}")
        for example in tally.examples:
            print(f"    failed: {shlex.quote(example)[:300]}")
    return 1 if any(t.failures for t in tallies) else 0


if __name__ == "__main__":
    sys.exit(main())
