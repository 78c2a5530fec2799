"""MissionBench's Eff, CR and patrol IoU recomputed from hand-made records, against sortie's.

The ``missionbench_*`` functions below are written from MissionBench's formulas (not from
sortie's code): Eff = 1 − steps executed / budget and CR = steps with a collision / steps
executed, where ``done`` and task actions are not steps; the patrol IoU buffers both paths
by 20 m after resampling each to 100 points by 3D arc length, the flown path being the poses
after each move. Each test also holds a value worked out by hand.
"""

import math

import numpy as np
import pytest
from shapely.geometry import LineString

from sortie.core.pose import Pose
from sortie.core.records import (
    EventRecord,
    PluginRef,
    StepRecord,
    TrajectoryFooter,
    TrajectoryHeader,
)
from sortie.core.trajectory import Trajectory
from sortie.metrics.aerial import score_aerial
from sortie.missions.aerial.facts import AerialFacts
from sortie.missions.aerial.patrol import patrol_iou, resample
from sortie.testing.episodes import aerial_hop

FORWARD = {"type": "fly", "primitive": "forward", "magnitude": 6.0, "report": None}
TURN = {"type": "fly", "primitive": "turn_left", "magnitude": 30.0, "report": None}
INVALID = {"type": "invalid", "raw": "<garbage>", "error": "no JSON"}
DONE = {"type": "task", "kind": "done", "report": None}
DROP = {"type": "task", "kind": "drop_payload", "report": None}
ROUTE = [[0.0, 0.0, 20.0], [40.0, 0.0, 20.0]]
STADIUM = 40.0 * 40.0 + math.pi * 20.0**2
"""Area of the 20 m buffer round a 40 m segment: a 40 × 40 rectangle and two half discs."""


def record(spec, steps, outcome="failure", budget=20):
    """Return a trajectory of ``steps``: (action, (x, y, z, yaw), touched) triples."""
    records = [
        StepRecord(
            index=i,
            pose=Pose(*pose),
            action=action,
            clock_sim=float(i),
            clock_latency=float(i),
            events=[EventRecord(kind="contact")] if touched else [],
        )
        for i, (action, pose, touched) in enumerate(steps, start=1)
    ]
    header = TrajectoryHeader(
        episode=spec,
        agent=PluginRef(name="hand"),
        backend=PluginRef(name="none"),
        seed=0,
        code_version="t",
    )
    footer = TrajectoryFooter(
        outcome=outcome, steps=len(records), facts=AerialFacts(step_budget=budget).as_record()
    )
    return Trajectory(header, records, footer)


def missionbench_eff_cr(trajectory, budget):
    """Return (Eff, CR) as MissionBench counts them: only moves are steps."""
    moves = [s for s in trajectory.steps if s.action.type != "task"]
    collided = sum(1 for s in moves if any(e.kind == "contact" for e in s.events))
    return 1.0 - len(moves) / budget, (collided / len(moves) if moves else 0.0)


def missionbench_iou(trajectory, route):
    """Return MissionBench's area IoU; a flown path it cannot resample (a hover) gives 0."""
    flown = [s.pose.position() for s in trajectory.steps if s.action.type != "task"]
    if len(flown) < 2 or _length(flown) == 0.0:
        return 0.0
    a, b = _buffer(flown), _buffer(route)
    return a.intersection(b).area / a.union(b).area


def _length(points):
    return float(sum(math.dist(p, q) for p, q in zip(points, points[1:], strict=False)))


def _buffer(points):
    """Resample to 100 points evenly by 3D arc length, drop z, buffer by 20 m."""
    lengths = [0.0]
    for p, q in zip(points, points[1:], strict=False):
        lengths.append(lengths[-1] + math.dist(p, q))
    at = [lengths[-1] * i / 99 for i in range(100)]
    xs = np.interp(at, lengths, [p[0] for p in points])
    ys = np.interp(at, lengths, [p[1] for p in points])
    return LineString(list(zip(xs, ys, strict=True))).buffer(20.0)


def hop(*moves):
    """Return record steps along the hop: each move's action with the pose after it."""
    x, out = 0.0, []
    for action, touched in moves:
        x += 6.0 if action is FORWARD else 0.0
        out.append((action, (x, 0.0, 20.0, 0.0), touched))
    return out


FLIGHT = (
    (FORWARD, False),
    (FORWARD, True),
    (FORWARD, False),
    (FORWARD, False),
    (DROP, False),
    (DONE, False),
)
"""Four moves to the goal (the second touching something), a drop, done."""


def test_eff_and_cr_count_moves_only():
    """Four moves (the 2nd touching), a drop and done, T_max 20: Eff 0.8, CR 1/4."""
    trajectory = record(aerial_hop(), hop(*FLIGHT))
    metrics = score_aerial(trajectory)
    assert (metrics["eff"], metrics["cr"]) == pytest.approx((0.8, 0.25))
    assert (metrics["eff"], metrics["cr"]) == pytest.approx(missionbench_eff_cr(trajectory, 20))


def test_the_every_step_variants_count_task_actions_too():
    """The same flight counted the old way: Eff 1 − 6/20 = 0.7, CR 1/6."""
    trajectory = record(aerial_hop(), hop(*FLIGHT))
    metrics = score_aerial(trajectory)
    assert (metrics["eff_all_steps"], metrics["cr_all_steps"]) == pytest.approx((0.7, 1 / 6))


def test_an_invalid_action_is_a_step_and_done_at_once_is_none():
    """An invalid answer then done: one step (Eff 0.95); done alone: Eff 1, CR 0 (not NaN)."""
    invalid = record(aerial_hop(), hop((INVALID, False), (DONE, False)))
    only_done = record(aerial_hop(), hop((DONE, False)))
    assert score_aerial(invalid)["eff"] == pytest.approx(0.95)
    assert (score_aerial(only_done)["eff"], score_aerial(only_done)["cr"]) == (1.0, 0.0)
    assert missionbench_eff_cr(only_done, 20) == (1.0, 0.0)


def test_patrol_iou_leaves_the_start_out_of_the_flown_path():
    """Start at x = 0, poses after moves at 20 and 40 m: a 20 m stadium inside a 40 m one."""
    spec = aerial_hop(("patrol",), patrol=ROUTE)
    steps = [(FORWARD, (x, 0.0, 20.0, 0.0), False) for x in (20.0, 40.0, 40.0)]
    steps[-1] = (DONE, *steps[-1][1:])
    trajectory = record(spec, steps, budget=50)
    by_hand = (20.0 * 40.0 + math.pi * 400.0) / STADIUM  # 0.7200
    metrics = score_aerial(trajectory)
    assert metrics["iou"] == pytest.approx(by_hand, rel=0.005)
    assert metrics["iou"] == pytest.approx(missionbench_iou(trajectory, ROUTE), abs=1e-9)
    assert metrics["iou_start2d"] == pytest.approx(1.0)  # the old reading counts the start


def test_patrol_iou_of_a_hover_or_a_single_pose_is_zero():
    """Turns in place, or one move then done: nothing MissionBench could resample, IoU 0."""
    spec = aerial_hop(("patrol",), patrol=ROUTE)
    hover = record(
        spec,
        [(TURN, (0.0, 0.0, 20.0, 30.0), False), (TURN, (0.0, 0.0, 20.0, 60.0), False)],
        budget=50,
    )
    single = record(spec, hop((FORWARD, False), (DONE, False)), budget=50)
    for trajectory in (hover, single):
        assert score_aerial(trajectory)["iou"] == 0.0 == missionbench_iou(trajectory, ROUTE)
        assert score_aerial(trajectory)["mp"] == 0.0


def test_patrol_iou_of_a_flight_off_the_route_equals_missionbench():
    """A zig-zag 10–30 m off the route, climbing: sortie and the independent code agree."""
    spec = aerial_hop(("patrol",), patrol=ROUTE)
    poses = [
        (5.0, 10.0, 22.0),
        (12.0, 30.0, 25.0),
        (20.0, 12.0, 30.0),
        (31.0, 28.0, 35.0),
        (44.0, 15.0, 38.0),
    ]
    trajectory = record(spec, [(FORWARD, (*p, 0.0), False) for p in poses], budget=50)
    expected = missionbench_iou(trajectory, ROUTE)
    assert 0.2 < expected < 0.8
    assert score_aerial(trajectory)["iou"] == pytest.approx(expected, abs=1e-9)


def test_resampling_is_even_by_3d_arc_length_then_projected():
    """Up 30 m then 40 m along x (70 m in 3D), 5 points: x = 0, 0, 5, 22.5, 40 (2D: 0..40 by 10)."""
    path = [[0.0, 0.0, 0.0], [0.0, 0.0, 30.0], [40.0, 0.0, 30.0]]
    assert resample(path, 5)[:, 0] == pytest.approx([0.0, 0.0, 5.0, 22.5, 40.0])
    assert resample(path, 5, dimensions=2)[:, 0] == pytest.approx([0.0, 10.0, 20.0, 30.0, 40.0])


def test_patrol_iou_of_a_route_against_itself_is_one_and_of_no_route_nan():
    """The reference flown exactly covers it; a reference of one point has nothing to cover."""
    assert patrol_iou(ROUTE, ROUTE) == pytest.approx(1.0)
    assert math.isnan(patrol_iou(ROUTE, ROUTE[:1]))
