"""Small hostile inputs that stand for huge ones are refused in bounded time and memory.

Each attack of tests/support/hostile_inputs.py (the reliability review's H4 and its neighbours)
is read by a real `fabtui` process whose address space is capped at `MEMORY_CAP_MB`: the code
the review tested ran out of that memory within seconds, aborted, hung or accepted the input.
Here each ends with its one clear line, `file:line: what is wrong`, and no traceback. The only
clock is the generous `HANG_S` that turns a hang into a failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.hostile_inputs import ATTACKS, MEMORY_CAP_MB, Attack, run_capped


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_a_hostile_input_ends_with_its_clear_line_under_a_memory_cap(
        attack: Attack, tmp_path: Path) -> None:
    outcome = run_capped(attack.write(tmp_path), tmp_path)
    assert not outcome.hung, f"still running after {outcome.seconds:.0f} s"
    assert outcome.ended(attack.status, attack.expect), \
        f"exit {outcome.status} under a {MEMORY_CAP_MB} MB cap:\n{outcome.stderr[-2000:]}"

