"""YAML documents that can say which line any value came from.

Topology files, scenarios and runbook front matter are written by hand, so every complaint about
them must point at a line. Two parsers split the work:

- **yaml-rs** (Rust, YAML 1.2) builds the data. It reads a 16k-GPU topology (7 MB) in about 0.2 s,
  where PyYAML needs about 7 s.
- **PyYAML** composes the node tree, with positions, only when a line number is asked for, i.e. when
  something is being reported. A clean file never pays for it.

Both paths follow the YAML 1.2 core schema (`yes`/`on` are strings, `0000:18:00.0` is a string, not
a base-60 number), reject duplicate keys (PyYAML would silently keep the last) and honour `<<` merge
keys, so a value means the same whichever parser read it.

Neither parser is given a document it could choke on: aliases that would expand past
`MAX_ALIAS_NODES` values (a "billion laughs" bomb) or `MAX_ALIAS_TEXT` characters (one big string
aliased a few thousand times: each alias is a copy once built) and nesting deeper than `MAX_DEPTH`
are refused first, as `file:line` problems. The check walks libyaml's events (no values are
built), and only for text that could hold an alias, deep block nesting or many brackets, so an
ordinary topology (block style, no aliases: 7 MB for 16k GPUs) never pays for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from fabtui.errors import InputError, Problem

yaml_rs: ModuleType | None
try:  # pragma: no cover - exercised implicitly: yaml-rs is a dependency
    import yaml_rs
except ImportError:  # pragma: no cover - a platform without yaml-rs wheels
    yaml_rs = None

_Loader: type[yaml.SafeLoader]
try:
    _Loader = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader

Loc = tuple[str | int, ...]
"""A path into a document: mapping keys and sequence indexes, as pydantic reports them."""

_MERGE_KEY = "<<"
MAX_DEPTH = 100
"""Deepest nesting of collections a document may have (a topology needs about eight)."""
MAX_ALIAS_NODES = 100_000
"""Most values that aliases may add to a document when expanded (merge keys use a handful)."""
MAX_ALIAS_TEXT = 10_000_000
"""Most characters of scalar text that aliases may add to a document when expanded. A 16k-GPU
topology written out in full is 7 MB; merge keys add a few hundred characters each."""
# Block nesting deeper than MAX_DEPTH needs a line whose leading run of blanks and `-`, `?`, `:`
# indicators is at least this long: each level indents or adds an indicator (a sequence may share
# its parent key's column, but its entries then take a `- `). yaml-rs overflows its stack (the
# whole process dies) on some ten thousand levels, so it never sees such text unchecked.
_DEEP_BLOCK = re.compile(rf"\n[ \t?:-]{{{(MAX_DEPTH - 2) // 2}}}")
# An alias is `*name` after a line start, a blank, a flow indicator or the `:` of a JSON-like key
# (`{"k":*a}`); a `*` in prose that merely looks like one only costs the event walk.
_MAY_ALIAS = re.compile(r"(?m)(?:^|[\s\[{,:])\*[^\s\[\]{},]")
# Flow nesting: the brackets alone, innermost pairs removed round by round (C-speed bytes work, a
# few milliseconds on a 7 MB file); the rounds are the depth. Brackets in quoted text can make
# this guess low, which costs no safety: yaml-rs refuses flow nesting past 256 levels by itself.
_FLOW_GATE = MAX_DEPTH // 2
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))
# A second guard inside yaml-rs, should an alias ever slip past the walk (one value: <= 2 events).
_RS_LIMITS = yaml_rs.AliasLimits(max_total_replayed_events=2 * MAX_ALIAS_NODES + 2,
                                 max_replay_stack_depth=MAX_DEPTH) if yaml_rs else None
_LINE_RE = re.compile(r"line (\d+)")
_DOC_MARKER = re.compile(r"(?m)^(?:---|\.\.\.)(?:\s|$)")


@dataclass
class YamlDoc:
    """A parsed YAML document: its data, and (lazily) the node tree that locates it."""

    source: str
    """How to name the file in messages (the path as the user gave it)."""
    data: Any
    text: str = field(repr=False)
    _root: yaml.Node | None = field(default=None, repr=False)
    _composed: bool = field(default=False, repr=False)

    @property
    def root(self) -> yaml.Node | None:
        """The PyYAML node tree, composed on first use (slow for big files: only when reporting)."""
        if not self._composed:
            self._composed = True
            try:
                self._root = yaml.compose(self.text, Loader=_Loader)
            except yaml.YAMLError:  # pragma: no cover - the text already parsed once
                self._root = None
        return self._root

    def line_of(self, loc: Loc) -> int | None:
        """The 1-based line of the deepest node along `loc` that exists in the document.

        A key that is missing reports the line of the mapping that should hold it, which is where a
        user has to add it.
        """
        node = self.root
        if node is None:
            return None
        line: int = node.start_mark.line + 1
        for part in loc:
            child = _child(node, part)
            if child is None:
                break
            line, node = child
        return line

    def where(self, loc: Loc) -> str:
        """`file:line` for `loc`, the form every message about this document uses."""
        line = self.line_of(loc)
        return f"{self.source}:{line}" if line is not None else self.source

    def problem(self, loc: Loc, message: str) -> Problem:
        """A `Problem` located at `loc`."""
        return Problem(self.source, self.line_of(loc), message)


def _child(node: yaml.Node, part: str | int) -> tuple[int, yaml.Node] | None:
    """The child of `node` named by `part` and the line that best names it."""
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(part):
                return key_node.start_mark.line + 1, value_node
        merges = [v for k, v in node.value
                  if isinstance(k, yaml.ScalarNode) and k.value == _MERGE_KEY]
        for value_node in merges:  # values merged in with `<<`
            for source in _merge_sources(value_node):
                merged = _child(source, part)
                if merged is not None:
                    return merged
        return None
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) \
            and 0 <= part < len(node.value):
        item = node.value[part]
        return item.start_mark.line + 1, item
    return None


def load_yaml(path: Path, label: str | None = None) -> YamlDoc:
    """Read and parse `path`; raise `InputError` with `file:line` problems if it is not YAML.

    Note: reads the file; nothing else is touched.
    """
    source = label or str(path)
    return parse_yaml(read_text(path, source, "a YAML file"), source)


def read_text(path: Path, source: str, expected: str) -> str:
    """The UTF-8 text of `path`, or `InputError` saying in one line why not (`expected` names
    what was wanted where a folder was found). Note: reads the file; nothing else is touched."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError.single(source, None, "no such file") from None
    except IsADirectoryError:
        raise InputError.single(source, None, f"is a folder, expected {expected}") from None
    except UnicodeDecodeError as exc:
        raise InputError.single(source, None, f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise InputError.single(source, None, f"cannot read: {exc.strerror}") from None


def parse_yaml(text: str, source: str) -> YamlDoc:
    """Parse YAML `text`; `source` names it in messages."""
    if text.startswith("\ufeff"):
        text = text[1:]
    checked = yaml_rs is None or _may_overflow(text)
    if checked:  # PyYAML alone (slow anyway) always walks first: its builder expands aliases
        _check_expansion(text, source)
    if yaml_rs is not None:
        try:
            data = yaml_rs.loads(text, parse_datetime=False, alias_limits=_RS_LIMITS)
        except (ValueError, yaml_rs.YAMLDecodeError) as exc:
            if not checked:  # yaml-rs's own alias limit tripped: locate it without building
                _check_expansion(text, source)
            # PyYAML locates what yaml-rs only names (a duplicate key) and words the rest well.
            _parse_with_pyyaml(text, source)
            raise InputError([_rs_problem(str(exc), source)]) from None
        if isinstance(data, list) and _DOC_MARKER.search(text):
            _parse_with_pyyaml(text, source)  # raises if these are several documents
        if _MERGE_KEY in text:
            data = _apply_merges(data, 0)
        return YamlDoc(source, data, text)
    return _parse_with_pyyaml(text, source)


def _may_overflow(text: str) -> bool:
    """Whether `text` could hold an alias or nest past the limits (cheap, never misses a bomb)."""
    if "*" in text and _MAY_ALIAS.search(text):
        return True
    if _DEEP_BLOCK.search(text) or _DEEP_BLOCK.match("\n" + text[:MAX_DEPTH]):
        return True
    if text.count("[") + text.count("{") <= _FLOW_GATE:
        return False
    brackets = text.encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    for _ in range(_FLOW_GATE):
        inner = brackets.replace(b"[]", b"").replace(b"{}", b"")
        if len(inner) == len(brackets):  # unbalanced leftovers (brackets in prose): judge those
            return brackets.count(b"[") + brackets.count(b"{") > _FLOW_GATE
        if not inner:
            return False
        brackets = inner
    return True


def _check_expansion(text: str, source: str) -> None:
    """Refuse `text` if its aliases would expand too far or it nests too deep (`InputError`).

    Walks libyaml's events, sizing each anchored node as it closes (aliases inside it counted at
    their expanded size), so a bomb is measured, never built. Syntax errors are reported here too:
    text libyaml cannot parse must not reach yaml-rs unchecked.
    """
    sizes: dict[str, tuple[int, int, int]] = {}
    """Anchor -> (values in its node once expanded, collection levels it spans: 0 for a scalar,
    characters of scalar text in it once expanded)."""
    open_anchors: set[str] = set()
    stack: list[list[Any]] = []
    """One frame per open collection: [values so far, deepest level reached, anchor, text]."""
    expanded = 0
    expanded_text = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            line = event.start_mark.line + 1 if event.start_mark is not None else None
            if isinstance(event, yaml.CollectionStartEvent):
                if len(stack) >= MAX_DEPTH:
                    raise InputError.single(source, line, f"nesting deeper than {MAX_DEPTH} "
                                            "levels; no fabric description needs that many")
                stack.append([1, len(stack) + 1, event.anchor, 0])
                if event.anchor:
                    open_anchors.add(event.anchor)
            elif isinstance(event, yaml.CollectionEndEvent):
                size, deepest, anchor, chars = stack.pop()
                if anchor:
                    sizes[anchor] = (size, deepest - len(stack), chars)
                    open_anchors.discard(anchor)
                if stack:
                    stack[-1][0] += size
                    stack[-1][1] = max(stack[-1][1], deepest)
                    stack[-1][3] += chars
            elif isinstance(event, yaml.ScalarEvent):
                if event.anchor:
                    sizes[event.anchor] = (1, 0, len(event.value))
                if stack:
                    stack[-1][0] += 1
                    stack[-1][3] += len(event.value)
            elif isinstance(event, yaml.AliasEvent):
                name = event.anchor or ""
                if name in open_anchors:
                    raise InputError.single(source, line, f"alias *{name} refers to the node it "
                                            "is part of (an endless structure)")
                size, levels, chars = sizes.get(name, (1, 0, 0))
                expanded += size
                expanded_text += chars
                if expanded > MAX_ALIAS_NODES:
                    raise InputError.single(source, line, f"aliases expand to more than "
                                            f"{MAX_ALIAS_NODES:,} values (an alias bomb?); "
                                            "write the values out or use fewer aliases")
                if expanded_text > MAX_ALIAS_TEXT:
                    raise InputError.single(source, line, f"aliases expand to more than "
                                            f"{MAX_ALIAS_TEXT:,} characters of text (an alias "
                                            "bomb?); write the values out or use fewer aliases")
                if len(stack) + levels > MAX_DEPTH:
                    raise InputError.single(source, line, f"alias *{name} nests the document "
                                            f"deeper than {MAX_DEPTH} levels")
                if stack:
                    stack[-1][0] += size
                    stack[-1][1] = max(stack[-1][1], len(stack) + levels)
                    stack[-1][3] += chars
    except yaml.YAMLError as exc:
        raise InputError([_pyyaml_problem(exc, source)]) from None


def _pyyaml_problem(exc: yaml.YAMLError, source: str) -> Problem:
    """A PyYAML error as a located problem."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        what = ": ".join(part for part in (exc.context, exc.problem) if part) or "not valid YAML"
        return Problem(source, line, f"invalid YAML: {what}")
    return Problem(source, None, f"invalid YAML: {exc}")


def _rs_problem(message: str, source: str) -> Problem:
    first, _, rest = message.partition("\n")
    match = _LINE_RE.search(first)
    reason = rest.strip().splitlines()[-1] if rest.strip() else first
    return Problem(source, int(match.group(1)) if match else None, f"invalid YAML: {reason}")


def _apply_merges(value: Any, depth: int) -> Any:
    """Resolve `<<` merge keys in data read by yaml-rs (which keeps them as plain keys)."""
    if depth > MAX_DEPTH:
        return value
    if isinstance(value, list):
        return [_apply_merges(v, depth + 1) for v in value]
    if not isinstance(value, dict):
        return value
    result = {k: _apply_merges(v, depth + 1) for k, v in value.items() if k != _MERGE_KEY}
    if _MERGE_KEY in value:
        sources = value[_MERGE_KEY]
        for source in sources if isinstance(sources, list) else [sources]:
            if isinstance(source, dict):
                for k, v in _apply_merges(source, depth + 1).items():
                    result.setdefault(k, v)
    return result


def _parse_with_pyyaml(text: str, source: str) -> YamlDoc:
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
    except yaml.YAMLError as exc:
        raise InputError([_pyyaml_problem(exc, source)]) from None
    finally:
        loader.dispose()
    builder = _Builder(source)
    data = builder.build(root, 0) if root is not None else None
    if builder.problems:
        raise InputError(builder.problems)
    return YamlDoc(source, data, text, root, True)


# YAML 1.2 core schema, for plain (unquoted) scalars.
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_TRUE = re.compile(r"^(?:true|True|TRUE)$")
_FALSE = re.compile(r"^(?:false|False|FALSE)$")
_INT = re.compile(r"^[-+]?[0-9]+$")
_OCT = re.compile(r"^0o[0-7]+$")
_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
_INF = re.compile(r"^[-+]?\.(?:inf|Inf|INF)$")
_NAN = re.compile(r"^\.(?:nan|NaN|NAN)$")


def _core_scalar(text: str) -> Any:
    if _NULL.match(text):
        return None
    if _TRUE.match(text):
        return True
    if _FALSE.match(text):
        return False
    if _INT.match(text):
        return int(text)
    if _OCT.match(text):
        return int(text[2:], 8)
    if _HEX.match(text):
        return int(text[2:], 16)
    if _FLOAT.match(text):
        return float(text)
    if _INF.match(text):
        return float("-inf") if text.startswith("-") else float("inf")
    if _NAN.match(text):
        return float("nan")
    return text


class _Builder:
    """Turns a PyYAML node tree into plain data, collecting problems instead of stopping."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[Problem] = []

    def build(self, node: yaml.Node, depth: int) -> Any:
        if depth > MAX_DEPTH:
            self._report(node, "nesting too deep (an alias that refers to itself?)")
            return None
        if isinstance(node, yaml.ScalarNode):
            return _core_scalar(node.value) if not node.style else node.value
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, depth + 1) for item in node.value]
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, depth)
        self._report(node, "unsupported YAML node")  # pragma: no cover - no other node kinds
        return None

    def _mapping(self, node: yaml.MappingNode, depth: int) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        merged: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == _MERGE_KEY \
                    and not key_node.style:
                for source in _merge_sources(value_node):
                    value = self.build(source, depth + 1)
                    if isinstance(value, dict):
                        for k, v in value.items():
                            merged.setdefault(k, v)
                    else:
                        self._report(value_node, "`<<` must merge a mapping or a list of mappings")
                continue
            key = self.build(key_node, depth + 1)
            if isinstance(key, list | dict):
                self._report(key_node, "a key must be a plain value, not a list or mapping")
                continue
            if key in result:
                self._report(key_node, f"duplicate key {key!r} (the later value would win)")
                continue
            result[key] = self.build(value_node, depth + 1)
        for k, v in merged.items():
            result.setdefault(k, v)
        return result

    def _report(self, node: yaml.Node, message: str) -> None:
        self.problems.append(Problem(self.source, node.start_mark.line + 1, message))


def _merge_sources(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return [node]
