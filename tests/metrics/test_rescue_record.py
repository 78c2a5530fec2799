import math

import pytest

from sortie.core.pose import Pose
from sortie.core.records import (
    PluginRef,
    StageRecord,
    StepRecord,
    TrajectoryFooter,
    TrajectoryHeader,
)
from sortie.core.records_io import Suite, SuiteHeader, read_trajectory
from sortie.core.trajectory import Trajectory
from sortie.metrics.rescue import movement_effectiveness, score_rescue
from sortie.metrics.stage_scores import code_scores
from sortie.missions.rescue.facts import RescueFacts, rescue_facts
from sortie.testing.episodes import room_rescue


def test_the_code_scores_are_reproduced_from_the_record_alone(tmp_path):
    """The footer's target points and the final pose give back ts_code."""
    from sortie.run.suite import RunSettings, run_suite

    suite = Suite(SuiteHeader(suite="t"), [room_rescue(budget_s=2.0)])
    result = run_suite(suite, "random", {}, RunSettings(tmp_path))[0]
    record = read_trajectory(result.path)
    facts = rescue_facts(record)
    assert facts.casualty_point is not None and facts.stretcher_point is not None
    final = record.steps[-1].pose
    to_casualty = math.hypot(final.x - facts.casualty_point[0], final.y - facts.casualty_point[1])
    to_stretcher = math.hypot(
        final.x - facts.stretcher_point[0], final.y - facts.stretcher_point[1]
    )
    scores = code_scores(to_casualty, facts.picked_up, to_stretcher, facts.dropped_in_zone)
    assert sum(scores) == pytest.approx(result.metrics["ts_code"], abs=1e-9)
    assert to_casualty == pytest.approx(facts.final_to_casualty, abs=1e-9)


def record(distances, initial=5.0, outcome="failure", reason=None, episode=None):
    """Return a rescue record whose S1 steps, all at (0, 0), end at ``distances``."""
    steps = [
        StepRecord(
            index=i,
            pose=Pose(0.0, 0.0, 0.0, 0.0),
            action={"type": "move"},
            stage="S1",
            target_distance=d,
            clock_sim=0.2 * i,
            clock_latency=0.2 * i,
        )
        for i, d in enumerate(distances, start=1)
    ]
    stage = StageRecord(
        name="S1",
        status="active",
        target="casualty",
        d_init=initial,
        d_best=min([initial, *distances]),
        d_final=distances[-1],
    )
    header = TrajectoryHeader(
        episode=episode or room_rescue(),
        agent=PluginRef(name="hand"),
        backend=PluginRef(name="none"),
        seed=0,
        code_version="t",
    )
    footer = TrajectoryFooter(
        outcome=outcome,
        failure_reason=reason,
        steps=len(steps),
        stages=[stage],
        facts=RescueFacts().as_record(),
    )
    return Trajectory(header, steps, footer)


def test_movement_effectiveness_counts_any_strict_decrease():
    """5 → 5 − 1e-9 (closer, if barely) → same → 4: two of three steps brought it closer."""
    assert movement_effectiveness(record([5.0 - 1e-9, 5.0 - 1e-9, 4.0])) == pytest.approx(2 / 3)


def test_an_errored_rescue_episode_is_marked_and_not_scored():
    """An agent_error: 'error' is 1 and TS, HS and the rest are NaN, not partial scores."""
    metrics = score_rescue(record([4.0], reason="agent_error"))
    assert metrics["error"] == 1.0
    assert all(math.isnan(v) for name, v in metrics.items() if name != "error")
    assert score_rescue(record([4.0]))["error"] == 0.0


def test_the_placement_reading_measures_to_where_the_episode_places_the_casualty():
    """Ending at (0, 0), 5 m from the casualty placed at (4, 3): S1 25, S2 25 * 2.5 / 7.5."""
    metrics = score_rescue(record([4.0]))
    expected = (25.0, 25.0 * 2.5 / 7.5, 0.0, 0.0)
    placement = [metrics[f"s{k}_code_placement"] for k in range(1, 5)]
    assert placement == pytest.approx(expected)
    assert metrics["ts_code_placement"] == pytest.approx(sum(expected))


def test_the_placement_reading_is_nan_when_the_episode_places_no_casualty():
    """A casualty that is part of the world has no placement pose: its scores are NaN."""
    episode = room_rescue().model_copy(update={"placements": []})
    metrics = score_rescue(record([4.0], episode=episode))
    assert math.isnan(metrics["ts_code_placement"]) and not math.isnan(metrics["ts_code"])


def test_r4r_sdtw_weights_ndtw_by_the_path_end_not_by_success():
    """A failure ending 1.41 m from the expert's end: sdtw 0, sdtw_r4r = exp(-1.41 / 9)."""
    episode = room_rescue()
    mission = {**episode.mission, "reference_path": [[-4, -4, 0], [0, 0, 0], [1, 1, 0]]}
    metrics = score_rescue(record([4.0], episode=episode.model_copy(update={"mission": mission})))
    # DTW: start and (0, 0) match the first two points at 0 m, (1, 1) pairs with (0, 0).
    assert metrics["sdtw"] == 0.0
    assert metrics["sdtw_r4r"] == pytest.approx(math.exp(-math.sqrt(2) / (3 * 3.0)))


def carried(points):
    """Return a success that picks the casualty up at step 1 and hands off at step 2."""
    steps = [
        StepRecord(
            index=i,
            pose=Pose(x, y, 0.0, 0.0),
            action={"type": "move"},
            stage="S2" if i == 1 else "S4",
            clock_sim=0.2 * i,
            clock_latency=0.2 * i,
        )
        for i, (x, y) in enumerate(points, start=1)
    ]
    done = [("S1", 1, 1.0), ("S2", 1, 0.0), ("S3", 2, 1.0), ("S4", 2, 0.5)]
    stages = [
        StageRecord(name=n, status="done", target="t", d_init=9, d_best=d, d_final=d, done_step=k)
        for n, k, d in done
    ]
    header = TrajectoryHeader(
        episode=room_rescue(),
        agent=PluginRef(name="hand"),
        backend=PluginRef(name="none"),
        seed=0,
        code_version="t",
    )
    facts = RescueFacts(picked_up=True, dropped_in_zone=True).as_record()
    footer = TrajectoryFooter(outcome="success", steps=2, stages=stages, facts=facts)
    return Trajectory(header, steps, footer)


def test_the_fork_measures_to_the_placed_casualty_up_to_the_pick_up_then_the_stretcher():
    """Picked up 1 m from (4, 3), handed off 0.5 m from (-5.5, -2): S2 = 21.67, S4 = 23.33."""
    metrics = score_rescue(carried([(3.0, 3.0), (-5.0, -2.0)]))
    expected = (25.0, 25.0 * (1 - 1.0 / 7.5), 25.0, 25.0 * (1 - 0.5 / 7.5))
    assert [metrics[f"s{k}_fork"] for k in range(1, 5)] == pytest.approx(expected)
    assert metrics["ts_fork"] == pytest.approx(sum(expected)) and metrics["ts"] == 100.0
