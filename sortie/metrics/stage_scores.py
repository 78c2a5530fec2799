"""RescueBench stage scores (MISSIONS.md §1): the ``paper`` default and ``rescuebench-code``.

Each of the four stages is worth 25 points. Inputs are horizontal distances in metres.
"""

from __future__ import annotations

from dataclasses import dataclass

STAGE_POINTS = 25.0
SIGHTING_RADIUS = 7.5  # R
TRIGGER_RADIUS = 1.5  # delta_trig, grab gate
HANDOFF_RADIUS = 2.0  # drop zone around the stretcher
EPSILON = 1e-6


@dataclass(frozen=True, slots=True)
class StageDistances:
    """Distances to one stage's target: when it began, the best reached, and at the end."""

    initial: float
    best: float
    final: float


def _clip01(value: float) -> float:
    return min(1.0, max(0.0, value))


def approach_score(d: StageDistances, radius: float = SIGHTING_RADIUS) -> float:
    """Return the paper's approach score: share of the way from ``initial`` to ``radius``."""
    if d.initial <= radius:
        return STAGE_POINTS
    return STAGE_POINTS * _clip01((d.initial - d.best) / max(d.initial - radius, EPSILON))


def reach_score(done: bool, d: StageDistances, gate: float,
                radius: float = SIGHTING_RADIUS) -> float:
    """Return the paper's reach score: full if done, else the way covered from R to the gate."""
    if done:
        return STAGE_POINTS
    return STAGE_POINTS * _clip01((radius - d.best) / (radius - gate))


def paper_scores(
    to_casualty: StageDistances, picked_up: bool,
    to_stretcher: StageDistances | None, dropped_in_zone: bool,
) -> tuple[float, float, float, float]:
    """Return (S1, S2, S3, S4) of the paper variant; S3 and S4 are 0 unless S2 succeeded.

    ``to_casualty`` covers the search (S1 and S2 share it); ``to_stretcher`` the return, from
    the pick-up on (None if there was none).
    """
    s1 = approach_score(to_casualty)
    s2 = reach_score(picked_up, to_casualty, TRIGGER_RADIUS)
    if not picked_up or to_stretcher is None:
        return s1, s2, 0.0, 0.0
    s3 = approach_score(to_stretcher)
    s4 = reach_score(dropped_in_zone, to_stretcher, HANDOFF_RADIUS)
    return s1, s2, s3, s4


def code_scores(
    final_to_casualty: float, picked_up: bool, final_to_stretcher: float | None,
    dropped_in_zone: bool,
) -> tuple[float, float, float, float]:
    """Return (S1, S2, S3, S4) as RescueBench's public tracker scores them, from final distances."""
    if not picked_up:
        s1 = STAGE_POINTS if final_to_casualty <= SIGHTING_RADIUS else 0.0
        s2 = STAGE_POINTS * _clip01((SIGHTING_RADIUS - final_to_casualty) / SIGHTING_RADIUS)
        return s1, s2, 0.0, 0.0
    d = float("inf") if final_to_stretcher is None else final_to_stretcher
    s3 = STAGE_POINTS if d <= SIGHTING_RADIUS else 0.0
    if dropped_in_zone or d <= HANDOFF_RADIUS:
        s4 = STAGE_POINTS
    else:
        s4 = STAGE_POINTS * _clip01((SIGHTING_RADIUS - d) / (SIGHTING_RADIUS - HANDOFF_RADIUS))
    return STAGE_POINTS, STAGE_POINTS, s3, s4
