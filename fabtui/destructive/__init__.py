"""Which commands take something down or destroy data: one classifier for every command fabtui
sends (a runbook's node, local and switch-CLI lines), judged on the command as it will run.

`judge(script, flavor=…)` reads the rendered script as the shell (or the switch's CLI) will,
unwraps what only launches another command (`sudo`, `env`, `nohup`, `timeout`, `xargs`,
`sh -c`, `bash -c`, `eval`, `ssh host …`, `pdsh`, `srun`, …) and judges each command by the
reviewed forms of its platform (`linux.RULES`, `switch_cli`). A command whose name is computed
when it runs (`${X}oot`, `$(echo …)`, text piped into a shell, `eval "$x"`, inline Python that
calls the shell) cannot be read before it runs, so it is judged destructive too: the operator
types the confirmation, and reads the command first.

Pure: nothing is run, read or written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fabtui.destructive import linux, switch_cli
from fabtui.destructive.shell import SimpleCommand, Word, simple_commands

MAX_DEPTH = 8
"""Nested shells (`sh -c "bash -c '…'"`) read before the script is called unreadable."""

CISCO_LIKE = frozenset({"eos", "nxos", "onyx"})
"""Switch flavors whose CLI is not a shell (`switch_cli` reads their lines)."""


@dataclass(frozen=True)
class Hazard:
    """One destructive command in a script: the command as read, and what it does."""

    command: str
    why: str

    def __str__(self) -> str:
        return f"{self.command} ({self.why})"


def judge(script: str, *, flavor: str | None = None, switch: bool = False) -> list[Hazard]:
    """The destructive commands of `script`, in order (empty: none known).

    A node's or this machine's script is a POSIX shell script (`switch=False`). A switch's
    script is the lines typed into its CLI: a shell on SONiC, Cumulus and Linux switches, the
    Cisco-like CLI on EOS, NX-OS and Onyx; with no `flavor` known, both readings count.
    """
    if not switch:
        return judge_shell(script)
    lines = [line for line in script.split("\n") if line.strip()]
    hazards: list[Hazard] = []
    if flavor is None or flavor not in CISCO_LIKE:
        for line in lines:
            hazards += judge_shell(line)
    if flavor is None or flavor in CISCO_LIKE:
        hazards += _judge_cisco(lines)
    return _unique(hazards)


def judge_shell(script: str, depth: int = 0) -> list[Hazard]:
    """The destructive commands of a POSIX shell script."""
    if depth > MAX_DEPTH:
        return [Hazard(_short(script), f"shells nested more than {MAX_DEPTH} deep: cannot be "
                                       "read before it runs")]
    read = simple_commands(script)
    hazards: list[Hazard] = []
    for command in read.commands:
        hazards += _judge_command(command, depth)
    for inner in read.inner:
        hazards += judge_shell(inner, depth + 1)
    return _unique(hazards)


def _judge_cisco(lines: Sequence[str]) -> list[Hazard]:
    hazards: list[Hazard] = []
    for verdict in switch_cli.judge_lines(lines):
        if verdict.why is not None:
            hazards.append(Hazard(verdict.line.strip(), verdict.why))
        elif verdict.shell is not None:
            hazards += judge_shell(verdict.shell)
    return hazards


# --- one simple command ---------------------------------------------------------------------
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "busybox", "fish"})
_INTERPRETERS = frozenset({"python", "python2", "python3", "perl", "ruby", "node", "php",
                           "lua", "awk", "gawk"})
_CALLS_OUT = re.compile(r"\b(?:system|popen|subprocess|exec[lv]?p?e?|spawn|os\.remove|"
                        r"os\.unlink|shutil\.rmtree|unlink|rmdir|check_call|check_output|"
                        r"call\(|run\(|Popen)\b|`")


def _judge_command(command: SimpleCommand, depth: int) -> list[Hazard]:
    hazards = [Hazard(f"{operator} {target.text}", f"writes to {target.text}")
               for operator, target in command.redirects
               if operator.startswith(">") or operator == "<>"
               if linux.dangerous_path(target.text)]
    words = _unwrap(command.words, hazards, depth)
    if words is None or not words:
        return hazards
    text = _short(" ".join(w.text for w in words))
    head = words[0]
    if head.computed:
        return [*hazards, Hazard(text, "the command's name is computed when it runs: what "
                                       "runs cannot be read before")]
    program = head.text.rsplit("/", 1)[-1]
    args = [w.text for w in words[1:]]
    if program in _SHELLS:
        return hazards + _judge_shell_program(program, words, command, depth)
    if program in ("eval", "source", "."):
        return hazards + _judge_eval(program, words, depth)
    if program in _INTERPRETERS or program.startswith(("python", "perl", "ruby")):
        code = _inline_code(args)
        if code is not None and _CALLS_OUT.search(code):
            hazards.append(Hazard(text, f"{program} code that runs commands or deletes "
                                        "files: cannot be read before it runs"))
        return hazards
    if program == "tee" and any(linux.dangerous_path(a) for a in args):
        return [*hazards, Hazard(text, "writes to " + next(
            a for a in args if linux.dangerous_path(a)))]
    if program in ("vtysh", "clish", "cli", "Cli") and "-c" in args:
        lines = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-c"]
        return hazards + _judge_cisco(lines)
    if program == "find" and any(a in ("-exec", "-execdir", "-ok", "-okdir") for a in args):
        hazards += _judge_find_exec(args, depth)
    rule = linux.rule_for(head.text)
    if rule is not None:
        why = rule(args)
        if why is not None:
            hazards.append(Hazard(text, why))
    return hazards


def _judge_shell_program(program: str, words: list[Word], command: SimpleCommand,
                         depth: int) -> list[Hazard]:
    """`sh -c SCRIPT`, `bash <<EOF`, `… | sh`: the script a shell is given."""
    args = words[1:]
    if program == "busybox" and args and args[0].text in _SHELLS:
        args = args[1:]
    text = _short(" ".join(w.text for w in words))
    for index, word in enumerate(args):
        if word.text.startswith("-") and "c" in word.text[1:] and not word.text.startswith("--"):
            if index + 1 >= len(args):
                return []
            script = args[index + 1]
            if script.computed:
                return [Hazard(text, "runs a shell script computed when it runs: it cannot be "
                                     "read before")]
            return judge_shell(script.text, depth + 1)
    files = [w for w in args if not w.text.startswith("-")]
    if command.stdin_script is not None and not files:
        return judge_shell(command.stdin_script, depth + 1)
    if not files and command.piped_in:
        return [Hazard(text, "runs whatever text is piped into it: it cannot be read before")]
    return []


def _judge_eval(program: str, words: list[Word], depth: int) -> list[Hazard]:
    args = words[1:]
    text = _short(" ".join(w.text for w in words))
    if program != "eval":
        return []  # `source FILE`: a file on the target, as `sh FILE` is
    if any(w.computed for w in args):
        return [Hazard(text, "eval of text computed when it runs: it cannot be read before")]
    return judge_shell(" ".join(w.text for w in args), depth + 1)


def _judge_find_exec(args: list[str], depth: int) -> list[Hazard]:
    hazards: list[Hazard] = []
    for index, arg in enumerate(args):
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((i for i in range(index + 1, len(args)) if args[i] in (";", "+")),
                       len(args))
            hazards += _judge_words([Word(a) for a in args[index + 1:end]], depth)
    return hazards


def _judge_words(words: list[Word], depth: int) -> list[Hazard]:
    return _judge_command(SimpleCommand(words=words), depth + 1) if words else []


def _inline_code(args: list[str]) -> str | None:
    for index, arg in enumerate(args[:-1]):
        if arg in ("-c", "-e", "-E", "--eval", "-r") or (arg.startswith("-") and
                                                        arg[-1:] in "ce" and len(arg) <= 4):
            return args[index + 1]
    return None


# --- launchers: commands that run another command ---------------------------------------------
_WRAPPER_VALUES: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-h", "-p", "-D", "-r", "-t", "-U", "-T", "-R",
                       "--user", "--group", "--host", "--prompt", "--chdir", "--role",
                       "--type", "--other-user", "--command-timeout", "--chroot",
                       "--close-from"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "--class", "-n", "--classdata", "-p", "-P", "-u"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "chrt": frozenset(), "taskset": frozenset(), "nohup": frozenset(), "setsid": frozenset(),
    "exec": frozenset({"-a"}), "command": frozenset(), "builtin": frozenset(),
    "unbuffer": frozenset(), "time": frozenset({"-f", "-o"}), "caffeinate": frozenset(),
    "runuser": frozenset({"-u", "-g", "-G", "--user", "--group"}),
    "chroot": frozenset({"--userspec", "--groups"}), "flock": frozenset({"-w", "-E"}),
    "numactl": frozenset({"-C", "-N", "-m", "-p", "-i", "--physcpubind", "--cpunodebind",
                          "--membind", "--preferred", "--interleave"}),
    "watch": frozenset({"-n", "--interval", "-d"}),
    "xargs": frozenset({"-I", "-i", "-L", "-l", "-n", "-P", "-s", "-d", "-E", "-e", "-a",
                        "--max-args", "--max-procs", "--delimiter", "--arg-file"}),
}
"""Programs that run the command after their options, with the options that take a value."""
_POSITIONAL_FIRST = {"timeout": 1, "chroot": 1, "flock": 1, "taskset": 1, "chrt": 1}
"""Launchers with positional arguments before the command (`timeout 10 cmd`)."""
_REMOTE = frozenset({"ssh", "pdsh", "clush", "srun", "mpirun", "mpiexec", "parallel",
                     "ansible", "salt", "pssh", "parallel-ssh", "script", "dsh"})
"""Launchers whose options vary too much to read: every suffix of their words is judged."""


def _unwrap(words: list[Word], hazards: list[Hazard], depth: int) -> list[Word] | None:
    """The command `words` really runs, launchers removed; None when a launcher's commands
    were judged into `hazards` already."""
    for _ in range(16):
        if not words:
            return words
        head = words[0]
        program = head.text.rsplit("/", 1)[-1]
        if head.computed:
            return words
        if program == "env" and any(w.text in ("-S", "--split-string") for w in words):
            index = next(i for i, w in enumerate(words) if w.text in ("-S", "--split-string"))
            rest = " ".join(w.text for w in words[index + 1:])
            hazards += judge_shell(rest, depth + 1)
            return None
        if program == "su":
            script = next((words[i + 1] for i, w in enumerate(words[:-1])
                           if w.text in ("-c", "--command")), None)
            if script is not None and script.computed:
                hazards.append(Hazard(_short(" ".join(w.text for w in words)),
                                      "runs a script computed when it runs: it cannot be read "
                                      "before"))
            elif script is not None:
                hazards += judge_shell(script.text, depth + 1)
            return None
        if program == "command" and any(w.text in ("-v", "-V") for w in words[1:2]):
            return None  # `command -v X` looks X up; it runs nothing
        if program in _REMOTE:
            hazards += _judge_suffixes(words[1:], depth)
            return None
        values = _WRAPPER_VALUES.get(program)
        if values is None:
            return words
        words = _after_options(words[1:], values, _POSITIONAL_FIRST.get(program, 0))
    return words


def _after_options(words: list[Word], values: frozenset[str], positional: int) -> list[Word]:
    index = 0
    while index < len(words):
        text = words[index].text
        if text == "--":
            index += 1
            break
        if text in values:
            index += 2
        elif text.startswith("-") and len(text) > 1:
            index += 1
        elif "=" in text and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", text):
            index += 1  # env NAME=value cmd
        else:
            break
    return words[index + positional:]


def _judge_suffixes(words: list[Word], depth: int) -> list[Hazard]:
    """A launcher's command is somewhere in its words: each suffix that starts with a word
    that is not an option is judged as a command (one given as a single string too). A computed
    word counts as the command only when nothing follows it (`ssh host "$CMD"`, not
    `ssh $HOST uptime`)."""
    for index, word in enumerate(words):
        if word.text.startswith("-"):
            continue
        if word.computed:
            if index == len(words) - 1:
                return [Hazard(_short(" ".join(w.text for w in words)),
                               "runs a command computed when it runs: it cannot be read "
                               "before")]
            continue
        rest = words[index:]
        found = _judge_command(SimpleCommand(words=rest), depth + 1)
        if len(rest) == 1 and " " in word.text:
            found += judge_shell(word.text, depth + 1)
        if found:
            return found
    return []


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _unique(hazards: Iterable[Hazard]) -> list[Hazard]:
    return list(dict.fromkeys(hazards))


def describe(hazards: Sequence[Hazard]) -> str:
    """One line naming what `hazards` do (for a prompt, a refusal or lint)."""
    first = hazards[0]
    more = f" (+{len(hazards) - 1} more)" if len(hazards) > 1 else ""
    return f"`{first.command}` {first.why}{more}"
