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



# What an error prints is bounded too (L7) -----------------------------------------------------

def test_a_hundred_bad_lines_print_fifty_and_a_count(tmp_path: Path) -> None:
    topology = tmp_path / "many.yaml"
    topology.write_text("cluster: {name: x}\nnodes:\n" + "".join(
        f"  - {{hostname: n{i:03d}, gpus: [{{index: 0}}]}}\n" for i in range(120)))
    outcome = run_capped(["topo", "check", "many.yaml"], tmp_path)
    lines = outcome.stderr.splitlines()
    assert outcome.status == 2 and len(lines) == 51, outcome.stderr[-2000:]
    assert lines[0] == "many.yaml:3: missing required key 'pci' in nodes[0].gpus[0]"
    assert lines[-1] == "... and 70 more problems"


def test_a_huge_value_quoted_in_a_message_is_cut(tmp_path: Path) -> None:
    name = "x" * 100_000
    (tmp_path / "fabtui.toml").write_text(f'data_dir = "d"\nscenario = "{name}"\n')
    outcome = run_capped(["--config", "fabtui.toml", "config"], tmp_path)
    lines = outcome.stderr.splitlines()
    assert outcome.status == 2 and len(lines) == 1, outcome.stderr[-2000:]
    assert lines[0].startswith("fabtui.toml:2: scenario: unknown scenario 'xxx")
    assert len(lines[0]) < 2_100 and lines[0].endswith(" more characters)")
