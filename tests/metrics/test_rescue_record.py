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


def record(distances, initial=5.0, outcome="failure", reason=None):
    """Return a rescue record whose S1 steps end at ``distances`` from the casualty."""
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
        episode=room_rescue(),
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
