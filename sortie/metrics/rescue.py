"""Rescue metrics (docs/rescue.md, Metrics), pure functions of a trajectory record.

An errored episode (agent or backend error) is not scored: ``error`` 1, every other metric
NaN. The stage scores come in four variants (``docs/rescue.md``): ``ts`` and ``s1``–``s4``
are the ``paper`` variant, ``ts_fork`` and ``s1_fork``–``s4_fork`` the ``paper-fork`` one;
``ts_code`` and ``s1_code``–``s4_code`` the ``rescuebench-code`` one, which reads the final
distances (and the target points they measure to) from the footer's facts, and
``ts_code_placement`` and ``s1_code_placement``–``s4_code_placement`` the same scores
measured to RescueBench's target points, where the episode places the casualty and the
stretcher. ``sdtw`` weights nDTW by the task's success, ``sdtw_r4r`` by r4r's test of the
path's end.
"""

from __future__ import annotations

import math

import numpy as np

from sortie.core.episode import EpisodeSpec
from sortie.core.records import StageRecord
from sortie.core.trajectory import Trajectory
from sortie.metrics.aggregate import ERROR, errored_metrics, is_error
from sortie.metrics.paths import (
    GROUND_THRESHOLD,
    dtw,
    ends_near,
    human_similarity_of,
    ndtw_of,
    path_length,
    spl,
)
from sortie.metrics.stage_scores import StageDistances, code_scores, fork_scores, paper_scores
from sortie.missions.rescue.facts import RescueFacts, rescue_facts
from sortie.missions.rescue.spec import rescue_data

STAGES = ("S1", "S2", "S3", "S4")
WALL_CLOCK_METRICS = frozenset({"time_latency"})
"""Metrics that include measured wall time, so they differ between runs of the same seed."""
METRICS = (
    "tcr",
    "ts",
    "ts_code",
    "s1",
    "s2",
    "s3",
    "s4",
    "s1_code",
    "s2_code",
    "s3_code",
    "s4_code",
    "ts_fork",
    "s1_fork",
    "s2_fork",
    "s3_fork",
    "s4_fork",
    "ts_code_placement",
    "s1_code_placement",
    "s2_code_placement",
    "s3_code_placement",
    "s4_code_placement",
    "time_sim",
    "time_latency",
    "steps",
    "collisions",
    "path_length",
    "movement_effectiveness",
    "spl",
    "hs",
    "ndtw",
    "sdtw",
    "sdtw_r4r",
)
"""Every metric ``score_rescue`` returns besides ``error`` and the per-stage ones."""


def score_rescue(trajectory: Trajectory) -> dict[str, float]:
    """Return every rescue metric of one episode (NaN where a metric does not apply)."""
    footer = trajectory.footer
    if is_error(footer.outcome, footer.failure_reason):
        return errored_metrics(METRICS)
    facts = rescue_facts(trajectory)
    picked, dropped = facts.picked_up, facts.dropped_in_zone
    success = footer.outcome == "success"
    distances, spec = _stage_distances(footer.stages), trajectory.header.episode
    to_casualty = math.inf if facts.final_to_casualty is None else facts.final_to_casualty
    positions = _positions(trajectory)
    metrics = {
        ERROR: 0.0,
        "tcr": float(success),
        **_stage_scores("", paper_scores(distances, picked, dropped)),
        **_stage_scores(
            "_code", code_scores(to_casualty, picked, facts.final_to_stretcher, dropped)
        ),
        **_placed_scores(spec, positions, facts, footer.stages),
        "time_sim": footer.clock_sim,
        "time_latency": footer.clock_latency,
        "steps": float(footer.steps),
        "collisions": float(trajectory.columns.collisions.sum()),
        "path_length": path_length(positions),
        "movement_effectiveness": movement_effectiveness(trajectory),
    }
    metrics.update(_path_metrics(trajectory, positions, success))
    for stage in footer.stages:
        metrics[f"{stage.name.lower()}_steps"] = float(stage.steps)
        metrics[f"{stage.name.lower()}_collisions"] = float(stage.collisions)
    return metrics


def movement_effectiveness(trajectory: Trajectory) -> float:
    """Return the share of steps that brought the agent closer to its current stage target.

    A step counts as closer when its distance is strictly below the one before (the previous
    step's in the same stage, or the stage's initial distance), as RescueBench's code counts.
    """
    columns = trajectory.columns
    initial = {s.name: s.d_init for s in trajectory.footer.stages}
    starts = [initial.get(name) for name in columns.stage_names.tolist()]
    start_of = np.array([math.nan if d is None else d for d in starts] + [math.nan])
    kept = (columns.stage >= 0) & ~np.isnan(columns.target_distance)
    stage, distance = columns.stage[kept], columns.target_distance[kept]
    same = np.r_[False, stage[1:] == stage[:-1]]  # the step before was in the same stage
    before = np.where(same, np.r_[math.nan, distance[:-1]], start_of[stage])
    counted = ~np.isnan(before)
    better = int(np.count_nonzero(distance[counted] < before[counted]))
    return better / int(counted.sum()) if counted.any() else math.nan


def _stage_scores(suffix: str, scores: tuple[float, float, float, float]) -> dict[str, float]:
    """Return one variant's TS and S1–S4 under their names (``ts_code``, ``s1_code``, …)."""
    return {f"ts{suffix}": sum(scores), **{f"s{k + 1}{suffix}": v for k, v in enumerate(scores)}}


def _placed_scores(
    spec: EpisodeSpec, positions: np.ndarray, facts: RescueFacts, stages: list[StageRecord]
) -> dict[str, float]:
    """Return the ``_code_placement`` and ``_fork`` scores, measured as RescueBench measures.

    The tracker measures to the poses of its episode file (``injured_player_loc``,
    ``stretcher_loc``), not to the base centre of the body standing there, and measures to
    the casualty's pose up to the pick-up, to the stretcher's from then on (sortie's S2 ends
    at 0 m from a casualty it carries). NaN when the episode does not place them.
    """
    casualty, stretcher = _placed_at(spec, "casualty"), _placed_at(spec, "stretcher")
    if casualty is None or stretcher is None:
        unknown = (math.nan,) * 4
        return {**_stage_scores("_code_placement", unknown), **_stage_scores("_fork", unknown)}
    to_casualty, to_stretcher = _away(casualty, positions), _away(stretcher, positions)
    code = code_scores(to_casualty[-1], facts.picked_up, to_stretcher[-1], facts.dropped_in_zone)
    by_name = {stage.name: stage for stage in stages}
    picked = by_name["S2"].done_step if facts.picked_up and "S2" in by_name else None
    if picked is None:
        fork = fork_scores(_tracked(to_casualty), None)
    else:  # the pick-up step counts in both: the tracker measures it, then switches target
        fork = fork_scores(_tracked(to_casualty[: picked + 1]), _tracked(to_stretcher[picked:]))
    return {**_stage_scores("_code_placement", code), **_stage_scores("_fork", fork)}


def _away(point: tuple[float, float], positions: np.ndarray) -> np.ndarray:
    """Return the horizontal distance from each position to ``point``."""
    return np.hypot(positions[:, 0] - point[0], positions[:, 1] - point[1])


def _tracked(distances: np.ndarray) -> StageDistances:
    """Return a stage's distances from the first, best and last of its positions."""
    return StageDistances(float(distances[0]), float(distances.min()), float(distances[-1]))


def _placed_at(spec: EpisodeSpec, role: str) -> tuple[float, float] | None:
    """Return (x, y) of the placement that plays ``role``, or None if none does."""
    name = spec.targets.get(role)
    pose = next((p.pose for p in spec.placements if p.name == name), None)
    return None if pose is None else (pose.x, pose.y)


Distances = tuple[
    StageDistances | None, StageDistances | None, StageDistances | None, StageDistances | None
]


def _stage_distances(stages: list[StageRecord]) -> Distances:
    by_name = {s.name: s for s in stages}
    out = [_distances(by_name.get(name)) for name in STAGES]
    return (out[0], out[1], out[2], out[3])


def _distances(stage: StageRecord | None) -> StageDistances | None:
    """Return a stage's distances, or None if it never began."""
    if stage is None or stage.d_init is None or stage.d_best is None or stage.d_final is None:
        return None
    return StageDistances(stage.d_init, stage.d_best, stage.d_final)


def _positions(trajectory: Trajectory) -> np.ndarray:
    start = trajectory.header.episode.start
    return np.vstack([(start.x, start.y, start.z), trajectory.columns.position])


def _path_metrics(trajectory: Trajectory, positions: np.ndarray, success: bool) -> dict[str, float]:
    mission = rescue_data(trajectory.header.episode)
    reference, shortest = mission.reference_path, mission.shortest_length
    taken = path_length(positions)
    result = {"spl": spl(success, shortest, taken) if math.isfinite(shortest) else math.nan}
    if len(reference) < 2:
        return {**result, **dict.fromkeys(("hs", "ndtw", "sdtw", "sdtw_r4r"), math.nan)}
    distance = dtw(reference, positions)  # once: HS, nDTW and SDTW all derive from it
    value = ndtw_of(distance, len(reference), GROUND_THRESHOLD)
    similarity = human_similarity_of(distance, len(reference), len(positions))
    ended_near = ends_near(reference, positions, GROUND_THRESHOLD)
    return {
        **result,
        "hs": similarity,
        "ndtw": value,
        "sdtw": value if success else 0.0,
        "sdtw_r4r": value if ended_near else 0.0,
    }
