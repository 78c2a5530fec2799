"""RescueBench stage scores (docs/rescue.md): ``paper``, ``paper-fork``, ``rescuebench-code``.

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


def reach_score(
    done: bool, d: StageDistances, gate: float, radius: float = SIGHTING_RADIUS
) -> float:
    """Return the paper's reach score: full if done, else the way covered from R to the gate."""
    if done:
        return STAGE_POINTS
    return STAGE_POINTS * _clip01((radius - d.best) / (radius - gate))


def paper_scores(
    stages: tuple[
        StageDistances | None, StageDistances | None, StageDistances | None, StageDistances | None
    ],
    picked_up: bool,
    dropped_in_zone: bool,
) -> tuple[float, float, float, float]:
    """Return (S1, S2, S3, S4) of the paper variant from each stage's distances.

    A stage that never began (None) scores 0; S3 and S4 are 0 unless S2 succeeded.
    """
    s1, s2, s3, s4 = stages
    score1 = approach_score(s1) if s1 else 0.0
    score2 = reach_score(picked_up, s2, TRIGGER_RADIUS) if s2 else 0.0
    if not picked_up:
        return score1, score2, 0.0, 0.0
    score3 = approach_score(s3) if s3 else 0.0
    score4 = reach_score(dropped_in_zone, s4, HANDOFF_RADIUS) if s4 else 0.0
    return score1, score2, score3, score4


def code_scores(
    final_to_casualty: float,
    picked_up: bool,
    final_to_stretcher: float | None,
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


def fork_scores(
    casualty: StageDistances, stretcher: StageDistances | None
) -> tuple[float, float, float, float]:
    """Return (S1, S2, S3, S4) as the third-party ``paper-fork`` reads the paper.

    The fork (xzy2022/RescueBench, ``paper_interpretation_scores.py``) scores the two stages of
    RescueBench's tracker: ``casualty``, the distances to the casualty up to the pick-up, and
    ``stretcher``, those to the stretcher from the pick-up on (None: no pick-up). S1 and S3
    are the paper's approach scores; S2 and S4 the share of the way from R to the target
    itself covered at best, ``1 - best / R``, whether or not the pick-up or hand-off happened.
    """
    score1, score2 = approach_score(casualty), _inner_score(casualty.best)
    if stretcher is None:
        return score1, score2, 0.0, 0.0
    return score1, score2, approach_score(stretcher), _inner_score(stretcher.best)


def _inner_score(best: float) -> float:
    return STAGE_POINTS * _clip01(1.0 - best / SIGHTING_RADIUS)
