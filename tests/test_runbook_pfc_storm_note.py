"""`fabtui runbook run pfc-storm` on the demo playing pfc-storm: the storm-source note gives the
figure the scan read (the leaf port held paused 95 % of the time), never "0 pause frames/s
received" for a port the scan found paused (the reviewer's finding: the frame rate was never
read on that leaf, and the note printed the missing reading as 0)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import Result


def test_the_storm_source_note_gives_the_pause_the_scan_read(run: Callable[..., Result],
                                                             tmp_path: Path) -> None:
    config = tmp_path / "fabtui.toml"
    config.write_text(f'data_dir = "{tmp_path / "data"}"\n')
    result = run("--config", str(config), "--scenario", "pfc-storm", "runbook", "run",
                 "pfc-storm")
    note = next(line for line in result.stdout.splitlines() if "Storm source candidate" in line)
    assert "0 pause frames/s" not in note
    assert "node006:mlx5_4 on leaf-g00-r4:Ethernet40: the port is held paused 95 % of the " \
           "time on priority 3 by the pause node006:mlx5_4 sends" in note
