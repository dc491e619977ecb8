"""Issue 37's three journeys walked by keyboard in tmux, measured: keys (typed confirmation
characters, other typed text, other keys) and wall time, at 80x24 and 120x40, the real `fabtui`
on the demo fabric (see tests/support/journeys.py for what each walks and checks at each step).

Goal for journey (a), NCCL hang to filed case: at most 80 keys besides the typed confirmations;
no session lost to a "no" or a typo (variant `a+slips`); every before/after value readable at
80x24. Prints a table; exits 1 when a journey's screens did not show what they must, or (a)
goes over its key budget. Wall time is printed, never judged (it moves with the machine's load).

    python benchmarks/tui_journeys.py                  # a, a+slips, b, c at 80x24 and 120x40
    python benchmarks/tui_journeys.py --only a --sizes 80x24 --screens DIR
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.journeys import JourneyFailed, Tally, walk

KEY_BUDGET_A = 80
RUNS = {"a": ("a", {}), "a+slips": ("a", {"slips": True}), "b": ("b", {}), "c": ("c", {})}
TITLES = {"a": "(a) NCCL hang -> filed case", "a+slips": "(a) with a no and a typo",
          "b": "(b) guided optic replacement", "c": "(c) past incident, en + zh"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=sorted(RUNS), default=None)
    parser.add_argument("--sizes", default="80x24,120x40")
    parser.add_argument("--screens", type=Path, help="write every step's screen here")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("tmux is not installed")
        return 2
    sizes = [tuple(int(n) for n in s.split("x")) for s in args.sizes.split(",")]
    failed = False
    rows: list[tuple[str, str, Tally | None, str]] = []
    for name in args.only or list(RUNS):
        journey, options = RUNS[name]
        for width, height in sizes:
            size = f"{width}x{height}"
            try:
                tally = walk(journey, (width, height), **options)
            except JourneyFailed as exc:
                failed = True
                rows.append((name, size, None, str(exc).splitlines()[0]))
                print(f"{name} {size}: FAILED\n{exc}\n", file=sys.stderr)
                continue
            verdict = "ok"
            if journey == "a" and tally.keys_besides_confirmations > KEY_BUDGET_A:
                failed, verdict = True, f"over {KEY_BUDGET_A} keys"
            rows.append((name, size, tally, verdict))
            if args.screens:
                folder = args.screens / f"{name}-{size}"
                folder.mkdir(parents=True, exist_ok=True)
                for number, (step, at, text) in enumerate(tally.steps, 1):
                    (folder / f"{number:02d}.txt").write_text(
                        f"# {step} (+{at:.1f} s)\n{text}", encoding="utf-8")
    print(f"{'journey':<32} {'size':<7} {'confirm':>7} {'typed':>6} {'other':>6} "
          f"{'keys*':>6} {'wall s':>7}  result")
    for name, size, walked, verdict in rows:
        if walked is None:
            print(f"{TITLES[name]:<32} {size:<7} {'':>7} {'':>6} {'':>6} {'':>6} {'':>7}  "
                  f"FAILED: {verdict}")
            continue
        tally = walked
        print(f"{TITLES[name]:<32} {size:<7} {tally.confirm_chars:>7} {tally.text_chars:>6} "
              f"{tally.other_keys:>6} {tally.keys_besides_confirmations:>6} "
              f"{tally.seconds:>7.1f}  {verdict}")
        for note in tally.notes:
            print(f"{'':<32} {note}")
    print("confirm: characters of typed confirmations; typed: other text typed (searches, "
          "inputs); other: every other key; keys*: typed + other (issue 37's budget for (a): "
          f"<= {KEY_BUDGET_A})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
