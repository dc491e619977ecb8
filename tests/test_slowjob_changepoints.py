"""Change points and episodes of the slow-job engine on series whose answer is known by
construction (numpy, seeded): where a level shifts, what a lone spike and a slow drift do, when
spread is jitter, and how a late rank shows in Inspector busbw."""

from __future__ import annotations

import numpy as np

from fabtui.model.slowjob import Communicator
from fabtui.triage.slowjob.changepoints import noise_sigma, segments
from fabtui.triage.slowjob.collectives import late_ranks
from fabtui.triage.slowjob.episodes import find_episodes
from fabtui.triage.slowjob.frame import CommFrame, Frame
from fabtui.triage.slowjob.moves import move

RNG = np.random.default_rng(39)


def _frame(job: np.ndarray, ranks: int = 4) -> Frame:
    t = 1.7e9 + 15.0 * np.arange(job.size, dtype=np.float64)
    steps = job[None, :] * (1 + RNG.normal(0, 0.001, (ranks, job.size)))
    return Frame(job="j", t=t, ranks=np.arange(ranks), steps=steps)


def test_a_level_shift_is_found_where_it_is() -> None:
    x = 4.0 + RNG.normal(0, 0.03, 240)
    x[150:] += 0.5
    assert segments(x) == [(0, 150), (150, 240)]


def test_the_noise_level_ignores_the_shift_and_spikes() -> None:
    x = 4.0 + RNG.normal(0, 0.03, 240)
    x[120:] += 1.0
    x[[10, 60, 200]] += 2.0
    assert 0.02 < noise_sigma(x) < 0.045


def test_lone_spikes_and_a_slow_drift_are_no_episode() -> None:
    x = 4.0 * (1 + RNG.normal(0, 0.006, 240) + 0.004 * np.sin(np.linspace(0, 6.3, 240)))
    x[[17, 90, 91, 181]] *= 1.3  # checkpoints
    found = find_episodes(_frame(x))
    assert found.episodes == [] and found.baseline_s is not None
    assert abs(found.baseline_s - 4.0) < 0.05


def test_a_slow_stretch_is_an_episode_with_its_magnitude() -> None:
    x = 4.0 * (1 + RNG.normal(0, 0.006, 240))
    x[100:160] *= 1.12
    found = find_episodes(_frame(x))
    (episode,) = found.episodes
    assert episode.kind == "slow" and abs(episode.magnitude - 0.12) < 0.02
    assert 95 <= int(np.flatnonzero(found.masks[0])[0]) <= 101
    assert found.baseline[50] and not found.baseline[130]


def test_a_stretch_five_percent_up_is_slow_and_two_percent_is_not() -> None:
    for shift, slow in ((1.07, True), (1.02, False)):
        x = 4.0 * (1 + RNG.normal(0, 0.004, 240))
        x[120:200] *= shift
        assert bool(find_episodes(_frame(x)).episodes) is slow, shift


def test_spread_without_a_level_shift_is_jitter() -> None:
    x = 4.0 * (1 + RNG.normal(0, 0.005, 240))
    x[80:140] = 4.0 * (1 + RNG.normal(0, 0.12, 60))
    kinds = {e.kind for e in find_episodes(_frame(x)).episodes}
    assert "jitter" in kinds


def test_a_ramp_before_the_episode_does_not_hide_a_move() -> None:
    inside = np.zeros(240, dtype=bool)
    inside[160:] = True
    light = np.concatenate([np.full(60, -2.0), np.linspace(-2.0, -8.0, 100), np.full(80, -8.5)])
    found = move("rx_power_dbm", light + RNG.normal(0, 0.03, 240), inside, ~inside)
    assert found is not None and found.moving


def test_a_late_rank_shows_as_busbw_above_its_peers() -> None:
    n = 120
    inside = np.zeros(n, dtype=bool)
    inside[60:] = True
    late = np.zeros((8, n))
    late[5, 60:] = 1.0  # rank 5 arrives a second late from sample 60 on
    transfer = 0.5
    wait = late.max(axis=0)[None, :] - late
    busbw = 46.0 * transfer / (transfer + wait) * (1 + RNG.normal(0, 0.01, (8, n)))
    info = Communicator(id="0x1", nranks=8, ranks=list(range(8)))
    frame = Frame(job="j", t=np.arange(n, dtype=np.float64) * 15.0, ranks=np.arange(8),
                  steps=np.full((8, n), 4.0), comms=[CommFrame(info, np.arange(8), busbw)])
    found = late_ranks(frame, inside, ~inside)
    assert [(x.rank, x.comm) for x in found] == [(5, "0x1")]
    assert found[0].ahead > 2.5


def test_two_checkpoints_in_a_row_are_no_episode() -> None:
    x = 4.0 * (1 + RNG.normal(0, 0.006, 240))
    x[199], x[200] = 4.56, 5.05
    assert find_episodes(_frame(x)).episodes == []


def test_recurring_bursts_are_jitter_compared_at_their_spikes() -> None:
    x = 4.0 * (1 + RNG.normal(0, 0.006, 240))
    burst = np.zeros(240, dtype=bool)
    for start in range(80, 160, 6):
        burst[start:start + 2] = True
    x[burst] *= 1.27
    from fabtui.triage.slowjob.episodes import hot_moments

    found = find_episodes(_frame(x))
    (episode,) = found.episodes
    assert episode.kind == "jitter" and episode.magnitude > 0.08
    hot = hot_moments(found, found.masks[0])
    assert not (hot & ~burst).any()  # only spikes: the quiet samples between are not compared
    assert hot.sum() >= 0.8 * burst.sum()  # the edges of the burst train may fall outside


def test_a_window_shorter_than_the_spike_window_is_read_not_crashed() -> None:
    # 21 samples (5 minutes at 15 s): fewer than SPIKE_WINDOW; slow-node minutes after its start
    # crashed with "operands could not be broadcast together" here
    x = 4.0 + RNG.normal(0, 0.01, 21)
    x[10:] += 1.0
    found = find_episodes(_frame(x))
    assert [e.kind for e in found.episodes] == ["slow"]
    assert found.episodes[0].samples == 11


def test_a_window_too_short_to_judge_is_not_called_healthy() -> None:
    # three samples (a job a minute old): no change-point search is possible, so no verdict
    from fabtui.paths import demo_topology
    from fabtui.topology.graph import FabricGraph
    from fabtui.topology.loader import load_topology
    from fabtui.triage.slowjob import analyze

    graph = FabricGraph(load_topology(demo_topology()).topology)
    report = analyze(_frame(np.full(3, 4.0)), graph)
    assert not report.healthy and report.summary.startswith("cannot tell yet: 3 step-time")
    judged = analyze(_frame(4.0 + RNG.normal(0, 0.01, 40)), graph)
    assert judged.healthy and judged.summary.startswith("healthy")
