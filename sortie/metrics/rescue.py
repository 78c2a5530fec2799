"""Rescue metrics (docs/rescue.md, Metrics), pure functions of a trajectory record."""

from __future__ import annotations

import math

import numpy as np

from sortie.core.records_io import Trajectory
from sortie.core.trajectory import StageRecord
from sortie.metrics.paths import (
    GROUND_THRESHOLD,
    dtw,
    human_similarity_of,
    ndtw_of,
    path_length,
    spl,
)
from sortie.metrics.stage_scores import StageDistances, code_scores, paper_scores

STAGES = ("S1", "S2", "S3", "S4")
WALL_CLOCK_METRICS = frozenset({"time_latency"})
"""Metrics that include measured wall time, so they differ between runs of the same seed."""


def score_rescue(trajectory: Trajectory) -> dict[str, float]:
    """Return every rescue metric of one episode (NaN where a metric does not apply)."""
    footer, facts = trajectory.footer, trajectory.footer.facts
    picked, dropped = bool(facts.get("picked_up")), bool(facts.get("dropped_in_zone"))
    success = footer.outcome == "success"
    paper = paper_scores(_stage_distances(footer.stages), picked, dropped)
    code = code_scores(float(facts.get("final_to_casualty", math.inf)), picked,
                       facts.get("final_to_stretcher"), dropped)  # fmt: skip
    positions = _positions(trajectory)
    metrics = {
        "tcr": float(success), "ts": sum(paper), "ts_code": sum(code),
        **{f"s{k + 1}": v for k, v in enumerate(paper)},
        **{f"s{k + 1}_code": v for k, v in enumerate(code)},
        "time_sim": footer.clock_sim, "time_latency": footer.clock_latency,
        "steps": float(footer.steps),
        "collisions": float(sum(s.collisions for s in trajectory.steps)),
        "path_length": path_length(positions),
        "movement_effectiveness": movement_effectiveness(trajectory),
    }  # fmt: skip
    metrics.update(_path_metrics(trajectory, positions, success))
    for stage in footer.stages:
        metrics[f"{stage.name.lower()}_steps"] = float(stage.steps)
        metrics[f"{stage.name.lower()}_collisions"] = float(stage.collisions)
    return metrics


def movement_effectiveness(trajectory: Trajectory) -> float:
    """Return the share of steps that brought the agent closer to its current stage target."""
    initial = {s.name: s.d_init for s in trajectory.footer.stages}
    better, counted, last_stage, last = 0, 0, None, None
    for step in trajectory.steps:
        if step.stage is None or step.target_distance is None:
            continue
        before = last if step.stage == last_stage else initial.get(step.stage)
        if before is not None:
            counted += 1
            better += step.target_distance < before - 1e-6
        last_stage, last = step.stage, step.target_distance
    return better / counted if counted else math.nan


Distances = tuple[StageDistances | None, StageDistances | None, StageDistances | None,
                  StageDistances | None]


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
    points = [(start.x, start.y, start.z)] + [(s.pose.x, s.pose.y, s.pose.z)
                                              for s in trajectory.steps]  # fmt: skip
    return np.asarray(points, dtype=float)


def _path_metrics(trajectory: Trajectory, positions: np.ndarray, success: bool
                  ) -> dict[str, float]:
    mission = trajectory.header.episode.mission
    reference = mission.get("reference_path") or []
    shortest = float(mission.get("shortest_length", math.nan))
    taken = path_length(positions)
    result = {"spl": spl(success, shortest, taken) if math.isfinite(shortest) else math.nan}
    if len(reference) < 2:
        return {**result, "hs": math.nan, "ndtw": math.nan, "sdtw": math.nan}
    distance = dtw(reference, positions)  # once: HS, nDTW and SDTW all derive from it
    value = ndtw_of(distance, len(reference), GROUND_THRESHOLD)
    similarity = human_similarity_of(distance, len(reference), len(positions))
    return {**result, "hs": similarity, "ndtw": value, "sdtw": value if success else 0.0}
