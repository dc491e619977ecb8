"""The parser catalog (`fabtui.parsers.signatures`) stands in for importing every parser: it
must list exactly the parser modules, and a signature may rule a kind out only where that
parser's own detector scores zero, so detection without the imports answers the same."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from fabtui.parsers import registry
from fabtui.parsers.signatures import SIGNATURES
from tests.support.fixture_inputs import FIXTURES, NOT_INPUT


def _inputs() -> list[tuple[str, str]]:
    """Every fixture capture, as captured and dressed the way real captures arrive (CRLF,
    quoted in a mail, prefixed by srun, columns aligned with tabs, coloured)."""
    found = []
    for path in sorted(FIXTURES.glob("*/*")):
        if not path.is_file() or path.name.endswith(NOT_INPUT):
            continue
        with path.open(encoding="utf-8", errors="replace", newline="") as handle:
            text = handle.read()
        name = f"{path.parent.name}/{path.name}"
        found.append((name, text))
        lines = text.replace("\r\n", "\n").split("\n")
        found.append((f"{name} quoted+crlf", "\r\n".join(f"> {line}" for line in lines)))
        found.append((f"{name} srun+tabs", "\n".join(f"0: {re.sub(r'  +', chr(9), line)}"
                                                     for line in lines)))
        found.append((f"{name} ansi", re.sub(r"(\w+)", "\x1b[1m\\1\x1b[0m", text, count=40)))
    return found


INPUTS = _inputs()


def test_the_catalog_lists_every_parser_module_in_discovery_order() -> None:
    listed = {sig.kind: (sig.module, sig.description) for sig in SIGNATURES}
    found = registry.discover()
    assert list(listed.items()) == list(found.items())


@pytest.mark.parametrize("kind", [sig.kind for sig in SIGNATURES])
def test_a_signature_rules_out_only_what_its_detector_scores_zero(kind: str) -> None:
    parser = registry.get(kind)
    assert parser.signature is not None
    ruled_out = 0
    for name, text in INPUTS:
        if not parser.signature.may_be(text, {}):
            ruled_out += 1
            assert parser.module.detect(text) == 0.0, f"{name}: {kind} ruled out but scores"
        elif name.startswith(f"{kind}/"):
            continue
    # A signature that never rules anything out saves no import: it must earn its place.
    assert ruled_out > len(INPUTS) // 2


def test_detection_without_the_imports_answers_as_every_detector_would() -> None:
    for name, text in INPUTS[::4]:
        everyone = [(kind, float(parser.module.detect(text)))
                    for kind, parser in registry.parsers().items()]
        expected = sorted([s for s in everyone if s[1] > 0], key=lambda s: -s[1])
        assert registry.detect(text) == expected, name


def _parser_modules_after(code: str) -> set[str]:
    """The parser and parse-model modules loaded once `code` ran, in a fresh process."""
    code += ("\nimport sys\n"
             "print(' '.join(m for m in sys.modules if m.startswith(('fabtui.parsers.', "
             "'fabtui.model.parsed.'))), file=sys.stderr)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    return set(result.stderr.strip().splitlines()[-1].split())


def _cli(*args: str) -> str:
    return ("import sys\n"
            "from fabtui.cli import main\n"
            f"sys.argv = ['fabtui', *{list(args)!r}]\n"
            "try:\n"
            "    main()\n"
            "except SystemExit:\n"
            "    pass\n")


def test_parse_as_nccl_log_never_builds_a_model() -> None:
    """The big logs' path (`--as nccl-log`, streamed) writes plain data: neither pydantic nor
    the model is imported (a seventh of a 100 MB log's time went to them). The whole-text
    API (`nccl_log.parse`) still returns the validated model."""
    path = FIXTURES / "nccl-log" / "cscs-net-plugin-could-not-find-ofi.txt"
    code = _cli("parse", "--as", "nccl-log", str(path)) + (
        "print(sorted(m for m in sys.modules if m.startswith(('pydantic', "
        "'fabtui.model.parsed'))), file=sys.stderr)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stderr.strip().splitlines()[-1] == "[]"
    assert '"kind": "nccl-log"' in result.stdout
    from fabtui.model.parsed.nccl_log import NcclLog
    from fabtui.parsers import nccl_log

    assert isinstance(nccl_log.parse(path.read_text()), NcclLog)
    assert registry.get("nccl-log").model is NcclLog


@pytest.mark.parametrize("kind", ["nccl-tests", "nccl-log", "ethtool-stats", "show-gids"])
def test_parse_file_imports_only_the_parser_it_needs(kind: str) -> None:
    """`fabtui parse FILE` (detected) and `--as KIND` load the parser of that kind and what it
    imports itself, and no other parser or parse model."""
    path = next(p for p in sorted((FIXTURES / kind).iterdir())
                if p.name.endswith(".txt") and not p.name.endswith(NOT_INPUT)
                and p.with_name(p.name.removesuffix(".txt") + ".expected.json").exists())
    # The command's own machinery (the registry, the streaming JSON writer) plus that parser.
    own = _parser_modules_after("import fabtui.parsers.registry\n"
                                "import fabtui.parsers.streaming\n"
                                f"import fabtui.parsers.{registry.get(kind).module_name}")
    assert f"fabtui.parsers.{registry.get(kind).module_name}" in own
    # Its own model, which a parser may import only when it builds a result (nccl-log).
    own |= {"fabtui.model.parsed", f"fabtui.model.parsed.{registry.get(kind).module_name}"}
    assert _parser_modules_after(_cli("parse", str(path))) - own == set()
    assert _parser_modules_after(_cli("parse", "--as", kind, str(path))) - own == set()


def test_two_rows_claiming_one_kind_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second row for a kind would silently replace the first parser: refused, loudly."""
    from fabtui.parsers import registry
    from fabtui.parsers.signatures import SIGNATURES

    doubled = (*SIGNATURES, SIGNATURES[0])
    monkeypatch.setattr(registry, "SIGNATURES", doubled)
    registry.parsers.cache_clear()
    try:
        with pytest.raises(RuntimeError, match=f"two parsers claim kind "
                                               f"'{SIGNATURES[0].kind}'"):
            registry.parsers()
    finally:
        monkeypatch.undo()
        registry.parsers.cache_clear()
    with pytest.raises(KeyError, match="unknown kind 'no-such-kind'"):
        registry.get("no-such-kind")
