"""Scoreboard: how many real captures under tests/fixtures the parsers get fully right.

"Fully right" for one capture means all of: detection names its folder's kind first (unless its
`.options.json` says `{"detect": false}`), and the parse equals its `.expected.json` exactly, or
the parser refuses it with the message of its `.error`. Real captures are every fixture whose
name does not start with `synthetic-` (those were written here, not captured in the field).

Prints one line per miss, then `fully right: N/TOTAL (P %)` for the real captures and the same
for all fixtures. Run it against another checkout to compare (issue 36 "before and after"):

    python benchmarks/parser_scoreboard.py                       # this checkout's parsers
    PYTHONPATH=/path/to/old/checkout python benchmarks/parser_scoreboard.py \\
        --fixtures tests/fixtures                                # old parsers, these fixtures

Exit status 0 always: a score, not a gate (tests/test_parsers_fixtures.py is the gate).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from fabtui.parsers import registry
from fabtui.parsers.errors import ParseError

NOT_INPUT = (".expected.json", ".error", ".md", ".options.json")
DEFAULT = Path(__file__).resolve().parent.parent / "tests" / "fixtures"


def _sibling(path: Path, suffix: str) -> Path:
    return path.with_name(path.name.rsplit(".", 1)[0] + suffix)


def judge(kind: str, path: Path) -> str | None:
    """None when the capture is read fully right, else what went wrong (one line)."""
    with path.open(encoding="utf-8", errors="replace", newline="") as handle:
        text = handle.read()
    options_file = _sibling(path, ".options.json")
    options = json.loads(options_file.read_text()) if options_file.exists() else {}
    if options.get("detect", True):
        guesses = registry.detect(text)
        if not guesses or guesses[0][0] != kind or guesses[0][1] < registry.DETECT_THRESHOLD:
            return f"detected as {guesses[:2]}"
    try:
        parser = registry.get(kind)
    except KeyError:
        return f"no parser for kind {kind}"
    error_file = _sibling(path, ".error")
    try:
        result = parser.module.parse(text)
    except ParseError as exc:
        if error_file.exists() and error_file.read_text().splitlines()[0] in exc.message:
            return None
        return f"refused: {exc.message[:100]}"
    except Exception as exc:  # a crash is a miss to count, not to raise
        return f"crashed: {type(exc).__name__}: {exc}"[:120]
    if error_file.exists():
        return "parsed, but should have been refused"
    expected_file = _sibling(path, ".expected.json")
    if not expected_file.exists():
        return "no expectation"
    got = result.model_dump(mode="json")
    expected = json.loads(expected_file.read_text())
    # A field an older model lacks is no miss where the capture has nothing for it (an
    # empty list or null): comparing old parsers with new expectations stays fair.
    wrong = sorted(k for k in set(got) | set(expected)
                   if got.get(k) != expected.get(k)
                   and not (k not in got and expected.get(k) in ([], None, {})))
    return f"differs in {', '.join(wrong)[:100]}" if wrong else None


def main() -> None:
    """Judge every capture and print the misses and the score."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path, default=DEFAULT)
    args = parser.parse_args()
    real = right_real = total = right = 0
    for folder in sorted(p for p in args.fixtures.iterdir() if p.is_dir()):
        for path in sorted(folder.iterdir()):
            if not path.is_file() or path.name.endswith(NOT_INPUT):
                continue
            miss = judge(folder.name, path)
            is_real = not path.name.startswith("synthetic-")
            total += 1
            real += is_real
            right += miss is None
            right_real += is_real and miss is None
            if miss is not None:
                print(f"MISS {'real' if is_real else 'synth'} {folder.name}/{path.name}: {miss}")
    print(f"real captures fully right: {right_real}/{real} "
          f"({100 * right_real / max(real, 1):.1f} %)")
    print(f"all fixtures fully right:  {right}/{total} ({100 * right / max(total, 1):.1f} %)")


if __name__ == "__main__":
    main()
