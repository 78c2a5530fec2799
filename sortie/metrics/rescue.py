"""Rescue metrics (docs/rescue.md, Metrics), pure functions of a trajectory record.

An errored episode (agent or backend error) is not scored: ``error`` 1, every other metric
NaN. The stage scores come in two variants (``docs/rescue.md``): ``ts`` and ``s1``–``s4``
are the ``paper`` variant, ``ts_code`` and ``s1_code``–``s4_code`` the ``rescuebench-code``
one, which reads the final distances (and the target points they measure to) from the
footer's facts.
"""

from __future__ import annotations

import math

import numpy as np

from sortie.core.records import StageRecord
from sortie.core.trajectory import Trajectory
from sortie.metrics.aggregate import ERROR, errored_metrics, is_error
from sortie.metrics.paths import (
    GROUND_THRESHOLD,
    dtw,
    human_similarity_of,
    ndtw_of,
    path_length,
    spl,
)
from sortie.metrics.stage_scores import StageDistances, code_scores, paper_scores
from sortie.missions.rescue.facts import rescue_facts
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
    paper = paper_scores(_stage_distances(footer.stages), picked, dropped)
    to_casualty = math.inf if facts.final_to_casualty is None else facts.final_to_casualty
    code = code_scores(to_casualty, picked, facts.final_to_stretcher, dropped)
    positions = _positions(trajectory)
    metrics = {
        ERROR: 0.0,
        "tcr": float(success),
        "ts": sum(paper),
        "ts_code": sum(code),
        **{f"s{k + 1}": v for k, v in enumerate(paper)},
        **{f"s{k + 1}_code": v for k, v in enumerate(code)},
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
        return {**result, "hs": math.nan, "ndtw": math.nan, "sdtw": math.nan}
    distance = dtw(reference, positions)  # once: HS, nDTW and SDTW all derive from it
    value = ndtw_of(distance, len(reference), GROUND_THRESHOLD)
    similarity = human_similarity_of(distance, len(reference), len(positions))
    return {**result, "hs": similarity, "ndtw": value, "sdtw": value if success else 0.0}
