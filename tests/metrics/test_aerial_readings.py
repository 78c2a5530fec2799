"""The aerial readings ``success=missionbench`` and ``mp=missionbench`` on hand-worked records.

Each expected value is MissionBench's evaluation rule applied by hand to a small flight over
``aerial_hop`` (start [0, 0, 20], heading 0; goal [24, 0, 20, 0]; τ_d 5 m, τ_yaw 15°): a
visual-inspection mission (sortie's reporting) succeeds on a matching report or at the final
goal pose; a patrol path it cannot resample keeps the pose test and the distance progress
(d_0 − d_end) / d_0, or −1 when d_0 is 0; MP is 1 on success.
"""

import math

import pytest

from sortie.core.pose import Pose
from sortie.core.records import PluginRef, StepRecord, TrajectoryFooter, TrajectoryHeader
from sortie.core.trajectory import Trajectory
from sortie.metrics.aerial import METRICS, score_aerial
from sortie.metrics.aggregate import group_means
from sortie.missions.aerial.facts import AerialFacts, VerdictFacts
from sortie.report.tables import column_sources, reading_set
from sortie.testing.episodes import aerial_hop

FORWARD = {"type": "fly", "primitive": "forward", "magnitude": 6.0, "report": None}
TURN = {"type": "fly", "primitive": "turn_left", "magnitude": 30.0, "report": None}
DONE = {"type": "task", "kind": "done", "report": None}
ROUTE = [[0.0, 0.0, 20.0], [40.0, 0.0, 20.0]]
WRONG = VerdictFacts(judge="exact", match=False, score=0.2)
RIGHT = VerdictFacts(judge="exact", match=True, score=1.0)


def flight(spec, poses, verdict=None, outcome="failure", by_type=None, budget=20):
    """Return a record of forward moves to ``poses`` (x, y, z, yaw), then done."""
    actions = [*([FORWARD] * len(poses)), DONE]
    ends = [*poses, poses[-1] if poses else spec.start]
    steps = [
        StepRecord(
            index=i, pose=Pose(*pose), action=action, clock_sim=float(i), clock_latency=float(i)
        )
        for i, (action, pose) in enumerate(zip(actions, ends, strict=True), start=1)
    ]
    header = TrajectoryHeader(
        episode=spec,
        agent=PluginRef(name="hand"),
        backend=PluginRef(name="none"),
        seed=0,
        code_version="t",
    )
    facts = AerialFacts(verdict=verdict, success_by_type=by_type or {}, step_budget=budget)
    reason = "agent_error" if outcome == "error" else None
    footer = TrajectoryFooter(
        outcome="failure" if reason else outcome,
        failure_reason=reason,
        steps=len(steps),
        facts=facts.as_record(),
    )
    return Trajectory(header, steps, footer)


def reporting(poses, verdict, success=False):
    """Return a reporting flight over the hop, judged ``verdict``."""
    spec = aerial_hop(("reporting",), answer="7")
    outcome = "success" if success else "failure"
    return score_aerial(flight(spec, poses, verdict, outcome, {"reporting": verdict.match}))


def patrol(poses, goal=(24.0, 0.0, 20.0, 0.0)):
    """Return a patrol flight over the hop's 40 m route with the goal given."""
    spec = aerial_hop(("patrol",), patrol=ROUTE, goal=list(goal))
    return score_aerial(flight(spec, poses, by_type={"patrol": False}, budget=50))


def test_a_wrong_report_at_the_goal_pose_succeeds_in_missionbench_reading():
    """2 m short of the goal, heading 0, wrong report: MB SR 1, MP 1, Δ 0; sortie 0, 22/24."""
    metrics = reporting([(6.0, 0.0, 20.0, 0.0), (22.0, 0.0, 20.0, 0.0)], WRONG)
    assert (metrics["sr"], metrics["mp"], metrics["gap"]) == pytest.approx((0.0, 22 / 24, 1.0))
    assert (metrics["sr_missionbench"], metrics["mp_missionbench"]) == (1.0, 1.0)
    assert metrics["gap_missionbench"] == 0.0


def test_a_wrong_report_at_the_goal_facing_away_fails_in_both_readings():
    """At the goal position but 20° off its heading (τ_yaw 15°): SR 0 and MP 22/24 in both."""
    metrics = reporting([(22.0, 0.0, 20.0, 20.0)], WRONG)
    assert (metrics["sr_missionbench"], metrics["mp_missionbench"]) == pytest.approx((0, 22 / 24))
    assert metrics["mp_missionbench"] == pytest.approx(metrics["mp"])


def test_a_wrong_report_six_metres_off_one_axis_fails_in_both_readings():
    """6 m to the side of the goal (τ_d 5 m per axis), heading 0: not at the goal pose."""
    metrics = reporting([(24.0, 6.0, 20.0, 0.0)], WRONG)
    assert metrics["sr_missionbench"] == 0.0 == metrics["sr"]


def test_reporting_and_inspection_at_the_goal_pose_with_a_wrong_report():
    """Both tags at the goal pose, report wrong: sortie fails the reporting tag, MB passes both."""
    spec = aerial_hop(("reporting", "inspection"), answer="7")
    by_type = {"reporting": False, "inspection": True}
    metrics = score_aerial(flight(spec, [(24.0, 0.0, 20.0, 0.0)], WRONG, by_type=by_type))
    assert (metrics["sr"], metrics["sr_missionbench"], metrics["mp_missionbench"]) == (0, 1, 1)


def test_a_right_report_far_from_the_goal_succeeds_in_both_readings():
    """One move, 18 m from the goal, the report matches: SR 1 and MP 1 either way."""
    metrics = reporting([(6.0, 0.0, 20.0, 0.0)], RIGHT, success=True)
    assert (metrics["sr"], metrics["sr_missionbench"], metrics["mp_missionbench"]) == (1, 1, 1)


def test_a_single_move_patrol_keeps_missionbench_distance_progress():
    """One 6 m move towards a goal 24 m away: sortie's IoU MP 0, MissionBench's (24 − 18)/24."""
    metrics = patrol([(6.0, 0.0, 20.0, 0.0)])
    assert (metrics["mp"], metrics["iou"]) == (0.0, 0.0)
    assert metrics["mp_missionbench"] == pytest.approx(0.25)
    assert metrics["sr_missionbench"] == 0.0


def test_a_patrol_that_moves_away_clips_its_distance_progress_to_zero():
    """One move backwards, 30 m from a goal 24 m away: (24 − 30)/24 clipped to 0."""
    metrics = patrol([(-6.0, 0.0, 20.0, 0.0)])
    assert metrics["mp_missionbench"] == 0.0


def test_a_hover_on_a_closed_route_away_from_its_heading_is_minus_one():
    """Goal at the start (d_0 = 0), hovering at heading 60° (goal 0°): MissionBench records −1."""
    metrics = patrol([(0.0, 0.0, 20.0, 30.0), (0.0, 0.0, 20.0, 60.0)], goal=(0, 0, 20, 0))
    assert metrics["mp_missionbench"] == -1.0 and metrics["sr_missionbench"] == 0.0
    assert metrics["mp"] == 0.0


def test_a_hover_on_a_closed_route_at_its_heading_passes_the_pose_test():
    """The same hover ending at heading 10° (within 15°): MissionBench's SR and MP are 1."""
    metrics = patrol([(0.0, 0.0, 20.0, 30.0), (0.0, 0.0, 20.0, 10.0)], goal=(0, 0, 20, 0))
    assert (metrics["sr_missionbench"], metrics["mp_missionbench"]) == (1.0, 1.0)
    assert metrics["sr"] == 0.0


def test_a_patrol_flown_along_the_route_reads_its_iou_in_both_readings():
    """Two moves along the route: a path MissionBench resamples, so MP is its IoU either way."""
    metrics = patrol([(20.0, 0.0, 20.0, 0.0), (40.0, 0.0, 20.0, 0.0)])
    assert 0.5 < metrics["iou"] < 1.0
    assert metrics["mp_missionbench"] == metrics["mp"] == metrics["iou"]


def test_an_errored_episode_has_no_missionbench_values():
    """An agent error scores nothing: the new keys are NaN like every other metric."""
    spec = aerial_hop(("reporting",), answer="7")
    metrics = score_aerial(flight(spec, [(22.0, 0.0, 20.0, 0.0)], WRONG, "error"))
    assert all(math.isnan(metrics[key]) for key in METRICS if key.endswith("_missionbench"))


def test_minus_one_is_averaged_in_as_missionbench_aggregates_it():
    """MP −1 and 0.5 over two episodes: MissionBench's mean (−1 + 0.5) / 2 = −25%."""
    rows = [("patrol", {"mp_missionbench": -1.0}), ("patrol", {"mp_missionbench": 0.5})]
    assert group_means(rows, ["mp_missionbench"])["all"]["mp_missionbench"] == -25.0


def test_readings_seed_reads_every_missionbench_key():
    """The two readings remap disjoint columns, so both at once read all three keys."""
    sources = column_sources(("sr", "mp", "gap", "eff"), reading_set("aerial", "seed"))
    assert sources == {
        "sr": "sr_missionbench",
        "mp": "mp_missionbench",
        "gap": "gap_missionbench",
        "eff": "eff",
    }
