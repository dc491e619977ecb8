"""`dcgmi diag -r <level|tests>`, DCGM 1.x to 4.x.

    +---------------------------+------------------------------------------------+
    | Diagnostic                | Result                                         |
    +===========================+================================================+
    |-----  Deployment  --------+------------------------------------------------|
    | Denylist                  | Pass                                           |
    +-----  Hardware  ----------+------------------------------------------------+
    | GPU Memory                | Pass - GPUs: 1, 2, 3                           |
    |                           | Fail - GPU: 0                                  |
    | Warning                   | GPU 0 Thermal violations totaling 13.3 second  |
    |                           | s started at 9.7 seconds into the test for GP  |

DCGM 3.x adds a Metadata section; DCGM 4.x names tests in lower case (`memory`, `pcie`) and
lists `GPU0: Pass` lines under each test. `Warning` / `Error` / `Info` rows belong to the test
above them; the tool cuts their text every 45 characters (mid-word), so a continuation is glued
back without a space when the previous piece filled the cell, with one otherwise.

The verdict is derived from every test row (a summary line alone once reported a failing node
as healthy: IBM/autopilot #68).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from fabtui.model.parsed.dcgmi_diag import DcgmiDiag
from fabtui.model.table import Cell, Table, left
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import clean_lines

KIND = "dcgmi-diag"
MODEL = DcgmiDiag
DESCRIPTION = "dcgmi diag -r 1|2|3|4: DCGM diagnostic results per test and per GPU"

_SECTION = re.compile(r"^[|+]-{3,}\s+(\w[\w ]*?)\s+-+[+|]")
_RESULT = re.compile(r"^(Pass|Fail|Warn(?:ing)?|Skip|Not Run)\b\s*(?:-\s*(.*))?$", re.IGNORECASE)
_GPU_RESULT = re.compile(r"^GPU\s*(\d+)\s*:\s*(Pass|Fail|Warn(?:ing)?|Skip|Not Run)\b",
                         re.IGNORECASE)
_MESSAGE_ROW = re.compile(r"^(Warning|Error|Info)\b\s*:?\s*(.*)$", re.IGNORECASE)
_COMMAND = re.compile(r"^(?:\S*[$#]\s*)?(?:sudo\s+)?(?:\S*/)?dcgmi\s+diag\b.*?(?:-r|--run)[\s=]+"
                      r"['\"]?([^\s'\"]+)")
_SUMMARY = re.compile(r"^\s*(?:Overall\s+)?Result\s*:\s*(\w+)", re.IGNORECASE)
_SEVERITY = {"fail": 4, "warn": 3, "pass": 2, "skip": 1, "not_run": 0}
_DEFAULT_WIDTH = 45


def detect(text: str) -> float:
    """How sure we are that `text` is `dcgmi diag` output (0..1)."""
    head = text[:50000]
    score = 0.0
    if re.search(r"\|\s*Diagnostic\s+\|\s*Result\s+\|", head):
        score += 0.6
    if re.search(r"[|+]-{3,}\s+(?:Deployment|Metadata|Hardware|Integration|Stress)\s+-+", head):
        score += 0.4
    if "Successfully ran diagnostic" in head or re.search(r"dcgmi\s+diag", head):
        score += 0.2
    if "test_categories" in head and re.search(r"DCGM (?:GPU )?Diagnostic", head):
        score = max(score, 0.9)
    if not score and re.search(r"(?m)^\|[^|]+\|\s*(?:Pass|Fail|Skip|Warn) - (?:All|GPUs?:)", head):
        score = 0.5
    return min(score, 0.95)


def _normal(word: str) -> str:
    word = word.lower()
    if word.startswith("warn"):
        return "warn"
    return "not_run" if word == "not run" else word


@dataclass
class _Test:
    name: str
    statuses: list[str] = field(default_factory=list)
    gpus: dict[str, str] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)


@dataclass
class _Message:
    """A Warning/Error/Info message being reassembled from its cut pieces."""

    label: str
    text: str
    width: int


class _Diag:
    """Walks the table rows, keeping the current section, test and message."""

    def __init__(self) -> None:
        self.tests: dict[str, _Test] = {}
        self.sections: dict[str, list[str]] = {}
        self.metadata: dict[str, str] = {}
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self.section: str | None = None
        self.test: _Test | None = None
        self.message: _Message | None = None
        self.width = _DEFAULT_WIDTH
        self.summary: str | None = None
        self.level: str | None = None
        self.table_rows = 0

    def close_message(self) -> None:
        if self.message is None:
            return
        text = f"{self.message.label}: {self.message.text.strip()}"
        if self.test is not None:
            self.test.messages.append(text)
        else:
            self.errors.append(text)
        self.message = None

    def section_line(self, name: str) -> None:
        self.close_message()
        self.section = name
        self.test = None
        if name != "Metadata":
            self.sections.setdefault(name, [])

    def row(self, number: int, cells: list[str], closed: bool) -> None:
        name, raw = cells[0].strip(), cells[1]
        info = raw[1:] if raw.startswith(" ") else raw
        info = info.rstrip()
        if closed:
            self.width = max(len(raw) - 3, 1)
        self.table_rows += 1
        if name == "Diagnostic" and info.strip() == "Result":
            return
        if self.section == "Metadata":
            self._metadata(name, info)
            return
        message = _MESSAGE_ROW.match(name)
        if message:
            self.close_message()
            label = message.group(1).capitalize()
            suffix = f" ({message.group(2)})" if message.group(2) else ""
            self.message = _Message(label + suffix, info, self.width)
        elif not name:
            self._continuation(number, info)
        elif name.lower() in ("result", "overall result"):
            self.close_message()
            self.summary = _normal(info.split()[0]) if info.split() else None
        else:
            self.close_message()
            self._new_test(name, info, number)

    def _metadata(self, name: str, info: str) -> None:
        if name:
            self.metadata[name] = info.strip()
        elif self.metadata:
            last = next(reversed(self.metadata))
            self.metadata[last] += info.strip()

    def _new_test(self, name: str, info: str, number: int) -> None:
        self.test = self.tests.setdefault(name, _Test(name))
        if self.section is not None and name not in self.sections[self.section]:
            self.sections[self.section].append(name)
        if not self._result(info.strip()):
            self.warnings.append(f"line {number}: result of {name!r} not understood: "
                                 f"{info.strip()[:60]}")

    def _continuation(self, number: int, info: str) -> None:
        stripped = info.strip()
        if self.message is not None and not _GPU_RESULT.match(stripped):
            joiner = "" if len(self.message.text) >= self.message.width else " "
            self.message.text += joiner + info
            return
        self.close_message()
        if self.test is not None and self._result(stripped):
            return
        if stripped:
            self.warnings.append(f"line {number}: continuation row without a test: "
                                 f"{stripped[:60]}")

    def _result(self, text: str) -> bool:
        """Record `Pass`, `Fail - GPU: 0`, `Pass - GPUs: 1, 2` or `GPU0: Pass` on the test."""
        if self.test is None:
            return False
        gpu = _GPU_RESULT.match(text)
        if gpu:
            self.test.gpus[gpu.group(1)] = _normal(gpu.group(2))
            return True
        result = _RESULT.match(text)
        if not result:
            return False
        status = _normal(result.group(1))
        self.test.statuses.append(status)
        listed = re.match(r"GPUs?\s*:\s*([\d,\s]+?)\s*(\.\.\.)?$", (result.group(2) or "").strip())
        if listed:
            indices = re.findall(r"\d+", listed.group(1))
            if listed.group(2):
                # dcgmi cuts a value longer than its 46-character cell and ends it with `...`
                # (16-GPU systems): GPUs after the cut are not listed, and a number right
                # before the `...` may itself be cut (`1...` of `10`).
                if listed.group(1).rstrip()[-1:].isdigit():
                    indices = indices[:-1]
                self.warnings.append(f"{self.test.name}: GPU list cut by dcgmi: {text[:60]}")
            for index in indices:
                self.test.gpus[index] = status
        return True

    def text_line(self, line: str) -> None:
        """A line outside the table: command, summary, iteration notes, errors."""
        stripped = line.strip()
        command = _COMMAND.search(stripped)
        if command:
            self.level = command.group(1)
            return
        summary = _SUMMARY.match(stripped)
        if summary:
            self.summary = _normal(summary.group(1))
        elif stripped.startswith("Passed all"):
            self.summary = "pass"
        elif stripped.startswith("Aborting the iterative runs"):
            self.summary = "fail"
            self.errors.append(stripped)
        elif stripped.startswith("Error:"):
            self.errors.append(stripped)


def _walk(lines: list[str]) -> _Diag:
    diag = _Diag()
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        section = _SECTION.match(stripped)
        if section:
            diag.section_line(section.group(1))
        elif stripped.startswith("+") and set(stripped) <= set("+-= "):
            diag.close_message()
        elif stripped.startswith("|"):
            cells = stripped[1:].split("|")
            closed = stripped.endswith("|") and len(cells) >= 3
            if len(cells) >= 2:
                diag.row(number, cells, closed)
        else:
            diag.close_message()
            diag.section, diag.test = None, None
            if not stripped:
                continue
            before = len(diag.errors), diag.summary, diag.level
            diag.text_line(line)
            if (len(diag.errors), diag.summary, diag.level) == before and diag.table_rows \
                    and not stripped.startswith("Successfully ran diagnostic"):
                diag.warnings.append(f"line {number}: line outside the table skipped: "
                                     f"{stripped[:60]}")
    diag.close_message()
    return diag


def _failed_gpus(test: _Test, status: str) -> list[int]:
    """GPUs that failed: the listed ones, else (for a failed test) the GPUs its messages name."""
    listed = sorted(int(g) for g, s in test.gpus.items() if s == "fail")
    if listed or status != "fail":
        return listed
    named = {int(n) for m in test.messages if not m.startswith("Info")
             for n in re.findall(r"\bGPU\s*(\d+)\b", m)}
    return sorted(named)


def _overall(tests: dict[str, str], diag: _Diag) -> Literal["pass", "fail", "warn"]:
    if "fail" in tests.values() or diag.summary == "fail" \
            or any(e.startswith(("Error", "Aborting")) for e in diag.errors):
        return "fail"
    if "warn" in tests.values() or "pass" not in tests.values() or diag.errors:
        return "warn"
    return "pass"


def _find_key(data: Any, key: str) -> Any:
    """The first value stored under `key` anywhere in nested dicts and lists."""
    stack = [data]
    while stack:
        node = stack.pop(0)
        if isinstance(node, dict):
            if key in node:
                return node[key]
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return None


def _json_result(diag: _Diag, result: dict[str, Any]) -> None:
    """One `results[]` item of the JSON form: a status, maybe per GPU, with its messages."""
    assert diag.test is not None
    status = _RESULT.match(str(result.get("status", "")).strip())
    gpu = next((result[k] for k in ("gpu_id", "gpu_ids", "entity_id") if k in result), None)
    gpus = re.findall(r"\d+", str(gpu)) if gpu is not None else []
    if status:
        for index in gpus:
            diag.test.gpus[index] = _normal(status.group(1))
        if not gpus:
            diag.test.statuses.append(_normal(status.group(1)))
    warnings = result.get("warnings") or []
    for warning in warnings if isinstance(warnings, list) else [warnings]:
        text = warning.get("warning") if isinstance(warning, dict) else warning
        if text:
            diag.test.messages.append(f"Warning: {str(text).strip()}")
    info = result.get("info")
    for item in info if isinstance(info, list) else [info] if info else []:
        diag.test.messages.append(f"Info: {str(item).strip()}")


def _walk_json(text: str) -> _Diag | None:
    """`dcgmi diag -j`: categories of tests with per-GPU results; None if not that JSON."""
    start = text.find("{")
    if start < 0 or "test_categories" not in text:
        return None
    try:
        data = json.loads(text[start:text.rfind("}") + 1])
    except json.JSONDecodeError as exc:
        line = text.count("\n", 0, start) + exc.lineno
        raise ParseError(KIND, line, f"JSON output is not readable: {exc.msg}") from None
    diag = _Diag()
    categories = _find_key(data, "test_categories")
    for category in categories if isinstance(categories, list) else []:
        if not isinstance(category, dict):
            continue
        diag.section_line(str(category.get("category") or category.get("header") or "Tests"))
        for test in category.get("tests") or []:
            if not isinstance(test, dict) or not test.get("name"):
                continue
            diag.test = diag.tests.setdefault(str(test["name"]), _Test(str(test["name"])))
            diag.sections[str(diag.section)].append(diag.test.name)
            summary = test.get("test_summary")
            if isinstance(summary, dict) and _RESULT.match(str(summary.get("status", ""))):
                diag.test.statuses.append(_normal(str(summary["status"]).split()[0]))
            for result in test.get("results") or []:
                if isinstance(result, dict):
                    _json_result(diag, result)
    for key in ("DCGM Version", "Driver Version Detected"):
        value = _find_key(data, key)
        if isinstance(value, str):
            diag.metadata[key] = value
    version = data.get("version") if isinstance(data, dict) else None
    version = version or _find_key(data, "version")
    if isinstance(version, str):
        diag.metadata.setdefault("DCGM Version", version)
    overall = _find_key(data, "Overall Result")
    if isinstance(overall, str) and _RESULT.match(overall):
        diag.summary = _normal(overall.split()[0])
    error = _find_key(data, "runtime_error")
    if error:
        diag.errors.append(f"Error: {error}")
    return diag


def parse(text: str) -> DcgmiDiag:
    """Parse `dcgmi diag` output (table or `-j` JSON); `ParseError` when no result is there."""
    lines = clean_lines(text)
    diag = _walk_json("\n".join(lines)) or _walk(lines)
    if diag.level is None:
        diag.level = next((m.group(1) for m in map(_COMMAND.search, lines) if m), None)
    if not diag.tests and not diag.table_rows:
        reported = f": {diag.errors[0][:200]}" if diag.errors else ""
        raise ParseError(KIND, None, f"no diagnostic result rows (`| <test> | Pass |`) found"
                                     f"{reported}")
    if not diag.tests and not diag.errors:
        raise ParseError(KIND, None, "no diagnostic result rows (`| <test> | Pass |`) found")
    tests: dict[str, str] = {}
    failed: dict[str, list[int]] = {}
    for name, test in diag.tests.items():
        statuses = test.statuses or list(test.gpus.values()) or ["not_run"]
        tests[name] = max(statuses, key=lambda s: _SEVERITY[s])
        failed[name] = _failed_gpus(test, tests[name])
    device_ids = diag.metadata.get("GPU Device IDs Detected", "")
    return DcgmiDiag(
        overall=_overall(tests, diag), level=diag.level,
        dcgm_version=diag.metadata.get("DCGM Version"),
        driver_version=diag.metadata.get("Driver Version Detected"),
        gpu_device_ids=_device_ids(device_ids, diag.warnings),
        metadata=diag.metadata, sections=diag.sections, tests=tests,
        details={n: t.messages for n, t in diag.tests.items() if t.messages},
        failed_gpus={n: g for n, g in failed.items() if g},
        gpu_results={n: t.gpus for n, t in diag.tests.items() if t.gpus},
        errors=diag.errors, summary=diag.summary, warnings=diag.warnings)


def _device_ids(value: str, warnings: list[str]) -> list[str]:
    """`GPU Device IDs Detected`, without the id dcgmi cut when the list overflowed its cell."""
    ids = [d.strip() for d in value.split(",") if d.strip()]
    if ids and ids[-1].endswith("..."):
        ids.pop()
        warnings.append("GPU Device IDs Detected: list cut by dcgmi (`...`); ids after the "
                        f"first {len(ids)} are not shown")
    return ids


def tables(result: DcgmiDiag) -> list[Table]:
    """One row per test with its result (and failed GPUs, if any); messages and errors below."""
    columns = [left("test"), left("result")]
    rows: list[tuple[Cell, ...]] = [(name, status) for name, status in result.tests.items()]
    if result.failed_gpus:
        columns.append(left("failed_gpus", "failed GPUs"))
        rows = [(*row, ",".join(str(g) for g in result.failed_gpus.get(str(row[0]), [])) or None)
                for row in rows]
    notes = [f"{name}: {message}" for name, messages in result.details.items()
             for message in messages]
    notes += [f"! {e}" for e in result.errors]
    title = f"overall: {result.overall}  level: {result.level}  dcgm: {result.dcgm_version}"
    return [Table.build(columns, rows, title=[title], notes=notes)]
