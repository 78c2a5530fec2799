import math
from pathlib import Path

import pytest

from sortie.core.records import Timings
from sortie.report.timings import run_time_shares, time_rows, time_share
from sortie.run.store import Store, StoredEpisode


def _episode(wall: float, agent: float, backend: float, render: float) -> StoredEpisode:
    times = Timings(agent=agent, backend=backend, render=render)
    return StoredEpisode(
        key="k",
        episode_id="e",
        suite="s",
        level="L1",
        repeat=0,
        seed=0,
        outcome="success",
        failure_reason=None,
        steps=3,
        record=Path("r.jsonl"),
        wall_seconds=wall,
        attempts=1,
        error=None,
        metrics={},
        timings=times,
    )


def test_the_shares_are_of_the_summed_wall_time_and_the_rest_is_the_harness():
    """Walls 4 s and 6 s with agent 1+2, backend 2+1, render 0+1: 30/30/10/30 % of 10 s."""
    share = time_share("r", [_episode(4.0, 1.0, 2.0, 0.0), _episode(6.0, 2.0, 1.0, 1.0)])
    assert (share.wall, share.harness) == (10.0, 3.0)
    assert [share.share(p) for p in ("agent", "backend", "render", "harness")] == pytest.approx(
        [30.0, 30.0, 10.0, 30.0]
    )
    header, lines = time_rows([share])
    assert header[:3] == ["run", "runs", "wall s"] and lines == [
        ["r", "2", "10.0", "30", "30", "10", "30"]
    ]


def test_a_run_without_wall_time_shows_dashes_not_a_division_by_zero():
    """An episode recorded with no wall time (a worker that kept dying) gives no shares."""
    share = time_share("r", [_episode(0.0, 0.0, 0.0, 0.0)])
    assert math.isnan(share.share("agent"))
    assert time_rows([share])[1][0][3:] == ["–"] * 4


def test_stored_runs_give_their_timings_back(tmp_path, smoke3):
    """A stored run's parts add up to no more than its wall time, and the agent part is > 0."""
    from sortie.run.batch import RunRequest
    from tests.conftest import run_stored

    run_stored(RunRequest((str(smoke3),), "explorer", store=tmp_path / "s.db", run_id="x"))
    with Store(tmp_path / "s.db") as store:
        (share,) = run_time_shares(store, ["x"])
    assert share.episodes == 3 and share.agent > 0 and share.backend > 0
    assert share.agent + share.backend + share.render <= share.wall
