"""Helpers every parser shares: cleaning captured text, launcher prefixes, numbers as printed.

Real captures arrive with CRLF line ends, ANSI colours, tabs, trailing blanks, thousands
separators, `N/A`, `-inf`, and (from job launchers) a prefix on every line: `0: ` from `srun -l`,
`[1,0]<stdout>:` from `mpirun --tag-output`, `host: ` from pdsh. These helpers turn that into
something a parser can match without caring.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_MPIRUN = re.compile(r"^\[\d+,\d+\]<(?:stdout|stderr)>:\s?")
_SRUN = re.compile(r"^\s*(\d+): ")
_PDSH = re.compile(r"^([A-Za-z][\w.-]*): ")
_NUMBER = re.compile(r"^[-+]?(?:\d[\d,_]*)?(?:\.\d+)?(?:[eE][-+]?\d+)?$")
NOT_AVAILABLE = frozenset({"", "n/a", "[n/a]", "na", "none", "-", "--", "null", "unknown",
                           "not available", "not supported", "[not supported]", "unknown error",
                           "err!", "[unknown error]"})


def normalize(text: str) -> str:
    """CRLF and CR become LF; a BOM, NULs and ANSI escape sequences are removed."""
    if text.startswith("\ufeff"):
        text = text[1:]
    # Each `in` is one fast scan; `replace` costs more even where there is nothing to replace.
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        text = text.replace("\x00", "")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    return text


def split_lines(text: str) -> list[str]:
    """Normalised lines without their line ends (trailing blanks kept; strip where needed)."""
    return normalize(text).split("\n")


def strip_launcher_prefix(line: str, *, allow_host: bool = False) -> tuple[str | None, str]:
    """Split an mpirun/srun (and, if `allow_host`, pdsh `host: `) prefix from a line.

    Returns `(prefix, rest)`; `prefix` is None when the line has none. The pdsh form is opt-in
    because `key: value` outputs look the same.
    """
    # Most lines have no prefix: their first character rules both patterns out (the NCCL log
    # parser asks this of tens of thousands of lines).
    first = line[:1]
    match = _MPIRUN.match(line) if first == "[" else None
    if match:
        return match.group(0).strip(), line[match.end():]
    match = _SRUN.match(line) if first.isdigit() or first.isspace() else None
    if match:
        return match.group(1), line[match.end():]
    if allow_host:
        match = _PDSH.match(line)
        if match:
            return match.group(1), line[match.end():]
    return None, line


def is_missing(value: str) -> bool:
    """True for the ways tools print "no value": N/A, -, empty, ..."""
    return value.strip().lower() in NOT_AVAILABLE


_INT = re.compile(r"[-+]?\d+")
_INT_POINT_ZEROS = re.compile(r"[-+]?\d+\.0*")


def to_int(value: str) -> int | None:
    """`"1,052,612,505"` -> 1052612505; `N/A` and friends -> None; not a number -> ValueError."""
    if value.isascii() and value.isdigit():  # the common case, a plain count: what the rest
        return int(value)                    # would conclude, without its copies and matches
    text = value.strip().replace(",", "").replace("_", "")
    if is_missing(text):
        return None
    if _INT.fullmatch(text):
        return int(text)
    if _INT_POINT_ZEROS.fullmatch(text):
        return int(float(text))
    raise ValueError(f"{value!r} is not an integer")


def int_or_hex(value: str) -> int | None:
    """A decimal or `0x` hex integer as IB tools print them (`4`, `0x0010`); None otherwise."""
    value = value.strip()
    if re.fullmatch(r"0[xX][0-9a-fA-F]+", value):
        return int(value, 16)
    if re.fullmatch(r"[-+]?[0-9]+", value):
        return int(value)
    return None


_PLAIN_FLOAT = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def to_float(value: str) -> float | None:
    """A number as printed; `N/A`, `-inf`, `inf` and `nan` -> None; not a number -> ValueError."""
    if _PLAIN_FLOAT.fullmatch(value):  # the common case: tables of figures
        number = float(value)
        return None if math.isinf(number) else number
    text = value.strip().replace(",", "").replace("_", "")
    if is_missing(text) or text.lower() in ("-inf", "inf", "+inf", "nan", "-nan"):
        return None
    if not _NUMBER.match(text) or text in ("+", "-", "."):
        raise ValueError(f"{value!r} is not a number")
    number = float(text)
    return None if math.isinf(number) or math.isnan(number) else number


def looks_numeric(value: str) -> bool:
    """True when `value` is a number as tools print them (thousands separators allowed)."""
    text = value.strip().replace(",", "")
    return bool(text) and bool(_NUMBER.match(text)) and text not in ("+", "-", ".")


_HOST_PREFIX = re.compile(r"^([A-Za-z][\w.-]*): ")
_QUOTING = re.compile(r"^\s*(?:>[ \t]?)+")


def clean_lines(text: str) -> list[str]:
    """Normalised lines with the decoration of how they were captured removed.

    - mpirun / srun prefixes, when most non-blank lines carry one;
    - a pdsh `host: ` prefix, only when one host starts most lines (so `State: Active` or a lone
      `Error: ...` is never taken for a host);
    - mail / markdown quoting (`> `), when most lines are quoted.
    """
    return clean_line_list(split_lines(text))


def clean_line_list(lines: list[str]) -> list[str]:
    """`clean_lines` of lines already split (normalised); cleans `lines` in place and returns it.

    Counts first and rewrites the list in place, so a capture of millions of lines costs its
    lines and no copies of them.
    """
    nonblank = sum(1 for line in lines if line.strip())
    if not nonblank:
        return lines
    prefixed = sum(1 for line in lines
                   if line.strip() and strip_launcher_prefix(line)[0] is not None)
    if prefixed * 2 > nonblank:
        for index, line in enumerate(lines):
            lines[index] = strip_launcher_prefix(line)[1]
    hosts: dict[str, int] = {}
    for line in lines:
        match = _HOST_PREFIX.match(line)
        if match:
            hosts[match.group(1)] = hosts.get(match.group(1), 0) + 1
    if hosts:
        host, count = max(hosts.items(), key=lambda item: item[1])
        if count >= max(2, 0.6 * nonblank):
            head = f"{host}: "
            for index, line in enumerate(lines):
                if line.startswith(head):
                    lines[index] = line[len(head):]
    if sum(1 for line in lines if line.lstrip().startswith(">")) * 2 > nonblank:
        for index, line in enumerate(lines):
            lines[index] = _QUOTING.sub("", line)
    return lines


def clean_line_stream(lines: Iterable[str]) -> Iterator[str]:
    """`clean_line_list` of lines that can be iterated more than once (a file re-read from its
    start, a list), without holding them: two counting passes, then the cleaned lines.

    A one-shot iterator is read into a list first (the decisions need every line).
    """
    if iter(lines) is lines:
        yield from clean_line_list(list(lines))
        return
    nonblank = prefixed = 0
    hosts: tuple[dict[str, int], dict[str, int]] = ({}, {})  # as read, launcher prefix removed
    for line in lines:
        if not line.strip():
            continue
        nonblank += 1
        prefix, rest = strip_launcher_prefix(line)
        match = _HOST_PREFIX.match(line)
        if match:
            hosts[0][match.group(1)] = hosts[0].get(match.group(1), 0) + 1
        if prefix is not None:
            prefixed += 1
            match = _HOST_PREFIX.match(rest)
        if match:
            hosts[1][match.group(1)] = hosts[1].get(match.group(1), 0) + 1
    if not nonblank:
        yield from lines
        return
    launcher = prefixed * 2 > nonblank
    host_head = None
    if hosts[launcher]:
        host, count = max(hosts[launcher].items(), key=lambda item: item[1])
        host_head = f"{host}: " if count >= max(2, 0.6 * nonblank) else None
    plain = not launcher and host_head is None
    quoted = sum(1 for line in lines if (line if plain else _undecorate(line, launcher, host_head))
                 .lstrip().startswith(">")) * 2 > nonblank
    if plain and not quoted:
        yield from lines
        return
    for line in lines:
        line = _undecorate(line, launcher, host_head)
        yield _QUOTING.sub("", line) if quoted else line


def _undecorate(line: str, launcher: bool, host_head: str | None) -> str:
    if launcher:
        line = strip_launcher_prefix(line)[1]
    if host_head is not None and line.startswith(host_head):
        line = line[len(host_head):]
    return line
