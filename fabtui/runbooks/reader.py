"""Markdown -> Runbook: front matter, steps (`##` headings), and the executable fenced blocks.

The file stays plain CommonMark (read with markdown-it-py, front matter with mdit-py-plugins), so
it renders on a code-hosting site as the procedure it is. A fenced block is executable when its
info string names a block kind; attributes follow in braces, Runme style, either
`key=value key2="a value"` or JSON:

    ```sh {id=pfc-now on="{{ node }}" timeout=30}
    ```probe {"id": "dom-before"}

Other fenced blocks (```` ```text ````, ```` ```yaml ````) are prose. Everything that is wrong is an
`InputError` of `file:line` problems, all at once.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin
from pydantic import ValidationError

from fabtui.errors import InputError, Problem
from fabtui.model.runbook import Block, BlockKind, FrontMatter, Runbook, Step
from fabtui.schema_errors import problems_from
from fabtui.textmemo import TextMemo
from fabtui.yamldoc import parse_yaml

_KINDS = {kind.value for kind in BlockKind}


@dataclass
class _Draft:
    """A step while its heading's content is being read."""

    id: str
    title: str
    line: int
    prose: list[str] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
_EXPLICIT_ID = re.compile(r"\s*\{#([a-z0-9][a-z0-9-]*)\}\s*$")
_SLUG_DROP = re.compile(r"[^\w\s-]", re.UNICODE)
_ATTR = re.compile(r"""([A-Za-z_][\w-]*)\s*=\s*("(?:[^"\\]|\\.)*"|'[^']*'|[^\s}]+)"""
                   r"""|([A-Za-z_][\w-]*)""")


def slug(text: str) -> str:
    """A step id from heading text, as code-hosting sites make anchors (`Check the optic` ->
    `check-the-optic`)."""
    cleaned = _SLUG_DROP.sub("", text.strip().lower())
    return re.sub(r"[\s_]+", "-", cleaned).strip("-") or "step"


def parse_info(info: str) -> tuple[str, dict[str, str], str | None]:
    """(kind, attributes, problem) from a fence info string such as `sh {id=x timeout=30}`."""
    info = info.strip()
    kind, _, rest = info.partition(" ")
    kind = kind.strip()
    if "{" in kind:  # ```sh{id=x}
        kind, _, tail = kind.partition("{")
        rest = "{" + tail + " " + rest
    rest = rest.strip()
    if not rest:
        return kind, {}, None
    if not (rest.startswith("{") and rest.endswith("}")):
        return kind, {}, f"attributes must be in braces after the block kind: {rest!r}"
    inner = rest[1:-1].strip()
    if inner.startswith('"'):
        try:
            loaded = json.loads(rest)
        except json.JSONDecodeError as exc:
            return kind, {}, f"attributes are not valid JSON: {exc.msg}"
        return kind, {str(k): _text(v) for k, v in loaded.items()}, None
    attrs: dict[str, str] = {}
    position = 0
    for match in _ATTR.finditer(inner):
        if inner[position:match.start()].strip():
            return kind, attrs, f"cannot read attributes near {inner[position:match.start()]!r}"
        position = match.end()
        if match.group(3):
            attrs[match.group(3)] = "true"
            continue
        value = match.group(2)
        if value[:1] in "\"'":
            # Double quotes take \" and \\ escapes (as JSON does); single quotes are literal.
            value = re.sub(r'\\(["\\])', r"\1", value[1:-1]) if value[0] == '"' \
                else value[1:-1]
        attrs[match.group(1)] = value
    if inner[position:].strip():
        return kind, attrs, f"cannot read attributes near {inner[position:]!r}"
    return kind, attrs, None


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def read_runbook(path: Path, label: str | None = None, *, lenient: bool = False) -> Runbook:
    """Read and structure a runbook file. Raises `InputError` with every problem found
    (`lenient`: only for unreadable front matter; other problems ride on `Runbook.problems`)."""
    source = label or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError.single(source, None, f"cannot read runbook: {exc}") from None
    return parse_runbook(text, source, lenient=lenient)


@functools.cache
def _markdown() -> MarkdownIt:
    """The block parser, built once. Inline parsing is off: the reader reads headings from the
    inline token's raw `content`, never its children, and inline parsing was a third of the
    time to lint a library."""
    return MarkdownIt("commonmark").use(front_matter_plugin).disable(["inline", "text_join"])


_PARSED: TextMemo[Runbook] = TextMemo()
"""Runbooks parsed before, by (text, source, lenient): the library is read again for every
workspace, and unchanged files are not parsed again (a runbook is frozen; see `TextMemo`)."""


def parse_runbook(text: str, source: str, *, lenient: bool = False) -> Runbook:
    """Structure runbook `text` (named `source` in messages). Raises `InputError`."""
    return _PARSED.get((text, source, lenient),
                       lambda: _parse_runbook(text, source, lenient=lenient))


def _parse_runbook(text: str, source: str, *, lenient: bool) -> Runbook:
    tokens = _markdown().parse(text)
    problems: list[Problem] = []
    meta, lines = _front_matter(tokens, source, problems)
    lines_of_text = text.splitlines()
    title = ""
    intro: list[str] = []
    steps: list[_Draft] = []
    seen_steps: dict[str, int] = {}
    seen_blocks: dict[str, int] = {}
    index = 0
    while index < len(tokens):
        token = tokens[index]
        line = (token.map[0] + 1) if token.map else None
        if token.type == "heading_open" and token.tag in ("h1", "h2"):
            heading = tokens[index + 1].content.strip()
            if token.tag == "h1":
                if not title:
                    title = heading
                index += 3
                continue
            explicit = _EXPLICIT_ID.search(heading)
            step_id = explicit.group(1) if explicit else slug(heading)
            heading = _EXPLICIT_ID.sub("", heading).strip()
            if step_id in seen_steps:
                problems.append(Problem(source, line, f"step id {step_id!r} is used twice "
                                        f"(first at line {seen_steps[step_id]}); give one an "
                                        "explicit id: `## Heading {#other-id}`"))
            seen_steps.setdefault(step_id, line or 0)
            steps.append(_Draft(step_id, heading, line or 0))
            index += 3
            continue
        if token.type == "fence":
            kind, attrs, problem = parse_info(token.info)
            if kind in _KINDS:
                if problem:
                    problems.append(Problem(source, line, problem))
                if not steps:
                    problems.append(Problem(source, line, f"`{kind}` block before the first "
                                            "step: put it under a `## Step` heading"))
                else:
                    step = steps[-1]
                    block_id = attrs.get("id") or f"{step.id}-{len(step.blocks) + 1}"
                    if not re.fullmatch(r"[a-z][a-z0-9_-]*", block_id):
                        problems.append(Problem(source, line, f"block id {block_id!r}: use "
                                                "lower-case letters, digits, - and _"))
                    if block_id in seen_blocks:
                        problems.append(Problem(source, line, f"block id {block_id!r} is used "
                                                f"twice (first at line {seen_blocks[block_id]})"))
                    seen_blocks.setdefault(block_id, line or 0)
                    step.blocks.append(Block(kind=BlockKind(kind), id=block_id, attrs=attrs,
                                             body=token.content, line=line or 0, step=step.id))
                index += 1
                continue
        if token.map and ((token.level == 0 and token.type.endswith("_open")) or
                          token.type in ("fence", "code_block", "html_block", "hr")):
            start, end = token.map
            chunk = "\n".join(lines_of_text[start:end])
            if steps:
                steps[-1].prose.append(chunk)
            elif title:
                intro.append(chunk)
            index = _skip_block(tokens, index)
            continue
        index += 1
    if not steps:
        problems.append(Problem(source, None, "no steps: each step is a `## Heading` with prose "
                                "and executable blocks under it"))
    if not title and meta is not None:
        title = meta.title
    if meta is None or (problems and not lenient):
        raise InputError(problems or [Problem(source, 1, "missing front matter")])
    return Runbook(meta=meta, title=title or meta.title, intro="\n\n".join(intro),
                   steps=[Step(id=s.id, title=s.title, prose="\n\n".join(s.prose),
                               blocks=s.blocks, line=s.line) for s in steps],
                   path=source, digest=hashlib.sha256(text.encode()).hexdigest()[:16],
                   lines=lines, problems=[(p.line, p.message) for p in problems])


def _skip_block(tokens: list, index: int) -> int:  # type: ignore[type-arg]
    """Index after the block that starts at `index` (its matching close at the same level)."""
    token = tokens[index]
    if not token.type.endswith("_open"):
        return index + 1
    level = token.level
    close = token.type.replace("_open", "_close")
    index += 1
    while index < len(tokens) and not (tokens[index].type == close and
                                       tokens[index].level == level):
        index += 1
    return index + 1


def _front_matter(tokens: list, source: str,  # type: ignore[type-arg]
                  problems: list[Problem]) -> tuple[FrontMatter | None, dict[str, int]]:
    token = next((t for t in tokens if t.type == "front_matter"), None)
    if token is None:
        problems.append(Problem(source, 1, "missing front matter: start the file with `---`, "
                                "then id, title, summary, symptoms, inputs ..., then `---`"))
        return None, {}
    # Pad with blank lines so that YAML line numbers are file line numbers.
    doc_text = "\n" * (token.map[0] + 1) + token.content
    try:
        doc = parse_yaml(doc_text, source)
    except InputError as exc:
        problems.extend(exc.problems)
        return None, {}
    if not isinstance(doc.data, dict):
        problems.append(Problem(source, token.map[0] + 1, "front matter must be a mapping"))
        return None, {}
    try:
        meta = FrontMatter.model_validate(doc.data)
    except ValidationError as exc:
        problems.extend(problems_from(exc, doc, FrontMatter))
        return None, {}
    lines: dict[str, int] = {}
    for key in doc.data:
        line = doc.line_of((key,))
        if line is not None:
            lines[str(key)] = line
    for i, spec in enumerate(meta.inputs):
        line = doc.line_of(("inputs", i))
        if line is not None:
            lines[f"inputs.{spec.name}"] = line
    for i, test in enumerate(meta.tests):
        line = doc.line_of(("tests", i))
        if line is not None:
            lines[f"tests.{test.name}"] = line
    return meta, lines

