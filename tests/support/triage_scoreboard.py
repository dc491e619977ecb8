"""Scoreboard of `fabtui triage nccl` over every real hang log in tests/triage_fixtures/real.

Each folder there is one hung job's lines as a public issue thread posted them; `expected.toml`
holds the answer an expert reads in them (the culprit rank set, the host and NIC when the logs
name only that, an application desync, or an honest "cannot tell" that says what to collect).
A report is right when it gives that answer and blames no rank or host that only waited.

    python -m tests.support.triage_scoreboard        # prints each case and right/total
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fabtui.model.triage import Suspect, TriageReport
from fabtui.triage import triage_paths

REAL = Path(__file__).resolve().parents[1] / "triage_fixtures" / "real"
_BLAMING = ("lagging", "dead", "missing log", "no timeout", "local rank", "nic", "desync")
_CULPRIT = ("lagging", "dead", "missing log", "no timeout", "local rank")


@dataclass
class Score:
    """One case's outcome."""

    case: str
    right: bool
    why: str


def expected() -> dict[str, dict[str, Any]]:
    """Case folder -> its expected answer."""
    with open(REAL / "expected.toml", "rb") as handle:
        return tomllib.load(handle)


def _ranks(suspect: Suspect) -> set[int]:
    return ({suspect.rank} if suspect.rank is not None else set()) | set(suspect.ranks)


def _blamed(report: TriageReport) -> tuple[set[int], set[str]]:
    """Ranks and hosts the report blames (its culprits and each fault's first link)."""
    ranks: set[int] = set()
    hosts: set[str] = set()
    leads = {s.fault: s for s in reversed(report.suspects)}
    for suspect in report.suspects:
        if suspect.kind in _BLAMING or (suspect.kind == "link" and leads[suspect.fault] is suspect):
            ranks |= _ranks(suspect)
            hosts |= {suspect.node} if suspect.node else set()
    return ranks, hosts


def judge(report: TriageReport, want: dict[str, Any]) -> tuple[bool, str]:
    """Whether `report` gives the answer `want` describes, and why not."""
    ranks, hosts = _blamed(report)
    victims = ranks & set(want.get("victims", []))
    if victims:
        return False, f"blames rank(s) {sorted(victims)} that only waited"
    if hosts & set(want.get("victim_hosts", [])):
        return False, f"blames host(s) {sorted(hosts & set(want['victim_hosts']))} that only waited"
    answer = want["answer"]
    if answer == "ranks":
        culprits: set[int] = set()
        for suspect in report.suspects:
            if suspect.fault == 1 and suspect.kind in _CULPRIT:
                culprits |= _ranks(suspect)
        if report.verdict != "culprit found" or culprits != set(want["ranks"]):
            return False, f"{report.verdict}: culprits {sorted(culprits)}"
        return True, ""
    if answer == "host":
        first = report.suspects[0] if report.suspects else None
        if first is None or first.node != want["host"] or (
                "nic" in want and first.nic != want["nic"]):
            return False, f"{report.verdict}: first suspect " + (
                f"{first.kind} on {first.node} {first.nic}" if first else "none")
        return True, ""
    if answer == "desync":
        if report.verdict != "application desync":
            return False, f"{report.verdict}, not an application desync"
        outside = ranks - set(want.get("allowed", []))
        return (not outside, f"names rank(s) {sorted(outside)}" if outside else "")
    if answer == "cannot tell":
        if ranks or hosts:
            return False, f"{report.verdict}: blames {sorted(ranks)} {sorted(hosts)}"
        if not report.collect:
            return False, f"{report.verdict} but says nothing of what to collect"
        told = " ".join(report.collect)
        unnamed = [r for r in want.get("mention", []) if f"rank(s) {r}" not in told]
        if unnamed:
            return False, f"what to collect does not name rank(s) {unnamed}"
        return True, ""
    raise ValueError(f"unknown answer {answer!r}")


def scores() -> list[Score]:
    """Every case's score, in folder order."""
    out: list[Score] = []
    for case, want in sorted(expected().items()):
        try:
            report = triage_paths([REAL / case])
        except Exception as exc:  # the scoreboard counts a crash as wrong
            out.append(Score(case, False, f"{type(exc).__name__}: {exc}"))
            continue
        right, why = judge(report, want)
        out.append(Score(case, right, why))
    return out


def main() -> int:
    results = scores()
    for score in results:
        print(f"{'right' if score.right else 'WRONG'}  {score.case}"
              + (f"  ({score.why})" if score.why else ""))
    right = sum(score.right for score in results)
    print(f"{right}/{len(results)} right")
    return 0


if __name__ == "__main__":
    sys.exit(main())
