"""Aerial metrics (docs/aerial.md, Metrics), pure functions of a trajectory record.

Fractions in 0..1 (reports show them in percent). The defaults are what MissionBench's code
computes; ``docs/aerial.md`` lists them with their variants. Choices and edge cases:

- **steps** (T_used) are motion steps: every step whose action is not a task action. ``done``
  and the task actions ``land``, ``drop_payload``, ``collect_sample`` are not steps, as in
  MissionBench's code (they cost a step of sortie's budget all the same); an invalid action
  is a step (MissionBench flies whatever its parser made of the text). Eff = 1 − steps/T_max,
  CR = motion steps with a collision / motion steps (0 with no motion step, as the code).
  Variants ``eff_all_steps`` and ``cr_all_steps`` count every step;
- a mission whose start is already at the goal (d_0 = 0) has no progress to measure: unless
  it succeeded (MP 1, as every success), its MP is NaN and ``unscored`` is 1, so it is left
  out of the MP mean and counted, never averaged in as −1 or 0;
- a path with no translation has OSR from the start point alone and MP 0 unless it
  succeeded; for a patrol its IoU (its MP) is 0 too (see ``sortie.missions.aerial.patrol``);
- a patrol has no OSR (its goal is the route's end, which for a perimeter is its start), so
  OSR and Δ are NaN for patrols: coverage is what MP (the route IoU) measures;
- an errored episode (agent or backend error) is not scored: ``error`` 1, the rest NaN;
- ``sr_missionbench``, ``mp_missionbench`` and ``gap_missionbench`` are SR, MP and Δ as
  MissionBench's evaluation decides them where sortie's rule differs (the family's readings
  ``success`` and ``mp``): a reporting mission also succeeds at the final goal pose, and a
  patrol path too short for an IoU keeps the pose test and the distance progress, −1 when
  d_0 is 0. MissionBench averages that −1 in, and so do reports of ``mp_missionbench``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from sortie.core.columns import StepColumns
from sortie.core.trajectory import Trajectory
from sortie.metrics.aggregate import ERROR, errored_metrics, is_error
from sortie.missions.aerial.facts import AerialFacts, aerial_facts
from sortie.missions.aerial.patrol import degenerate, patrol_iou, patrol_iou_start2d
from sortie.missions.aerial.spec import AerialData, MissionType, aerial_data

OSR_RADII = (5.0, 10.0, 20.0)
"""Distances (metres, 3D) at which the goal counts as reached somewhere along the path."""
METRICS = (
    "sr",
    "mp",
    "unscored",
    "osr5",
    "osr10",
    "osr20",
    "eff",
    "cr",
    "eff_all_steps",
    "cr_all_steps",
    "iou",
    "iou_start2d",
    "steps",
    "task_steps",
    "collisions",
    "closest",
    "final_distance",
    "clamped",
    "invalid_actions",
    "gap",
    "judge_score",
    "sr_missionbench",
    "mp_missionbench",
    "gap_missionbench",
)
"""Every metric ``score_aerial`` returns, besides ``error``."""
UNDEFINED_PROGRESS = -1.0
"""MP as MissionBench's evaluation records it when it cannot divide by d_0 (a closed route)."""


def score_aerial(trajectory: Trajectory) -> dict[str, float]:
    """Return every aerial metric of one episode (NaN where a metric does not apply)."""
    footer = trajectory.footer
    if is_error(footer.outcome, footer.failure_reason):
        return errored_metrics(METRICS)
    facts = aerial_facts(trajectory)
    mission = aerial_data(trajectory.header.episode)
    goal = mission.goal.position()
    columns = trajectory.columns
    start = trajectory.header.episode.start.position()
    positions = [list(start), *columns.position.tolist()]
    success = float(footer.outcome == "success")
    closest = min(math.dist(p, goal) for p in positions)
    metrics = {
        ERROR: 0.0,
        "sr": success,
        **{f"osr{r:g}": float(closest <= r) for r in OSR_RADII},
        **_effort(columns, _budget(facts, footer.steps)),
        **_progress(trajectory, mission, positions, success),
        "closest": closest,
        "final_distance": math.dist(positions[-1], goal),
        "clamped": float(columns.events("clamped")),
        "invalid_actions": float(columns.events("invalid_action")),
    }
    if MissionType.PATROL in mission.types:
        metrics.update({f"osr{r:g}": math.nan for r in OSR_RADII})
    metrics["gap"] = metrics["osr5"] - success
    metrics["judge_score"] = facts.verdict.score if facts.verdict else math.nan
    metrics.update(_missionbench(trajectory, mission, facts, metrics))
    return metrics


def motion_steps(columns: StepColumns) -> np.ndarray:
    """Return, per step, whether it is a motion step: anything but a task action (``done`` too)."""
    return ~columns.action_is("task")


def flown_path(trajectory: Trajectory) -> list[list[float]]:
    """Return the positions after each motion step (the start left out): MissionBench's path."""
    columns = trajectory.columns
    return columns.position[motion_steps(columns)].tolist()


def _effort(columns: StepColumns, budget: float) -> dict[str, float]:
    """Return Eff and CR over motion steps, and their every-step variants."""
    motion = motion_steps(columns)
    collided = (columns.collisions > 0) | columns.with_event("contact")
    moved, steps = int(motion.sum()), len(columns)
    hit, hit_all = int((collided & motion).sum()), int(collided.sum())
    return {
        "eff": 1.0 - moved / budget,
        "cr": hit / moved if moved else 0.0,
        "eff_all_steps": 1.0 - steps / budget,
        "cr_all_steps": hit_all / steps if steps else 0.0,
        "steps": float(moved),
        "task_steps": float(steps - moved),
        "collisions": float(hit),
    }


def _budget(facts: AerialFacts, steps: int) -> float:
    # Records always carry T_max; a footer of a job that never ran has none (and is errored).
    return float(facts.step_budget or steps or 1)


def _progress(
    trajectory: Trajectory, mission: AerialData, positions: list, success: float
) -> dict[str, float]:
    """Return MP and ``unscored``: patrols use the route IoU; others the closing of the distance."""
    if MissionType.PATROL in mission.types:
        route = mission.patrol
        iou = patrol_iou(flown_path(trajectory), route)
        start2d = patrol_iou_start2d(positions, route)
        mp = 1.0 if success else iou
        return {"mp": mp, "unscored": float(math.isnan(mp)), "iou": iou, "iou_start2d": start2d}
    nan = {"iou": math.nan, "iou_start2d": math.nan}
    d0 = math.dist(positions[0], mission.goal.position())
    if success:
        return {"mp": 1.0, "unscored": 0.0, **nan}
    if d0 <= 1e-9:
        return {"mp": math.nan, "unscored": 1.0, **nan}
    closing = (d0 - math.dist(positions[-1], mission.goal.position())) / d0
    return {"mp": min(max(closing, 0.0), 1.0), "unscored": 0.0, **nan}


def _missionbench(
    trajectory: Trajectory, mission: AerialData, facts: AerialFacts, metrics: dict[str, float]
) -> dict[str, float]:
    """Return SR, MP and Δ as MissionBench's evaluation decides them (readings ``success``, ``mp``).

    MP is 1 on that success; otherwise a patrol's IoU or, when its flown path is degenerate
    (no IoU), the distance progress as for the other types.
    """
    flown = flown_path(trajectory)
    unflown = MissionType.PATROL in mission.types and degenerate(flown)
    # MissionBench's rules accept every flight sortie's accept (a degenerate patrol path never
    # covers half the route), so sortie's success is one too.
    success = metrics["sr"] == 1.0 or _missionbench_success(trajectory, mission, facts, unflown)
    if success:
        mp = 1.0
    elif MissionType.PATROL in mission.types and not unflown:
        mp = metrics["iou"]
    else:
        start = trajectory.header.episode.start.position()
        mp = _distance_progress(start, flown[-1] if flown else start, mission)
    return {
        "sr_missionbench": float(success),
        "mp_missionbench": mp,
        "gap_missionbench": metrics["osr5"] - float(success),
    }


def _missionbench_success(
    trajectory: Trajectory, mission: AerialData, facts: AerialFacts, unflown: bool
) -> bool:
    """Return every type's success as MissionBench decides it (``sr_missionbench``).

    A reporting mission also succeeds at the goal pose, as every mission of MissionBench's
    visual-inspection category does; a patrol whose flown path is degenerate has no IoU, and
    MissionBench then keeps its pose test. The other rules are sortie's (``success_by_type``).
    """
    rules = {
        MissionType.REPORTING: lambda: _reported(facts) or _ends_at_goal_pose(trajectory, mission),
        MissionType.PATROL: lambda: (
            _ends_at_goal_pose(trajectory, mission)
            if unflown
            else facts.success_by_type.get(MissionType.PATROL.value, False)
        ),
    }
    return all(
        rules[kind]() if kind in rules else facts.success_by_type.get(kind.value, False)
        for kind in mission.types
    )


def _reported(facts: AerialFacts) -> bool:
    return facts.verdict is not None and facts.verdict.match


def _ends_at_goal_pose(trajectory: Trajectory, mission: AerialData) -> bool:
    """Return whether the final pose (the start's without steps) is at the goal pose."""
    columns = trajectory.columns
    if len(columns) == 0:
        return mission.at_goal_pose(trajectory.header.episode.start)
    # Only the heading needs the last step parsed; most episodes end away from the goal.
    if not mission.at_goal(columns.position[-1].tolist()):
        return False
    return mission.at_goal_pose(trajectory.steps[-1].pose)


def _distance_progress(start: Sequence[float], end: Sequence[float], mission: AerialData) -> float:
    """Return clip((d_0 − d_end) / d_0, 0, 1), or −1 when d_0 is 0 (MissionBench's record)."""
    goal = mission.goal.position()
    d0 = math.dist(start, goal)
    if d0 == 0.0:
        return UNDEFINED_PROGRESS
    return min(max((d0 - math.dist(end, goal)) / d0, 0.0), 1.0)
