"""PyTorch Flight Recorder (NCCL trace buffer) outputs, in three forms.

- `fr_trace`: the analyzer (`torchfrtrace`, `tools/flight_recorder/fr_trace.py`). PyTorch 2.5
  prints `Not all ranks joining collective 5 at entry 4` followed by `group info:`,
  `collective:`, `missing ranks: {1}`, sizes, `expected ranks: 2`, `collective state:` and the
  stack; 2.6+ prints `Not all ranks joining collective, sequence number: 5` with
  `internal record id:`, `world size:` and `expected ranks: {0, 1}`; errors come as
  `Collective ... errors` with `Culprit rank R; Error type: T` items; 2.4 printed
  `Not all ranks joining collective for group G:D collective C  Missing ranks are {1}`.
- `dump`: a dump's contents, as JSON (`_dump_nccl_trace_json`) or as the unpickled dict printed
  by Python (tuples, single quotes, True/None); `...` elisions of published excerpts are
  dropped and counted.
- `state_listing`: `completed nccl:all_reduce` lines each followed by indented
  `function file.py:line` frames, as printed by third-party analyzers of the pickles.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from fabtui.model.parsed.flight_recorder import (
    FlightRecorder,
    FrCulprit,
    FrEntry,
    FrFrame,
    FrMismatch,
    FrPgConfig,
    FrPgStatus,
)
from fabtui.model.table import Table, left, right
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import Streamed, row_defaults
from fabtui.parsers.text import (
    clean_line_list,
    clean_line_stream,
    split_lines,
    strip_launcher_prefix,
)

KIND = "flight-recorder"
MODEL = FlightRecorder
DESCRIPTION = ("PyTorch Flight Recorder: torchfrtrace/fr_trace report, dump (JSON or unpickled), "
               "per-entry state listing")

_HEADERS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"Not all ranks joining collective (\d+) at entry (\d+)"),
     "not_all_ranks_joining"),
    # `, sequence number: N` (PyTorch 2.6+), `: sequence number: N` (late 2024, pytorch#140969).
    (re.compile(r"Not all ranks joining collective[,:] sequence number: (\d+)()"),
     "not_all_ranks_joining"),
    (re.compile(r"Not all ranks joining collective for group ()()"), "not_all_ranks_joining"),
    (re.compile(r"Input/output mismatch in the collective (\d+) at entry (\d+)"),
     "size_mismatch"),
    (re.compile(r"Input/output mismatch in the collective sequence number: (\d+)()"),
     "size_mismatch"),
    (re.compile(r"Collective (\d+) at entry (\d+) errors"), "collective_errors"),
    (re.compile(r"Collective sequence number: (\d+) has errors()"), "collective_errors"),
    (re.compile(r"We cannot decide what's wrong with this collective entry()()"),
     "cannot_decide"),
    (re.compile(r"Too many mismatches for process_group ()()"), "too_many_mismatches"),
]
_FIELD = re.compile(r"^\s*(internal record id|group info|collective|missing ranks|"
                    r"total input numel|total output numel|input sizes|output sizes|world size|"
                    r"expected ranks|collective state|error msg|error message|"
                    r"collective stack traces?)\s*:\s*(.*?)\s*$", re.IGNORECASE)
_OLD_FORM = re.compile(r"for group (\S+?)(?::(\S+))? collective (\S+)\s*(?:Missing ranks are "
                       r"(\{[^}]*\}|set\(\)))?\s*(\[.*?\]\])?\s*(\[.*?\]\])?\s*(\d+)?\s*"
                       r"(scheduled|started|completed)?")
_CULPRIT = re.compile(r"Culprit rank (\d+);\s*(?:Error type:\s*)?(?:MatchState\.)?(\w+)"
                      r"(?:,\s*(.*?))?(?=,\s*Culprit rank \d+;|$)")
_STATE_LINE = re.compile(r"^\s*(scheduled|started|completed)\s+((?:nccl|gloo|xccl|ucc|mpi|"
                         r"custom)\S*:\S+(?:\s+\d+\s*(?:->|<-)\s*\d+)?)\s*$")
_FRAME_LINE = re.compile(r"^\s+(\S+)\s+(?:at\s+)?(\S+?):(\d+)\s*$")
_RANK_LINE = re.compile(r"^\s*(?:rank|Rank|RANK)\s*[:=#]?\s*(\d+)\s*:?\s*$")
_LOG_PREFIX = re.compile(r"^\s*(?:\[[^\]]*\]\s*)*(?:\d{4}-\d\d-\d\d[ T][\d:,.]+\s*)?"
                         r"(?:INFO|DEBUG|WARNING|ERROR)(?::[\w.]+:|\s*[:\]-]\s*|\s+)")
_DUMP_MARKERS = re.compile(r"""["'](?:pg_config|pg_status|entries|profiling_name)["']\s*:""")


def detect(text: str) -> float:
    """How sure we are that `text` is a Flight Recorder report, dump or listing (0..1)."""
    head = text[:50000]
    if re.search(r"Not all ranks joining collective|Collective sequence number: \d+ has errors|"
                 r"Input/output mismatch in the collective", head):
        return 0.95
    markers = len(set(_DUMP_MARKERS.findall(head)))
    if markers >= 2 or (markers and "collective_seq_id" in head):
        return 0.9
    states = sum(1 for line in head.splitlines()[:2000]
                 if _STATE_LINE.match(strip_launcher_prefix(line)[1]))
    if states:
        return 0.8 if states >= 2 else 0.6
    return 0.0


# --- values ---------------------------------------------------------------------------------

def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else (str(value) if isinstance(value, int) else None)


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _sizes(value: Any) -> list[list[int]] | None:
    """`[[3, 4]]` as a list of shapes; None for anything else."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    if not isinstance(value, list | tuple):
        return None
    shapes: list[list[int]] = []
    for shape in value:
        if not isinstance(shape, list | tuple) or any(_int(d) is None for d in shape):
            return None
        shapes.append([int(d) for d in shape])
    return shapes


def _strings(value: Any) -> list[str] | None:
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _rank_set(text: str) -> list[int]:
    """`{1, 3}` / `set()` / `[0, 1]` -> sorted ints."""
    return sorted({int(n) for n in re.findall(r"-?\d+", text)})


def _op(profiling_name: str | None) -> str | None:
    """`nccl:send 1->2` -> `send`."""
    words = (profiling_name or "").split(":", 1)[-1].split()
    return words[0] if words else None


# --- fr_trace analyzer report ---------------------------------------------------------------

class _Report:
    """Builds analyzer findings from header lines and the `name: value` lines after them."""

    def __init__(self) -> None:
        self.found: list[dict[str, Any]] = []
        self.current: dict[str, Any] | None = None
        self.in_stack = False

    def header(self, line: str) -> bool:
        for pattern, error in _HEADERS:
            match = pattern.search(line)
            if match:
                self.current = {"error": error, "message": line.strip(), "stack": [],
                                "missing_ranks": [], "culprits": []}
                self.found.append(self.current)
                self.in_stack = False
                self._header_values(match, error, line)
                return True
        return False

    def _header_values(self, match: re.Match[str], error: str, line: str) -> None:
        assert self.current is not None
        if match.group(1):
            self.current["collective_seq_id"] = int(match.group(1))
        if match.group(2):
            self.current["record_id"] = int(match.group(2))
        if error == "cannot_decide":
            ranks = re.search(r"from ranks \((.*?)\)", line)
            self.current["missing_ranks"] = _rank_set(ranks.group(1)) if ranks else []
        elif error == "too_many_mismatches":
            group = re.search(r"process_group (\S+?):?\s+(.*?)\s*aborting", line)
            if group:
                self.current.update(pg_name=group.group(1), pg_desc=group.group(2))
        elif "for group" in line:
            self._old_form(line)

    def _old_form(self, line: str) -> None:
        """PyTorch 2.4 printed the whole finding on one line."""
        assert self.current is not None
        old = _OLD_FORM.search(line)
        if not old:
            return
        name, desc, coll, missing, ins, outs, count, state = old.groups()
        self.current.update(pg=f"{name}:{desc}" if desc else name, pg_name=name, pg_desc=desc,
                            profiling_name=coll, input_sizes=_sizes(ins),
                            output_sizes=_sizes(outs), state=state,
                            expected_rank_count=int(count) if count else None)
        if missing:
            self.current["missing_ranks"] = _rank_set(missing)

    def line(self, line: str) -> None:
        if self.current is None:
            return
        field = _FIELD.match(line)
        if field:
            self._field(field.group(1).lower(), field.group(2))
        elif self.in_stack and line.strip():
            self.current["stack"].append(line.strip())
        elif not line.strip():
            self.in_stack = False

    def _field(self, name: str, value: str) -> None:
        assert self.current is not None
        self.in_stack = name.startswith("collective stack trace")
        if self.in_stack:
            if value:
                self.current["stack"].append(value)
            return
        current = self.current
        if name == "group info":
            pg_name, _, desc = value.partition(":")
            current.update(pg=value, pg_name=pg_name, pg_desc=desc or None)
        elif name == "collective":
            current["profiling_name"] = value
        elif name == "missing ranks":
            current["missing_ranks"] = _rank_set(value)
        elif name == "expected ranks":
            if value.strip().isdigit():
                current["expected_rank_count"] = int(value)
            else:
                current["expected_ranks"] = _rank_set(value)
        elif name in ("world size", "internal record id", "total input numel",
                      "total output numel"):
            key = {"world size": "expected_rank_count", "internal record id": "record_id",
                   "total input numel": "input_numel",
                   "total output numel": "output_numel"}[name]
            current[key] = _int(value)
        elif name in ("input sizes", "output sizes"):
            current[name.replace(" ", "_")] = _sizes(value)
        elif name == "collective state":
            current["state"] = value
        else:
            current["error_message"] = value
            current["culprits"] = [FrCulprit(rank=int(r), error_type=t, detail=d or None)
                                   for r, t, d in _CULPRIT.findall(value)]


def _parse_report(lines: list[str]) -> FlightRecorder:
    report = _Report()
    for line in (_LOG_PREFIX.sub("", line, count=1) for line in lines):
        if not report.header(line):
            report.line(line)
    mismatches = [FrMismatch.model_validate(found) for found in report.found]
    elided = sum(1 for line in lines if line.strip() in ("...", "…"))
    return FlightRecorder(format="fr_trace", mismatches=mismatches, elided=elided)


# --- dump (JSON or unpickled Python repr) ---------------------------------------------------

_TOKEN = re.compile(r'''"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|\.\.\.|…|'''
                    r"""[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[A-Za-z_]\w*|[{}\[\](),:]|"""
                    r"""\s+|.""")
_WORDS = {"true": "true", "True": "true", "false": "false", "False": "false", "null": "null",
          "None": "null", "nan": "null", "NaN": "null", "inf": "null", "Infinity": "null"}


def _to_json(body: str, first_line: int) -> tuple[str, int]:
    """Python-repr/JSON-with-elisions -> JSON text, and the number of `...` removed."""
    out: list[str] = []
    elided = 0
    for match in _TOKEN.finditer(body):
        tok = match.group(0)
        if tok in ("...", "…"):
            elided += 1
            previous = next((t for t in reversed(out) if not t.isspace()), "")
            if previous == ":":
                out.append("null")
            continue
        if tok.startswith("'"):
            try:
                tok = json.dumps(ast.literal_eval(tok))
            except (ValueError, SyntaxError):
                tok = json.dumps(tok[1:-1])
        elif tok in ("(", ")"):
            tok = "[" if tok == "(" else "]"
        elif re.fullmatch(r"[A-Za-z_]\w*", tok):
            tok = _WORDS.get(tok, json.dumps(tok))
        elif len(tok) == 1 and not tok.isspace() and tok not in "{}[],:" \
                and not tok.isdigit():
            line = first_line + body.count("\n", 0, match.start())
            raise ParseError(KIND, line, f"unexpected character {tok!r} in the dump")
        out.append(tok)
    return _drop_stray_commas(out), elided


def _drop_stray_commas(tokens: list[str]) -> str:
    """Commas left around removed elisions: leading, doubled, or before a closing bracket."""
    kept: list[str] = []
    for i, tok in enumerate(tokens):
        if tok == ",":
            previous = next((t for t in reversed(kept) if not t.isspace()), "")
            following = next((t for t in tokens[i + 1:] if not t.isspace()), "")
            if previous in ("", "[", "{", ",") or following in ("]", "}", ","):
                continue
        kept.append(tok)
    return "".join(kept)


def _frames(value: Any) -> list[FrFrame]:
    if not isinstance(value, list):
        return []
    return [FrFrame(name=_str(f.get("name")), filename=_str(f.get("filename")),
                    line=_int(f.get("line"))) for f in value if isinstance(f, dict)]


def _entry(raw: dict[str, Any], rank: int | None) -> FrEntry:
    group = raw.get("process_group")
    pg_name = _str(group[0]) if isinstance(group, list) and group else None
    pg_desc = _str(group[1]) if isinstance(group, list) and len(group) > 1 else None
    name = _str(raw.get("profiling_name"))
    seq = raw.get("collective_seq_id", raw.get("seq_id"))
    return FrEntry(
        rank=rank, record_id=_int(raw.get("record_id")), pg_id=_int(raw.get("pg_id")),
        pg_name=pg_name, pg_desc=pg_desc, collective_seq_id=_int(seq),
        p2p_seq_id=_int(raw.get("p2p_seq_id")), op_id=_int(raw.get("op_id")),
        profiling_name=name, op=_op(name), is_p2p=_bool(raw.get("is_p2p")),
        state=_str(raw.get("state")), input_sizes=_sizes(raw.get("input_sizes")),
        output_sizes=_sizes(raw.get("output_sizes")),
        input_dtypes=_strings(raw.get("input_dtypes")),
        output_dtypes=_strings(raw.get("output_dtypes")), timeout_ms=_int(raw.get("timeout_ms")),
        time_created_ns=_int(raw.get("time_created_ns")),
        time_discovered_started_ns=_int(raw.get("time_discovered_started_ns")),
        time_discovered_completed_ns=_int(raw.get("time_discovered_completed_ns")),
        retired=_bool(raw.get("retired")), frames=_frames(raw.get("frames")))


def _pg_config(value: Any) -> dict[str, FrPgConfig]:
    if not isinstance(value, dict):
        return {}
    result: dict[str, FrPgConfig] = {}
    for key, group in value.items():
        if isinstance(group, dict):
            ranks = group.get("ranks")
            result[str(key)] = FrPgConfig(
                name=_str(group.get("name")), desc=_str(group.get("desc")),
                ranks=_rank_set(str(ranks)) if ranks is not None else None)
    return result


def _pg_status(value: Any) -> dict[str, FrPgStatus]:
    if not isinstance(value, dict):
        return {}
    known = ("last_enqueued_collective", "last_started_collective", "last_completed_collective")
    result: dict[str, FrPgStatus] = {}
    for key, status in value.items():
        if isinstance(status, dict):
            others = {str(k): v for k, v in status.items()
                      if k not in known and _int(v) is not None}
            result[str(key)] = FrPgStatus(
                **{k: _int(status.get(k)) for k in known},
                other={k: int(v) for k, v in others.items()})
    return result


def _parse_dump(lines: list[str]) -> FlightRecorder:
    start = next((i for i, line in enumerate(lines) if line.strip().startswith("{")), None)
    if start is None:
        raise ParseError(KIND, None, "no `{` opening a Flight Recorder dump")
    data, elided = _decode("\n".join(lines[start:]), start)
    return from_dump(data, start + 1, elided)


def _decode(body: str, start: int) -> tuple[Any, int]:
    """The data of a dump whose first line is line `start + 1`, and its `...` elisions.

    A dump in JSON (what PyTorch's JSON dump and a pickle's plain data give) is read as it
    is, with NaN and infinities as null; only a Python repr or an elided dump goes through
    `_to_json`, a token at a time (ten times slower on a large dump).
    """
    try:
        return _loads(body[:body.rfind("}") + 1], start, constants=True), 0
    except json.JSONDecodeError:
        pass
    text, elided = _to_json(body, start + 1)
    try:
        return _loads(text[:text.rfind("}") + 1], start), elided
    except json.JSONDecodeError as exc:
        raise ParseError(KIND, start + exc.lineno, f"dump is not readable: {exc.msg}") from None


def _loads(text: str, start: int, constants: bool = False) -> Any:
    """`json.loads`, with what no dump holds refused as a `ParseError` at the dump's first line:
    nesting past the interpreter's recursion limit (a real dump nests six levels), a number of
    more than 4,300 digits (Python's limit for reading one). Broken JSON raises as it does.
    `constants`: NaN and infinities are read as null."""
    try:
        return json.loads(text, parse_constant=_no_number) if constants else json.loads(text)
    except RecursionError:
        raise ParseError(KIND, start + 1, "the dump nests too deep to read: not a Flight "
                                          "Recorder dump (a real one nests six levels)") from None
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            raise
        raise ParseError(KIND, start + 1, "the dump holds a number of more than 4,300 digits: "
                                          "not a Flight Recorder dump") from None


def _no_number(_constant: str) -> None:
    """NaN, Infinity and -Infinity in a dump: no value, as `_to_json` reads them."""
    return None


def from_dump(data: Any, line: int | None = None, elided: int = 0) -> FlightRecorder:
    """A Flight Recorder dump from its decoded data (`line`: where it starts, for errors;
    `elided`: how many `...` were removed from its text)."""
    if not isinstance(data, dict) or not isinstance(data.get("entries", []), list):
        raise ParseError(KIND, line, "the dump is not a dict with an `entries` list")
    rank = _int(data.get("rank"))
    entries = [_entry(e, rank) for e in data.get("entries", []) if isinstance(e, dict)]
    warnings = [f"{elided} `...` elision(s) in the dump: entries or fields were left out"] \
        if elided else []
    return FlightRecorder(format="dump", version=_str(data.get("version")), rank=rank,
                          pg_config=_pg_config(data.get("pg_config")),
                          pg_status=_pg_status(data.get("pg_status")), entries=entries,
                          elided=elided, warnings=warnings)


# --- per-entry state listing ----------------------------------------------------------------

_ENTRY_DEFAULTS = row_defaults(FrEntry)


def _listing(lines: Iterable[str], warnings: list[str] | None) -> Iterator[dict[str, object]]:
    """The entries of a state listing, each as `model_dump(mode="json")` gives it (a listing
    can be millions of lines: no model per entry and frame); unread lines go to `warnings`."""
    entry: dict[str, object] | None = None
    frames: list[dict[str, object]] = []
    rank: int | None = None
    for number, line in enumerate(lines, start=1):
        state = _STATE_LINE.match(line)
        if state:
            if entry is not None:
                yield entry
            name = re.sub(r"\s+", " ", state.group(2))
            frames = []
            entry = dict(_ENTRY_DEFAULTS)
            entry.update(rank=rank, profiling_name=name, op=_op(name), state=state.group(1),
                         frames=frames)
            continue
        frame = _FRAME_LINE.match(line)
        rank_line = None if frame and entry is not None else _RANK_LINE.match(line)
        if frame and entry is not None:
            frames.append({"name": frame.group(1), "filename": frame.group(2),
                           "line": int(frame.group(3))})
        elif rank_line:
            rank = int(rank_line.group(1))
        elif line.strip() and warnings is not None:
            warnings.append(f"line {number}: not an entry or frame: {line.strip()[:60]}")
    if entry is not None:
        yield entry


def _parse_listing(lines: list[str]) -> Streamed[FlightRecorder]:
    """A state listing whose entries are read from `lines` again when they are written."""
    warnings: list[str] = []
    for _ in _listing(lines, warnings):
        pass

    def dumped() -> Iterator[dict[str, object]]:
        return _listing(lines, None)

    def models() -> Iterator[FrEntry]:
        return (FrEntry.model_validate(entry) for entry in dumped())

    return Streamed(FlightRecorder(format="state_listing", entries=[], warnings=warnings),
                    {"entries": models}, {"entries": dumped})


# --- which form ---------------------------------------------------------------------------

_ANY_HEADER = re.compile("|".join(f"(?:{pattern.pattern})" for pattern, _ in _HEADERS))
_DUMP_MARKER_AT_END = re.compile(r"""["'](?:pg_config|pg_status|entries|profiling_name)["']"""
                                 r"\s*\Z")


def _chunks(lines: list[str], size: int = 4096) -> Iterator[str]:
    """The lines joined a few thousand at a time: searched like the whole text, not copied
    whole (no form's marker spans lines but the dump marker's blank before its colon)."""
    for start in range(0, len(lines), size):
        yield "\n".join(lines[start:start + size])


def _has_header(lines: list[str]) -> bool:
    return any(_ANY_HEADER.search(chunk) for chunk in _chunks(lines))


def _has_dump_marker(lines: list[str]) -> bool:
    """`_DUMP_MARKERS.search` of the joined lines (its `\\s*` may run across chunks)."""
    waiting = False  # the previous chunk ended in a marker's name, its colon still to come
    for chunk in _chunks(lines):
        if waiting and chunk.lstrip().startswith(":"):
            return True
        if waiting and not chunk.strip():
            continue
        if _DUMP_MARKERS.search(chunk):
            return True
        waiting = _DUMP_MARKER_AT_END.search(chunk) is not None
    return False


def parse(text: str) -> FlightRecorder:
    """Parse whichever Flight Recorder form `text` holds; `ParseError` if none."""
    return parse_lines(split_lines(text)).assemble()


def parse_lines(lines: Iterable[str]) -> Streamed[FlightRecorder]:
    """Parse normalised lines (`fabtui parse` reads files this way). The cleaned lines are
    held once, never the text or a joined copy; a state listing's entries come on demand."""
    cleaned = clean_line_list(lines) if isinstance(lines, list) \
        else list(clean_line_stream(lines))
    if _has_header(cleaned):
        return Streamed(_parse_report(cleaned))
    if _has_dump_marker(cleaned):
        return Streamed(_parse_dump(cleaned))
    if any(_STATE_LINE.match(line) for line in cleaned):
        return _parse_listing(cleaned)
    raise ParseError(KIND, None, "no Flight Recorder analyzer report, dump or state listing found")


def tables(result: FlightRecorder) -> list[Table]:
    """Findings first (mismatches, their culprits), then process groups, then the entries."""
    out = [Table.build([], title=[f"format: {result.format}  version: {result.version}"])]
    if result.mismatches:
        out.append(Table.build(
            [left("error"), left("seq"), left("entry"), left("pg"), left("op"),
             left("missing_ranks", "missing ranks"), left("state")],
            [(m.error, m.collective_seq_id, m.record_id, m.pg, m.profiling_name,
              ",".join(str(r) for r in m.missing_ranks) or None, m.state)
             for m in result.mismatches]))
    culprits = [(m.collective_seq_id, m.record_id, c.rank, c.error_type, c.detail)
                for m in result.mismatches for c in m.culprits]
    if culprits:
        out.append(Table.build([left("seq"), left("entry"), left("culprit_rank", "culprit rank"),
                                left("error_type", "error type"), left("detail")], culprits))
    if result.pg_status:
        out.append(Table.build(
            [left("pg"), right("enqueued"), right("started"), right("completed")],
            [(pg, s.last_enqueued_collective, s.last_started_collective,
              s.last_completed_collective) for pg, s in result.pg_status.items()]))
    if result.entries or len(out) == 1:
        out.append(Table.build(
            [left("rank"), left("record"), left("pg"), left("seq"), left("op"),
             left("state")],
            [(e.rank, e.record_id, f"{e.pg_name or '-'}:{e.pg_desc or '-'}", e.collective_seq_id,
              e.profiling_name, e.state) for e in result.entries]))
    return out
