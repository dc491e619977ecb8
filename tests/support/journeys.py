"""The three journeys of issue 37, walked by keyboard in a real terminal: the real `fabtui` in a
tmux pane on the demo fabric, every key counted, every screen read back (`capture-pane`).

(a) an NCCL hang to a filed case: `fabtui triage nccl logs --open`, the suggested runbook
    (nccl-hang-triage) through its gates, the hand-over to optic-replacement, the dead optic
    replaced with typed confirmations, verified, the before/after read, the case filed and saved.
    Its variant answers "no" at a gate and resumes, and mistypes a typed confirmation: the
    session must go on, never be lost.
(b) a guided optic replacement (`--scenario optic-degrading`), from the Runbooks view searched by
    symptom to the case filed.
(c) a past incident found by symptom, in English then in Chinese (its rank in the results).

Keys are counted three ways: characters of typed confirmations (a node or port name typed to
run a dangerous command), other typed text (a search, an input), and every other key (`enter`,
`g`, `y`...). Issue 37's goal for (a): at most 80 keys besides the typed confirmations.

Used by `benchmarks/tui_journeys.py` (prints the figures) and `tests/test_tui_tmux.py` (holds
the app to them). Each `Journey` runs on a tmux server of its own (`socket`), killed at the end.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.support import REPO

SIM_TIME = "960"
"""16 minutes into the nccl-hang scenario: the optic behind rank 21 is dead."""
HANG_PORT = "leaf-g00-r5:Ethernet16"
DEGRADING_PORT = "leaf-g00-r3:Ethernet16"
NODE = "node003"
HANG_CASE = "nccl-hang-optic-rail5-node003"
KEY_PAUSE_S = 0.12
"""Between two keys: a burst reads as a paste, and esc then a key within a moment as alt+key."""


@dataclass
class Tally:
    """What a journey cost: keys three ways, wall time, and the screens read at each step."""

    confirm_chars: int = 0
    text_chars: int = 0
    other_keys: int = 0
    began: float = field(default_factory=time.monotonic)
    ended: float = 0.0
    steps: list[tuple[str, float, str]] = field(default_factory=list)
    """(step, seconds since the start, the pane as read then)."""
    notes: list[str] = field(default_factory=list)

    @property
    def keys_besides_confirmations(self) -> int:
        return self.text_chars + self.other_keys

    @property
    def seconds(self) -> float:
        return (self.ended or time.monotonic()) - self.began


class JourneyFailed(AssertionError):
    """A step's screen never showed: says which, what was waited for, the steps before it
    and the pane as last seen."""


class Pane:
    """One tmux pane running `fabtui`, driven key by key and read back."""

    def __init__(self, socket: str, target: str, tally: Tally) -> None:
        self.socket = socket
        self.target = target
        self.tally = tally
        self.env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        self.env.update(LANG="C.UTF-8", LC_ALL="C.UTF-8")

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True,
                              text=True, check=False, env=self.env).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.target)

    def _send(self, *args: str) -> None:
        self.tmux("send-keys", "-t", self.target, *args)
        time.sleep(KEY_PAUSE_S)

    def key(self, *keys: str) -> None:
        """Keys that are not text (`Enter`, `g`, `y`, `C-r`): each counts one."""
        for key in keys:
            self._send(key)
            self.tally.other_keys += 1
            time.sleep(0.4 if key == "Escape" else 0)

    def type(self, text: str) -> None:
        """Text typed into a field (a search, an input): one key a character."""
        self._send("-l", text)
        self.tally.text_chars += len(text)

    def confirm(self, phrase: str) -> None:
        """A typed confirmation's phrase (counted apart: the goal is on the other keys)."""
        self._send("-l", phrase)
        self.tally.confirm_chars += len(phrase)

    def wait(self, wanted: str | Callable[[str], bool], step: str,
             seconds: float = 60) -> str:
        """The pane once it shows `wanted` (a substring or a test of the whole pane); the
        step and its screen recorded."""
        test = wanted if callable(wanted) else (lambda text: wanted in text)
        deadline = time.monotonic() + seconds
        text = ""
        while time.monotonic() < deadline:
            text = self.screen()
            if test(text):
                self.tally.steps.append((step, self.tally.seconds, text))
                return text
            time.sleep(0.1)
        done = "\n".join(f"+{t:6.1f} s  {s}" for s, t, _ in self.tally.steps)
        what = "the screen it needs" if callable(wanted) else repr(wanted)
        raise JourneyFailed(f"step {step!r}: {what} never showed in {seconds:g} s\n"
                            f"--- steps before:\n{done}\n--- the pane:\n{text.rstrip()}")

    def gone(self, unwanted: str, step: str, seconds: float = 60) -> str:
        return self.wait(lambda text: unwanted not in text, step, seconds)


@contextmanager
def fabtui_in_tmux(folder: Path, size: tuple[int, int], args: list[str], poll: str,
                   socket: str, tally: Tally) -> Iterator[Pane]:
    """`fabtui ARGS` in a tmux pane of `size`, in `folder` (its own home, data and config,
    the demo clock pinned); the tmux server killed on the way out."""
    configure(folder, poll)
    env = environment(folder)
    command = " ".join(["cd", shlex.quote(str(folder)), "&&", "env", "-u", "COLUMNS", "-u",
                        "LINES", *(shlex.quote(f"{k}={v}") for k, v in env.items()),
                        shlex.quote(sys.executable), "-m", "fabtui",
                        *map(shlex.quote, args)])
    pane = Pane(socket, "journey", tally)
    pane.tmux("new-session", "-d", "-s", "journey", "-x", str(size[0]), "-y", str(size[1]),
              command, ";", "set-option", "-t", "journey", "remain-on-exit", "on")
    try:
        yield pane
    finally:
        pane.tmux("kill-server")


def configure(folder: Path, poll: str) -> None:
    """The journey's config file: the live view polls `poll` every 5 s."""
    config = folder / "config.toml"
    config.write_text(f'poll = ["{poll}"]\npoll_interval = 5\n', encoding="utf-8")


def environment(folder: Path) -> dict[str, str]:
    return {"PYTHONPATH": str(REPO), "FABTUI_CONFIG": str(folder / "config.toml"),
            "HOME": str(folder), "XDG_DATA_HOME": str(folder / "data"),
            "TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "PATH": os.environ.get("PATH", ""), "FABTUI_SIM_TIME": SIM_TIME, "TZ": "UTC"}


def fabtui(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A `fabtui` command in `folder`'s environment (the journey's own data)."""
    return subprocess.run([sys.executable, "-m", "fabtui", *args], env=environment(folder),
                          cwd=folder, capture_output=True, text=True, check=False)


# --- the screens read -------------------------------------------------------------------------
READING = re.compile(r"^(-|-?inf|nan|-?\d+(\.\d+)?(e[+-]?\d+)?|[A-Z]{2}\d{6,}|"
                     r"Active|Down|Disabled?|Polling|LinkUp|Initializing|Sleep)$", re.I)
"""A reading shown whole: a number with every digit the table shows, `-inf`, `-`, a serial,
a port state as mlxlink or ibstat prints it (a cut state, `Disa`, is not one of these)."""


def before_after_rows(text: str) -> list[tuple[str, str]]:
    """The (before, after) cells of the before/after table on the pane: the rows under its
    `before  after` heading, each row's two cells ending in a verdict (`✓ ok`)."""
    lines = text.splitlines()
    head = next((i for i, line in enumerate(lines) if re.search(r"\bbefore\s+after\b", line)),
                None)
    if head is None:
        return []
    rows = []
    for line in lines[head + 1:]:
        cells = re.search(r"(\S+)\s+(\S+)\s+[✓!✗⊘~–·] \w", line.split("▕")[-1])
        if not cells:
            break
        rows.append((cells.group(1), cells.group(2)))
    return rows


def unreadable(rows: list[tuple[str, str]]) -> list[str]:
    """The before/after cells that are not a whole reading (cut, `…`)."""
    return [cell for row in rows for cell in row if "…" in cell or not READING.match(cell)]


# --- the journeys -----------------------------------------------------------------------------
def gate(pane: Pane, phrase: str, step: str) -> None:
    """`g` to the typed-confirmation gate asking `phrase`; typed; enter."""
    pane.key("g")
    pane.wait(f"Type {phrase} to run it.", f"g: {step}")
    pane.confirm(phrase)
    pane.key("Enter")
    pane.gone(f"Type {phrase} to run it.", f"{phrase}: {step} accepted")


def question(pane: Pane, words: str, step: str, answer: str = "y") -> None:
    """`g` to the yes/no gate whose prompt holds `words`; answered."""
    pane.key("g")
    pane.wait(lambda t: words in t and "y: yes" in t, f"g: {step}")
    pane.key(answer)
    pane.gone("y: yes · n: not yet", f"{answer}: {step}")


def journey_a(folder: Path, size: tuple[int, int], socket: str, *,
              slips: bool = False) -> Tally:
    """(a), see the module docstring; `slips`: a "no" at the cleaning question (then `g` asks
    again) and a mistyped port at the shut-port gate (asked again)."""
    configure(folder, f"switch.dom@{HANG_PORT}")
    made = fabtui(folder, "--scenario", "nccl-hang", "sim", "hang-logs", "logs", "--case",
                  "optic", "--ranks", "64")
    if made.returncode != 0:
        raise JourneyFailed(f"sim hang-logs: {made.stderr}")
    tally = Tally()
    with fabtui_in_tmux(folder, size, ["--scenario", "nccl-hang", "triage", "nccl", "logs",
                                       "--open"], f"switch.dom@{HANG_PORT}", socket,
                        tally) as pane:
        text = pane.wait("deepest confirmed: optic", "triage: the culprit and its chain")
        if f"{NODE} mlx5_5 {HANG_PORT}" not in " ".join(text.split()):
            raise JourneyFailed(f"the culprit is not node003 mlx5_5 {HANG_PORT}:\n{text}")
        pane.key("o")
        text = pane.wait("enter: next / submit", "o: nccl-hang-triage's inputs, pre-filled")
        if "node003:mlx5_5" not in text:
            raise JourneyFailed(f"the suspect NIC is not pre-filled:\n{text}")
        pane.key("C-s")  # every input as pre-filled
        pane.wait("session ", "ctrl+s: the triage session")
        gate(pane, NODE, "the cordon")
        question(pane, "Is the job restarted", "restarted?")
        pane.key("g")
        pane.wait("next: runbook optic-replacement (o opens it)", "g: the hand-over")
        pane.key("o")
        text = pane.wait("optic-replacement: inputs", "o: optic-replacement's inputs")
        if HANG_PORT not in text:
            raise JourneyFailed(f"the port is not carried into the hand-over:\n{text}")
        pane.key("C-s")
        pane.wait("optic-replacement ·", "ctrl+s: the optic replacement session")
        if slips:  # a typo at the typed confirmation: asked again, the session goes on
            pane.key("g")
            pane.wait(f"Type {HANG_PORT} to run it.", "g: shut the port")
            pane.confirm(HANG_PORT.replace("16", "61"))
            pane.key("Enter")
            pane.wait(f"not '{HANG_PORT}'", "a typo: said, and asked again", 20)
            pane.confirm(HANG_PORT)
            pane.key("Enter")
            pane.gone(f"Type {HANG_PORT} to run it.", "shut the port: accepted")
        else:
            gate(pane, HANG_PORT, "shut the port")
        if slips:  # "no" at a gate: the session waits there, g asks again
            question(pane, "cleaned and re-seated", "cleaned? no", answer="n")
            text = pane.wait("waiting", "n: the session waits at the gate")
            if "aborted" in text:
                raise JourneyFailed(f"a no ended the session:\n{text}")
        question(pane, "cleaned and re-seated", "cleaned?")
        gate(pane, HANG_PORT, "shut again to swap")
        swap_verify_and_file(pane, HANG_PORT, tally)
    return tally


def swap_verify_and_file(pane: Pane, port: str, tally: Tally) -> None:
    """From the swap gate of optic-replacement on `port` to its case filed: the demo fabric
    swaps the optic (ctrl+r), the node goes back, the before/after values must be whole on
    screen, the draft is saved (ctrl+s), and the app quits."""
    pane.key("g")
    pane.wait("replaced and everything", "g: swapped?")
    pane.key("C-r")  # the demo fabric swaps the optic
    pane.wait(f"repaired {port} on the demo fabric", "ctrl+r: the swap")
    pane.key("y")
    pane.gone("y: yes · n: not yet", "y: swapped")
    gate(pane, NODE, "return the node")
    pane.key("g")
    text = pane.wait(lambda t: "finished ✓ ok" in t and bool(before_after_rows(t)),
                     "g: finished, the before/after")
    rows = before_after_rows(text)
    bad = unreadable(rows)
    tally.notes.append(f"before/after rows on screen: {len(rows)}, unreadable: {bad}")
    if bad:
        raise JourneyFailed(f"before/after values not whole: {bad}\n{text}")
    pane.key("f")
    pane.wait("(draft) ─", "f: the case editor on the draft")
    pane.key("C-s")
    pane.wait("links · similar", "ctrl+s: the case saved and shown")
    tally.ended = time.monotonic()
    pane.key("C-q")


def journey_b(folder: Path, size: tuple[int, int], socket: str) -> Tally:
    """(b): optic-degrading; the Runbooks view searched by symptom; optic-replacement typed its
    port; the repair through its gates to the case filed."""
    tally = Tally()
    with fabtui_in_tmux(folder, size, ["--scenario", "optic-degrading"],
                        f"switch.dom@{DEGRADING_PORT}", socket, tally) as pane:
        pane.wait("spines ", "the app")
        pane.key("2")
        pane.wait("symptom: low rx power", "2: the Runbooks view, its search focused")
        pane.type("low rx power")
        pane.key("Enter")
        pane.wait(lambda t: "optic-replacement" in t and "Optic replacement" in t,
                  "low rx power: optic-replacement found")
        pane.key("Enter")
        pane.wait("optic-replacement: inputs", "enter: optic-replacement's inputs")
        pane.type(DEGRADING_PORT)
        pane.key("C-s")
        pane.wait("optic-replacement ·", "ctrl+s: the session")
        gate(pane, NODE, "drain the node")
        question(pane, "drained", "drained?")
        gate(pane, DEGRADING_PORT, "shut the port")
        question(pane, "cleaned and re-seated", "cleaned?")
        gate(pane, DEGRADING_PORT, "shut again to swap")
        swap_verify_and_file(pane, DEGRADING_PORT, tally)
    return tally


def rank_of(case: str, text: str) -> int | None:
    """Where `case` stands among the case ids listed on the pane (1 = first)."""
    ids = [m.group(0) for m in re.finditer(r"\b[a-z0-9]+(?:-[a-z0-9]+){2,}\b", text)]
    listed = list(dict.fromkeys(i for i in ids if not re.match(r"\d{8}-", i)))
    return listed.index(case) + 1 if case in listed else None


def journey_c(folder: Path, size: tuple[int, int], socket: str) -> Tally:
    """(c): `3`, the symptom in English, the hang case opened; back; in Chinese, opened."""
    tally = Tally()
    with fabtui_in_tmux(folder, size, [], f"switch.dom@{HANG_PORT}", socket, tally) as pane:
        pane.wait("spines ", "the app")
        for query in ("dead optic no light", "NCCL 挂死 光模块"):
            pane.key("3")
            pane.wait("cases in the library", "3: the case library")
            pane.type(query)
            text = pane.wait(lambda t: HANG_CASE in t or "no case" in t,
                             f"{query!r}: the results", 30)
            rank = rank_of(HANG_CASE, text)
            tally.notes.append(f"{query!r}: {HANG_CASE} ranked {rank}")
            if rank is None or rank > 3:
                raise JourneyFailed(f"{query!r} ranks {HANG_CASE} {rank}:\n{text}")
            pane.key("Enter")  # to the results, the first highlighted
            for _ in range((rank or 1) - 1):
                pane.key("Down")
            pane.key("Enter")
            pane.wait(f"{HANG_CASE} ·", f"{query!r}: the case opened")
            pane.key("Escape")
            pane.gone(f"{HANG_CASE} ·", "esc: back to the results")
            pane.key("Escape")  # the search cleared
            pane.wait("symptom · 现象", "esc: the search cleared")
        tally.ended = time.monotonic()
        pane.key("C-q")
    return tally


JOURNEYS = {"a": journey_a, "b": journey_b, "c": journey_c}


def walk(name: str, size: tuple[int, int], **options: bool) -> Tally:
    """Journey `name` at `size` in a fresh folder of its own (removed after)."""
    with tempfile.TemporaryDirectory(prefix=f"fabtui-journey-{name}-") as tmp:
        socket = f"fabtui-journey-{os.getpid()}-{name}-{size[0]}"
        return JOURNEYS[name](Path(tmp), size, socket, **options)
