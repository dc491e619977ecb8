"""A POSIX shell script read as the simple commands it runs, for judging them (not for running).

`simple_commands(script)` splits a script the way `sh` does before it runs anything: quotes
removed (`re''boot` is `reboot`, `r\\eboot` too), `;`, `&&`, `||`, `|`, `&`, newlines and
parentheses ending a command, comments dropped, redirections kept apart from the words, and the
scripts a command substitution (`$(...)`, backticks), a process substitution (`<(...)`) or a
here-document feeds to a shell collected as commands too, since they run as well. A word that
holds an expansion (`$X`, `${X}`, `$(...)`, backticks) is marked `computed`: its value is known
only when the script runs. Never raises: an unterminated quote or substitution ends at the end
of the script, as the classifier then judges what it could read.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

_OPERATORS = ("&&", "||", ";;", ";", "&", "|", "(", ")", "\n")
_REDIRECT = re.compile(r"^(?:\d*|&)(?:>>|>\||>&|<&|<>|<<<|<<-|<<|>|<)")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}",
                       "time", "coproc"})
_ENDERS = frozenset({"fi", "done", "esac"})
_HEADERS = frozenset({"for", "case", "select", "function", "in"})


@dataclass(frozen=True)
class Word:
    """One word as the shell passes it: quotes removed; an expansion left as written."""

    text: str
    computed: bool = False
    """Holds an expansion outside single quotes: the value is known only when it runs."""


@dataclass
class SimpleCommand:
    """One command with its arguments (assignments and shell keywords already set aside)."""

    words: list[Word] = field(default_factory=list)
    redirects: list[tuple[str, Word]] = field(default_factory=list)
    """(operator, target) of each redirection, `>`/`>>`/`<`/`<<`…, in order."""
    stdin_script: str | None = None
    """The text of a here-document or here-string (`<<EOF`, `<<<`), when there is one."""
    piped_in: bool = False
    """Reads the output of the command before it (`a | b`: b is piped in)."""

    @property
    def argv(self) -> list[str]:
        return [word.text for word in self.words]


@dataclass
class Script:
    """A script's commands, and the scripts it runs inside substitutions."""

    commands: list[SimpleCommand]
    inner: list[str]
    """The text of every `$(...)`, backtick and `<(...)` substitution (they run too)."""


def simple_commands(script: str) -> Script:
    """`script` read as the shell reads it (see the module's doc)."""
    return _Reader(script).read()


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.commands: list[SimpleCommand] = []
        self.inner: list[str] = []
        self.current = SimpleCommand()
        self.pending_heredocs: list[tuple[str, bool, SimpleCommand]] = []

    def read(self) -> Script:
        while self.at < len(self.text):
            char = self.text[self.at]
            if char in " \t":
                self.at += 1
            elif char == "\\" and self.text.startswith("\\\n", self.at):
                self.at += 2
            elif char == "#":
                end = self.text.find("\n", self.at)
                self.at = len(self.text) if end < 0 else end
            elif self._operator():
                continue
            else:
                self._word_or_redirect()
        self._end(piped=False)
        return Script(self.commands, self.inner)

    # --- operators and command ends ------------------------------------------------------
    def _operator(self) -> bool:
        for operator in _OPERATORS:
            if self.text.startswith(operator, self.at):
                self.at += len(operator)
                self._end(piped=operator == "|")
                if operator == "\n":
                    self._heredoc_bodies()
                return True
        return False

    def _end(self, *, piped: bool) -> None:
        command = self.current
        self.current = SimpleCommand(piped_in=piped)
        words = list(command.words)
        while words and (words[0].text in _KEYWORDS or words[0].text in _ENDERS) \
                and not words[0].computed:
            words.pop(0)
        if words and words[0].text in _HEADERS and not words[0].computed:
            return  # `for x in a b`, `case $x in`: a header, not a command
        while words and not words[0].computed and _NAME.match(words[0].text):
            words.pop(0)  # `X=1 cmd`: an assignment for cmd
        command.words = words
        if words or command.redirects:
            self.commands.append(command)

    def _heredoc_bodies(self) -> None:
        """After a newline: the bodies of the here-documents the line opened."""
        for delimiter, strip_tabs, command in self.pending_heredocs:
            lines: list[str] = []
            while self.at < len(self.text):
                end = self.text.find("\n", self.at)
                end = len(self.text) if end < 0 else end
                line = self.text[self.at:end]
                self.at = end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                lines.append(line)
            command.stdin_script = "\n".join(lines)
        self.pending_heredocs = []

    # --- words -----------------------------------------------------------------------------
    def _word_or_redirect(self) -> None:
        match = _REDIRECT.match(self.text[self.at:])
        if match:
            operator = match.group(0)
            self.at += len(operator)
            while self.at < len(self.text) and self.text[self.at] in " \t":
                self.at += 1
            target = self._word()
            if operator.endswith("<<<"):
                self.current.stdin_script = target.text
            elif operator.endswith(("<<", "<<-")):
                self.pending_heredocs.append((target.text, operator.endswith("-"),
                                              self.current))
            self.current.redirects.append((operator.lstrip("0123456789&"), target))
            return
        self.current.words.append(self._word())

    def _word(self) -> Word:
        out: list[str] = []
        computed = False
        text = self.text
        while self.at < len(text):
            char = text[self.at]
            if char in " \t\n;&|()<>" and not (char in "<>" and text.startswith("(", self.at + 1)):
                break
            if char in "<>":  # `<(...)` / `>(...)`: a process substitution
                self.inner.append(self._until_close(self.at + 2))
                computed = True
                continue
            if char == "\\":
                if self.at + 1 < len(text) and text[self.at + 1] != "\n":
                    out.append(text[self.at + 1])
                self.at += 2
            elif char == "'":
                end = text.find("'", self.at + 1)
                end = len(text) if end < 0 else end
                out.append(text[self.at + 1:end])
                self.at = end + 1
            elif char == '"':
                computed |= self._double_quoted(out)
            elif char == "$" and text.startswith("$'", self.at):
                out.append(self._ansi_c())
            elif char == "$" or char == "`":
                out.append(self._expansion())
                computed = True
            else:
                out.append(char)
                self.at += 1
        return Word("".join(out), computed)

    def _double_quoted(self, out: list[str]) -> bool:
        """Read `"..."` into `out`; True when it held an expansion."""
        text = self.text
        self.at += 1
        computed = False
        while self.at < len(text) and text[self.at] != '"':
            char = text[self.at]
            if char == "\\" and self.at + 1 < len(text) and text[self.at + 1] in '$`"\\\n':
                if text[self.at + 1] != "\n":
                    out.append(text[self.at + 1])
                self.at += 2
            elif char in "$`" and (char == "`" or (self.at + 1 < len(text)
                                   and (text[self.at + 1] in "({" or
                                        text[self.at + 1].isalnum() or
                                        text[self.at + 1] in "_@*#?$!-"))):
                out.append(self._expansion())
                computed = True
            else:
                out.append(char)
                self.at += 1
        self.at += 1
        return computed

    def _ansi_c(self) -> str:
        """`$'...'`: the string with its backslash escapes decoded, as bash does."""
        end = self.at + 2
        while end < len(self.text) and self.text[end] != "'":
            end += 2 if self.text[end] == "\\" else 1
        raw = self.text[self.at + 2:end]
        self.at = end + 1
        try:
            return codecs.decode(raw, "unicode_escape")
        except (UnicodeDecodeError, ValueError):
            return raw

    def _expansion(self) -> str:
        """`$X`, `${...}`, `$(...)`, `$((...))` or a backtick substitution, as written; the
        script of a command substitution is kept in `inner`."""
        text, start = self.text, self.at
        if text[start] == "`":
            end = start + 1
            while end < len(text) and text[end] != "`":
                end += 2 if text[end] == "\\" else 1
            self.inner.append(text[start + 1:end].replace("\\`", "`"))
            self.at = end + 1
            return text[start:self.at]
        if text.startswith("$((", start):
            self._until_close(start + 3, depth=2)
            return text[start:self.at]
        if text.startswith("$(", start):
            self.inner.append(self._until_close(start + 2))
            return text[start:self.at]
        if text.startswith("${", start):
            end = text.find("}", start)
            self.at = len(text) if end < 0 else end + 1
            return text[start:self.at]
        match = re.match(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])?", text[start:])
        self.at = start + len(match.group(0)) if match else start + 1
        return text[start:self.at]

    def _until_close(self, begin: int, depth: int = 1) -> str:
        """The text from `begin` to the parenthesis that closes it (quotes respected); moves
        past it."""
        text = self.text
        index = begin
        quote = ""
        while index < len(text) and depth > 0:
            char = text[index]
            if quote:
                if char == quote:
                    quote = ""
                elif char == "\\" and quote == '"':
                    index += 1
            elif char in "'\"":
                quote = char
            elif char == "\\":
                index += 1
            elif char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
            index += 1
        self.at = index
        return text[begin:max(begin, index - 1)]
