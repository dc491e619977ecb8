"""The triage scoreboard over every real hang log in tests/triage_fixtures/real: each case's
answer (tests/triage_fixtures/real/expected.toml) and the share right (issue 36: at least 90 %).
`python -m tests.support.triage_scoreboard` prints the same table."""

from __future__ import annotations

import pytest

from fabtui.triage import triage_paths
from tests.support.triage_scoreboard import REAL, expected, judge, scores

CASES = sorted(expected())


def test_every_real_case_folder_has_an_expected_answer() -> None:
    folders = sorted(p.name for p in REAL.iterdir() if p.is_dir())
    assert folders == CASES


@pytest.mark.parametrize("case", CASES)
def test_triage_gives_the_expected_answer(case: str) -> None:
    right, why = judge(triage_paths([REAL / case]), expected()[case])
    assert right, why


def test_the_judge_refuses_a_blamed_victim_and_a_silent_cannot_tell() -> None:
    # The scoreboard cannot pass a report that blames a rank that only waited, nor a
    # "cannot tell" that says nothing of what to collect.
    report = triage_paths([REAL / "pytorch-152623-desync-report"])
    assert judge(report, {"answer": "ranks", "ranks": [7]}) == (True, "")
    assert not judge(report, {"answer": "ranks", "ranks": [7], "victims": [7]})[0]
    report.verdict, report.suspects, report.collect = "cannot tell", [], []
    assert not judge(report, {"answer": "cannot tell"})[0]


def test_at_least_nine_in_ten_real_hang_logs_are_right() -> None:
    results = scores()
    assert sum(s.right for s in results) * 10 >= 9 * len(results)
