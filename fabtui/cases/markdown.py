"""Case files: markdown with YAML front matter and `##` sections, read into a `Case` and written
back out (docs/case-format.md).

Reading accepts a minimal file (front matter `id`, `title`, `tags`; sections `Symptom`,
`Root cause`, `Resolution`) and the Chinese heading aliases; every problem found is reported at
once as `file:line: what is wrong`. Writing is stable and diff-friendly: front matter keys and
sections in one fixed order, empty ones left out, tables and lists in one layout, so exporting a
case twice gives the same bytes and importing an export gives the same case.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from fabtui.errors import InputError, Problem
from fabtui.model.case import Case, CaseStatus, Environment
from fabtui.schema_errors import describe
from fabtui.yamldoc import YamlDoc, parse_yaml, read_text


@dataclass(frozen=True)
class Section:
    """A section of the format: its field, English heading and the headings read the same."""

    key: str
    heading: str
    aliases: tuple[str, ...]


SECTIONS = (
    Section("summary", "Summary", ("概述", "摘要")),
    Section("symptom", "Symptom", ("现象", "症状")),
    Section("environment", "Environment", ("环境",)),
    Section("evidence", "Evidence", ("指标", "证据")),
    Section("timeline", "Timeline", ("时间线",)),
    Section("localization", "Localization", ("定位过程", "排查过程")),
    Section("trigger", "Trigger", ("触发",)),
    Section("detection", "Detection", ("发现",)),
    Section("impact", "Impact", ("影响",)),
    Section("root_cause", "Root cause", ("根因", "根本原因")),
    Section("resolution", "Resolution", ("解决方案", "处理", "修复")),
    Section("tuning", "Tuning", ("调优",)),
    Section("reusable_config", "Reusable config", ("可复用配置",)),
    Section("risks", "Risks", ("风险", "注意事项")),
    Section("action_items", "Action items", ("改进项", "后续行动")),
    Section("lessons", "Lessons", ("经验", "复盘", "经验教训")),
)
"""Every named section, in the order an export writes them."""
REQUIRED_SECTIONS = ("symptom", "root_cause", "resolution")
REQUIRED_KEYS = ("id", "title", "tags")
FRONT_MATTER_KEYS = ("id", "title", "status", "severity", "opened", "closed", "lang",
                     "symptom_class", "tags", "error_codes", "components", "environment",
                     "sessions", "runbooks", "authors", "references")
"""The front matter keys, in the order an export writes them."""

_BY_HEADING = {name.casefold(): s for s in SECTIONS for name in (s.heading, *s.aliases)}
_BY_KEY = {s.key: s for s in SECTIONS}
_HEADING = re.compile(r"^##(?!#)\s+(.*?)\s*#*\s*$")
_ESCAPED = re.compile(r"\\+##")
"""A prose line an export escaped: as many backslashes as it had, plus one."""
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_TIME = (r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?"
         r"|\d{1,2}:\d{2}(?::\d{2})?Z?")
_ITEM = re.compile(r"^[-*]\s+(.*)$")
_TIMED = re.compile(rf"^({_TIME})(?:\s+|$)(.*)$")
_TASK = re.compile(r"^\[([ xX])\]\s+(.*?)(?:\s+\(([^()]*)\))?\s*$")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
_EVIDENCE_HEAD = (("component", "组件"), ("metric", "指标"), ("value", "值", "数值"),
                  ("source", "来源"))
_TUNING_HEAD = (("change", "变更", "调整"), ("metric", "指标"), ("before", "之前", "调整前"),
                ("after", "之后", "调整后"))


def read_case(path: Path, label: str | None = None) -> tuple[Case, str]:
    """Read the case file `path`: the case and the file's text. Raises `InputError`.

    Note: reads the file; nothing else is touched.
    """
    source = label or str(path)
    text = read_text(path, source, "a case file")
    return parse_case(text, source), text


def parse_case(text: str, source: str) -> Case:
    """The case written in `text` (named `source` in messages, and kept as its `source`)."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    problems: list[Problem] = []
    doc, body_start = _front_matter(lines, source, problems)
    if doc is None:
        raise InputError(problems)
    data: dict[str, Any] = dict(doc.data)
    for key in list(data):
        if key not in FRONT_MATTER_KEYS:
            close = difflib.get_close_matches(str(key), FRONT_MATTER_KEYS, n=1)
            section = _BY_HEADING.get(str(key).replace("_", " ").casefold())
            hint = f" (write it as a `## {section.heading}` section)" if section else \
                f" (did you mean {close[0]!r}?)" if close else \
                f"; known keys: {', '.join(FRONT_MATTER_KEYS)}"
            problems.append(doc.problem((key,), f"unknown front matter key {key!r}{hint}"))
            del data[key]
    for key in REQUIRED_KEYS:
        if key not in data:
            problems.append(Problem(source, 1, f"front matter is missing {key!r} (a case needs "
                                    f"{', '.join(REQUIRED_KEYS)})"))
    section_lines = _sections(lines, body_start, source, data, problems)
    for key in REQUIRED_SECTIONS:
        if key not in section_lines:
            heading = _BY_KEY[key].heading
            unknown = {k.removeprefix("other:"): line for k, line in section_lines.items()
                       if k.startswith("other:")}
            close = difflib.get_close_matches(heading, list(unknown), n=1, cutoff=0.6)
            hint = f" (is `## {close[0]}` a misspelling?)" if close else ""
            problems.append(Problem(source, unknown[close[0]] if close else body_start + 1,
                                    f"missing section `## {heading}`{hint}; a case needs "
                                    "## Symptom, ## Root cause and ## Resolution"))
    if "lang" not in data:
        data["lang"] = detect_lang(" ".join(str(data.get(k, "")) for k in
                                            ("title", "symptom", "root_cause")))
    if "status" not in data:
        root_cause = data.get("root_cause", "")
        data["status"] = (CaseStatus.RESOLVED if isinstance(root_cause, str) and
                          root_cause.strip() else CaseStatus.DRAFT).value
    data["source"] = source
    try:
        case = Case.model_validate(data)
    except ValidationError as exc:
        # Missing keys were reported above, in the file's terms.
        problems += [p for p in _validation_problems(exc, doc, section_lines, source)
                     if p not in problems]
        raise InputError(sorted(problems, key=lambda p: p.line or 0)) from None
    if problems:
        raise InputError(problems)
    return case


def detect_lang(text: str) -> str:
    """`zh` when Chinese characters make up a fair share of the letters of `text`, else `en`."""
    cjk = len(_CJK.findall(text))
    latin_words = len(re.findall(r"[A-Za-z]+", text))
    return "zh" if cjk and cjk >= latin_words else "en"


def _front_matter(lines: list[str], source: str,
                  problems: list[Problem]) -> tuple[YamlDoc | None, int]:
    """The front matter document and the index of the first body line."""
    if not lines or lines[0].strip() != "---":
        problems.append(Problem(source, 1, "missing front matter: start the file with `---`, "
                                "then id, title and tags, then `---`"))
        return None, 0
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if end is None:
        problems.append(Problem(source, 1, "front matter is not closed: end it with a `---` "
                                "line"))
        return None, 0
    # Padded with blank lines so that YAML line numbers are file line numbers.
    try:
        doc = parse_yaml("\n" + "\n".join(lines[1:end]) + "\n", source)
    except InputError as exc:
        problems.extend(exc.problems)
        return None, end + 1
    if not isinstance(doc.data, dict):
        problems.append(Problem(source, 2, "front matter must be a mapping of keys (id: ..., "
                                "title: ..., tags: [...])"))
        return None, end + 1
    return doc, end + 1


def _sections(lines: list[str], start: int, source: str, data: dict[str, Any],
              problems: list[Problem]) -> dict[str, int]:
    """Read the `##` sections into `data`; returns each section key's heading line."""
    found: dict[str, int] = {}
    chunks: list[tuple[str, int, list[str]]] = []
    preamble: list[str] = []
    fence: str | None = None
    for index in range(start, len(lines)):
        line = lines[index]
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
        elif opened:
            fence = opened.group(1)
        elif (heading := _HEADING.match(line)) is not None:
            chunks.append((heading.group(1), index + 1, []))
            continue
        if chunks:
            chunks[-1][2].append(line)
        elif not line.startswith("# ") and line.strip():
            preamble.append(line)
    others: dict[str, str] = {}
    for title, line_no, body in chunks:
        section = _lookup(title)
        key = section.key if section else f"other:{title}"
        if key in found:
            problems.append(Problem(source, line_no, f"section `## {title}` appears twice "
                                    f"(first at line {found[key]}); merge them"))
            continue
        found[key] = line_no
        content = _unescape(_clean(body))
        lead = next((i for i, line in enumerate(body) if line.strip()), 0)
        if section is None:
            others[title] = content
        else:
            _fill(section.key, content, line_no + 1 + lead, data, source, problems)
    if preamble:
        if "summary" in found:
            problems.append(Problem(source, start + 1, "text before the first `##` section: "
                                    "move it under a heading"))
        else:
            data["summary"] = _clean(preamble)
    if others:
        data["sections"] = others
    return found


def _lookup(heading: str) -> Section | None:
    """The section a heading names: `Root cause`, `根因`, `Symptom / 现象`, `现象 (Symptom)`."""
    name = heading.strip().rstrip(":：").casefold()
    if name in _BY_HEADING:
        return _BY_HEADING[name]
    for part in re.split(r"\s*[/｜|()（）]\s*", name):
        if part and part in _BY_HEADING:
            return _BY_HEADING[part]
    return None


def _clean(body: list[str]) -> str:
    """A section's text: trailing blanks off every line, blank lines off both ends."""
    return "\n".join(line.rstrip() for line in body).strip("\n")


def _unescape(text: str) -> str:
    """`\\## x` is how an export writes a prose line that would otherwise start a section."""
    return _outside_fences(text, lambda line: line[1:] if _ESCAPED.match(line) else line)[0]


def _fill(key: str, content: str, first_line: int, data: dict[str, Any], source: str,
          problems: list[Problem]) -> None:
    """Put one section's content (its first line is `first_line` of the file) into the case
    data, structured where the format says so."""
    def report(offset: int, message: str) -> None:
        problems.append(Problem(source, first_line + offset, message))

    if key == "environment":
        data["environment_notes"] = content
    elif key == "evidence":
        rows, notes = _table(content, _EVIDENCE_HEAD, report)
        data["evidence"] = [dict(zip(("component", "metric", "value", "source"), row,
                                     strict=True)) for row in rows]
        data["evidence_notes"] = notes
    elif key == "tuning":
        rows, notes = _table(content, _TUNING_HEAD, report)
        data["tuning"] = [dict(zip(("change", "metric", "before", "after"), row,
                                   strict=True)) for row in rows]
        data["tuning_notes"] = notes
    elif key == "timeline":
        data["timeline"], data["timeline_notes"] = _timeline(content)
    elif key == "action_items":
        data["action_items"], data["action_notes"] = _actions(content)
    else:
        data[key] = content


def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", inner)]


def _table(content: str, head: tuple[tuple[str, ...], ...],
           report: Callable[[int, str], None]) -> tuple[list[list[str]], str]:
    """The rows of the first table whose header is `head`, and the rest of the text."""
    lines = content.split("\n") if content else []
    rows: list[list[str]] = []
    rest: list[str] = []
    index = 0
    taken = False
    while index < len(lines):
        line = lines[index]
        if not taken and line.lstrip().startswith("|"):
            block_start = index
            while index < len(lines) and lines[index].lstrip().startswith("|"):
                index += 1
            block = lines[block_start:index]
            header = [c.casefold() for c in _cells(block[0])]
            if len(header) == len(head) and all(h in names for h, names in
                                                zip(header, head, strict=True)):
                taken = True
                for offset, row_line in enumerate(block[1:], start=1):
                    cells = _cells(row_line)
                    if all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
                        continue
                    if len(cells) != len(head):
                        report(block_start + offset, f"table row has {len(cells)} cells, "
                               f"expected {len(head)} ({' | '.join(n[0] for n in head)})")
                        continue
                    rows.append(cells)
            else:
                rest.extend(block)
            continue
        rest.append(line)
        index += 1
    return rows, "\n".join(rest).strip("\n")


def _items(content: str, parse: Callable[[str], dict[str, Any] | None]
           ) -> tuple[list[dict[str, Any]], str]:
    """List items `parse` accepts (continuation lines joined with newlines), and the rest."""
    items: list[dict[str, Any]] = []
    rest: list[str] = []
    last: dict[str, Any] | None = None
    for line in content.split("\n") if content else []:
        match = _ITEM.match(line)
        if match is not None and (item := parse(match.group(1))) is not None:
            items.append(item)
            last = item
            continue
        if last is not None and line.startswith("  ") and line.strip():
            last["text"] += "\n" + line.strip()
            continue
        last = None
        rest.append(line)
    return items, "\n".join(rest).strip("\n")


def _timeline(content: str) -> tuple[list[dict[str, Any]], str]:
    def parse(item: str) -> dict[str, Any] | None:
        if _TASK.match(item):
            return None
        timed = _TIMED.match(item)
        if timed is not None:
            return {"at": timed.group(1), "text": timed.group(2)}
        return {"at": "", "text": item}

    return _items(content, parse)


def _actions(content: str) -> tuple[list[dict[str, Any]], str]:
    def parse(item: str) -> dict[str, Any] | None:
        task = _TASK.match(item)
        if task is None:
            return None
        owner = task.group(3)
        if owner is not None:
            owner = re.sub(r"^(?:owner|负责人)\s*[:：]\s*", "", owner.strip()) or None
        return {"text": task.group(2), "owner": owner, "done": task.group(1) != " "}

    return _items(content, parse)


def _validation_problems(exc: ValidationError, doc: YamlDoc, section_lines: dict[str, int],
                         source: str) -> list[Problem]:
    """Pydantic's complaints, each at the front matter key or section it is about."""
    problems = []
    owner = {"evidence_notes": "evidence", "tuning_notes": "tuning",
             "timeline_notes": "timeline", "action_notes": "action_items",
             "environment_notes": "environment"}
    for error in exc.errors(include_url=False):
        if error["type"] == "missing":
            continue
        loc = tuple(p for p in error["loc"] if isinstance(p, str | int))
        message = str(error["msg"]).removeprefix("Value error, ")
        value = error.get("input")
        shown = f" (got {value!r:.60})" if isinstance(value, str | int | float) and \
            error["type"] != "value_error" else ""
        where = describe(loc)
        text = f"{where}: {message}{shown}" if where else message
        if error["type"] == "extra_forbidden" and len(loc) == 2 and loc[0] == "environment":
            known = list(Environment.model_fields)
            close = difflib.get_close_matches(str(loc[1]), known, n=1)
            text = f"unknown key {loc[1]!r} in environment" + (
                f" (did you mean {close[0]!r}?)" if close else f"; known: {', '.join(known)}")
        if not loc:
            problems.append(Problem(source, section_lines.get("root_cause", 1), text))
        elif loc[0] in FRONT_MATTER_KEYS:
            problems.append(doc.problem(loc, text))
        else:
            key = owner.get(str(loc[0]), str(loc[0]))
            problems.append(Problem(source, section_lines.get(key, 1), text))
    return problems


# writing ----------------------------------------------------------------------------------------
_PLAIN = re.compile(r"[^\s\-?:,\[\]{}#&*!|>'\"%@`][^,\[\]{}#]*")


def _scalar(value: object) -> str:
    """A YAML scalar that reads back as the same text under the YAML 1.2 core schema."""
    return _quoted(str(value))


@functools.lru_cache(maxsize=8192)
def _quoted(text: str) -> str:
    """`text` plain when YAML reads it back unchanged, else as a JSON (= YAML) string; tags
    and components repeat across cases, hence the cache."""
    if _PLAIN.fullmatch(text) and ": " not in text and not text.endswith((":", " ")) \
            and parse_yaml(f"k: {text}\n", "-").data == {"k": text}:
        return text
    return json.dumps(text, ensure_ascii=False)


def _front_matter_text(case: Case) -> list[str]:
    out = ["---"]
    values = case.model_dump(mode="json", include=set(FRONT_MATTER_KEYS))
    for key in FRONT_MATTER_KEYS:
        value = values[key]
        if key == "environment":
            pairs = [(k, v) for k, v in value.items() if v is not None]
            if pairs:
                out.append("environment:")
                out += [f"  {k}: {_scalar(v)}" for k, v in pairs]
            continue
        if isinstance(value, list):
            if not value and key != "tags":
                continue
            flow = f"{key}: [{', '.join(_scalar(v) for v in value)}]"
            if len(flow) <= 100:
                out.append(flow)
            else:
                out.append(f"{key}:")
                out += [f"  - {_scalar(v)}" for v in value]
            continue
        if value is None:
            continue
        out.append(f"{key}: {_scalar(value)}")
    out.append("---")
    return out


def _outside_fences(text: str, change: Callable[[str], str]) -> tuple[str, str | None]:
    """`text` with `change` applied to every line outside fenced code; and the fence left
    open at the end, if one was."""
    out = []
    fence: str | None = None
    for line in text.split("\n"):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
        elif opened:
            fence = opened.group(1)
        else:
            line = change(line)
        out.append(line)
    return "\n".join(out), fence


def _escape(text: str) -> str:
    """Prose lines that would start a section outside a fence get a backslash; a fence left
    open is closed, so it cannot swallow the sections after it."""
    escaped, open_fence = _outside_fences(
        text, lambda line: "\\" + line if _HEADING.match(line) or _ESCAPED.match(line)
        else line)
    return f"{escaped}\n{open_fence}" if open_fence else escaped


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _join(*parts: str) -> str:
    return "\n\n".join(p for p in parts if p)


def _item_text(prefix: str, text: str) -> str:
    first, *more = text.split("\n")
    return "\n".join([f"{prefix}{first}", *(f"  {m}" for m in more)])


def _section_text(case: Case, key: str) -> str:
    if key == "environment":
        return _escape(case.environment_notes)
    if key == "evidence":
        table = "\n".join([_row(["component", "metric", "value", "source"]),
                           "|---|---|---|---|",
                           *(_row([r.component, r.metric, r.value, r.source])
                             for r in case.evidence)]) if case.evidence else ""
        return _join(table, _escape(case.evidence_notes))
    if key == "tuning":
        table = "\n".join([_row(["change", "metric", "before", "after"]), "|---|---|---|---|",
                           *(_row([t.change, t.metric, t.before, t.after])
                             for t in case.tuning)]) if case.tuning else ""
        return _join(table, _escape(case.tuning_notes))
    if key == "timeline":
        items = "\n".join(_item_text(f"- {e.at} " if e.at else "- ", e.text)
                          for e in case.timeline)
        return _join(items, _escape(case.timeline_notes))
    if key == "action_items":
        items = "\n".join(_item_text(f"- [{'x' if a.done else ' '}] ",
                                     a.text + (f" ({a.owner})" if a.owner else ""))
                          for a in case.action_items)
        return _join(items, _escape(case.action_notes))
    value = getattr(case, key)
    assert isinstance(value, str)
    return _escape(value)


def write_case(case: Case) -> str:
    """The case as a markdown file: stable, diff-friendly, and read back as the same case."""
    out = _front_matter_text(case)
    out += ["", f"# {case.title}"]
    zh = case.lang == "zh"
    for section in SECTIONS:
        content = _section_text(case, section.key)
        if not content and section.key not in REQUIRED_SECTIONS:
            continue
        heading = section.aliases[0] if zh else section.heading
        out += ["", f"## {heading}"]
        if content:
            out += ["", content]
    for heading, content in case.sections.items():
        out += ["", f"## {heading}"]
        if content:
            out += ["", _escape(content)]
    return "\n".join(out) + "\n"


def case_file_name(case: Case) -> str:
    """The file an export writes `case` to."""
    return f"{case.id}.md"

