"""Every parser against real captured output: detection, the expected parse, the expected refusal.

Fixtures live in tests/fixtures/<kind>/ (see its README). One generic test runs them all, and a
meta-test fails when a parser has no fixture, so no parser ships untested on real output.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabtui.parsers import registry
from fabtui.parsers.errors import ParseError
from tests.support.fixture_inputs import FIXTURES, NOT_INPUT


def _cases() -> list[tuple[str, Path]]:
    found = []
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        for path in sorted(folder.iterdir()):
            if path.is_file() and not path.name.endswith(NOT_INPUT):
                found.append((folder.name, path))
    return found


CASES = _cases()


def _sibling(path: Path, suffix: str) -> Path:
    return path.with_name(path.name.rsplit(".", 1)[0] + suffix)


@pytest.mark.parametrize("kind, path", CASES, ids=[f"{k}/{p.name}" for k, p in CASES])
def test_fixture(kind: str, path: Path) -> None:
    # newline="" keeps CRLF line ends: real captures have them and parsers must cope.
    with path.open(encoding="utf-8", errors="replace", newline="") as handle:
        text = handle.read()
    options_file = _sibling(path, ".options.json")
    options = json.loads(options_file.read_text()) if options_file.exists() else {}
    if options.get("detect", True):
        guesses = registry.detect(text)
        assert guesses and guesses[0][0] == kind, f"detected as {guesses[:3]}"
        assert guesses[0][1] >= registry.DETECT_THRESHOLD
    parser = registry.get(kind)
    error_file = _sibling(path, ".error")
    if error_file.exists():
        expected_message, *rest = error_file.read_text().splitlines()
        with pytest.raises(ParseError) as caught:
            parser.module.parse(text)
        assert expected_message in caught.value.message
        for line in rest:
            if line.startswith("line:"):
                assert caught.value.line == int(line.split(":", 1)[1])
        return
    expected = json.loads(_sibling(path, ".expected.json").read_text())
    assert parser.module.parse(text).model_dump(mode="json") == expected


def test_every_parser_has_a_real_fixture_with_an_expected_parse() -> None:
    with_expectation = {kind for kind, path in CASES
                        if _sibling(path, ".expected.json").exists()}
    missing = sorted(set(registry.parsers()) - with_expectation)
    assert missing == [], f"parsers without a fixture: {missing}"


def test_every_fixture_folder_is_a_known_kind_with_provenance() -> None:
    for folder in (p for p in FIXTURES.iterdir() if p.is_dir()):
        assert folder.name in registry.parsers(), f"no parser for fixtures/{folder.name}"
        sources = folder / "SOURCES.md"
        assert sources.is_file(), f"fixtures/{folder.name} has no SOURCES.md"
        text = sources.read_text()
        for kind, path in CASES:
            if kind == folder.name:
                assert path.name in text, f"{path.name} has no provenance row in {sources}"


def test_every_case_has_an_expectation() -> None:
    for _kind, path in CASES:
        assert _sibling(path, ".expected.json").exists() or _sibling(path, ".error").exists(), \
            f"{path} has neither .expected.json nor .error"
