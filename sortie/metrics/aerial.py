"""Aerial metrics (docs/aerial.md, Metrics), pure functions of a trajectory record.

Fractions in 0..1 (reports show them in percent). Edge cases MissionBench leaves open:
- a mission whose start is already at the goal (d_0 = 0) has no progress to measure: unless
  it succeeded (MP 1, as every success), its MP is NaN and ``unscored`` is 1, so it is left
  out of the MP mean and counted, never averaged in as −1 or 0; SR, OSR, Eff and CR count;
- a path with no translation has OSR from the start point alone and MP 0 (unless it
  succeeded, e.g. by reporting from where it started);
- an episode of no steps (an error before the first action) has CR NaN;
- a patrol has no OSR (its goal is the route's end, which for a perimeter is its start), so
  OSR and Δ are NaN for patrols: coverage is what MP (the route IoU) measures.
"""

from __future__ import annotations

import math

from sortie.core.records_io import Trajectory
from sortie.metrics.patrol import patrol_iou

OSR_RADII = (5.0, 10.0, 20.0)
"""Distances (metres, 3D) at which the goal counts as reached somewhere along the path."""


def score_aerial(trajectory: Trajectory) -> dict[str, float]:
    """Return every aerial metric of one episode (NaN where a metric does not apply)."""
    header, footer, facts = trajectory.header, trajectory.footer, trajectory.footer.facts
    mission = header.episode.mission
    goal = mission["goal"][:3]
    positions = [list(header.episode.start.position())] + [s.pose.position()
                                                            for s in trajectory.steps]
    success = float(footer.outcome == "success")
    closest = min(math.dist(p, goal) for p in positions)
    budget = float(facts.get("step_budget") or footer.steps or 1)
    steps = len(trajectory.steps)
    collided = sum(1 for s in trajectory.steps if s.collisions or _touched(s.events))
    mp, unscored = _progress(mission, positions, facts, success)
    metrics = {
        "sr": success, "mp": mp, "unscored": unscored,
        **{f"osr{r:g}": float(closest <= r) for r in OSR_RADII},
        "eff": 1.0 - steps / budget if budget else math.nan,
        "cr": collided / steps if steps else math.nan,
        "steps": float(steps), "collisions": float(collided),
        "closest": closest, "final_distance": math.dist(positions[-1], goal),
        "clamped": float(sum(1 for s in trajectory.steps for e in s.events
                             if e.kind == "clamped")),
        "invalid_actions": float(sum(1 for s in trajectory.steps for e in s.events
                                     if e.kind == "invalid_action")),
    }  # fmt: skip
    if "patrol" in mission.get("types", ()):
        metrics.update({f"osr{r:g}": math.nan for r in OSR_RADII})
    metrics["gap"] = metrics["osr5"] - success
    verdict = facts.get("verdict") or {}
    metrics["judge_score"] = float(verdict.get("score", math.nan))
    return metrics


def _progress(mission: dict, positions: list, facts: dict, success: float) -> tuple[float, float]:
    """Return (MP, unscored): patrols use the route IoU; others the closing of the distance."""
    if "patrol" in mission.get("types", ()):
        iou = patrol_iou(positions, mission.get("patrol", []))
        return (1.0 if success else iou), float(math.isnan(iou))
    d0 = math.dist(positions[0], mission["goal"][:3])
    if d0 <= 1e-9:
        return (1.0 if success else math.nan), float(not success)
    if success:
        return 1.0, 0.0
    return min(max((d0 - math.dist(positions[-1], mission["goal"][:3])) / d0, 0.0), 1.0), 0.0


def _touched(events: list) -> bool:
    return any(e.kind == "contact" for e in events)
