"""The demo's slow job (fabtui/sim/slowjob.py) and the faults issue 39 added to the simulator:
`slow-node` on one GPU or on the host, `input-stall` on the job. What the generator plays must
agree with what the probes read on the same demo, and be the same for the same seed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fabtui.errors import InputError
from fabtui.paths import demo_topology, shipped_templates
from fabtui.sim.slowjob import play_slow_job
from fabtui.sim.state import build_sim, fresh_state
from tests.support.sim import node_out
from tests.support.slowjob_scoreboard import sim_of


def test_one_gpu_throttles_and_the_play_says_the_same() -> None:
    sim = sim_of("slow-gpu-throttle")
    t = 30 * 60.0
    assert sim.gpu("node003", 5, t).sm_clock_mhz == 1095
    assert sim.gpu("node003", 4, t).sm_clock_mhz == 1980
    assert sim.gpu("node003", 5, 10 * 60.0).sm_clock_mhz == 1980  # before the fault
    play = play_slow_job(sim)
    clocks = play.fabric["node003:gpu5"]["gpu_sm_clock_mhz"]
    minute = (play.t - sim.epoch) / 60
    assert np.all(clocks[(minute >= 15) & (minute < 50)] == 1095)
    assert np.all(np.abs(clocks[minute < 15] - 1980) < 30)
    assert np.all(play.fabric["node003:gpu4"]["gpu_throttle"] == 0)


def test_a_slow_host_keeps_its_gpu_clocks_yet_slows_the_job() -> None:
    sim = sim_of("slow-host")
    t = 30 * 60.0
    assert {sim.gpu("node006", g, t).sm_clock_mhz for g in range(8)} == {1980}
    out = node_out(sim, "node006", ["dcgmi", "diag", "-r", "2"], t)
    assert "Fail" not in out
    play = play_slow_job(sim)
    minute = (play.t - sim.epoch) / 60
    step = np.nanmedian(play.steps, axis=0)
    assert np.median(step[minute >= 25]) > 1.05 * np.median(step[minute < 15])


def test_input_stall_idles_the_gpus_not_the_collectives() -> None:
    sim = sim_of("slow-input-stall")
    play = play_slow_job(sim)
    minute = (play.t - sim.epoch) / 60
    inside, before = (minute >= 27) & (minute < 48), minute < 20
    busy = play.fabric["node001:gpu0"]["gpu_util"]
    assert np.median(busy[inside]) < np.median(busy[before]) - 0.1
    for comm in play.comms:
        bw = np.nanmedian(comm.busbw, axis=0)
        assert abs(np.median(bw[inside]) / np.median(bw[before]) - 1) < 0.02, comm.info.label


def test_input_stall_names_the_job_or_says_what_is_wrong(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ntimeline:\n  - at: 0\n    fault: input-stall\n"
                   "    component: node001\n")
    with pytest.raises(InputError) as caught:
        build_sim(fresh_state(demo_topology(), bad, [shipped_templates()]))
    assert f"{bad}:5: timeline[0] (input-stall): input-stall stalls the whole job's input: " \
           f"its component is `job`, not 'node001'" in str(caught.value)


def test_the_play_is_the_same_for_a_seed_and_differs_between_seeds() -> None:
    one, again = play_slow_job(sim_of("healthy", 3)), play_slow_job(sim_of("healthy", 3))
    other = play_slow_job(sim_of("healthy", 4))
    assert np.array_equal(one.steps, again.steps)
    assert not np.allclose(one.steps, other.steps)
    ranks = len(one.ranks)
    assert one.steps.shape == (ranks, 240) and ranks == 64
    assert {c.info.label for c in one.comms} == {*(f"dp-r{g}" for g in range(8)), "ep"}
