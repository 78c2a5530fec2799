"""Checking candidate rescue episodes in the finished world: distances, doors, an oracle replay.

The finished world (the bare world plus the episode's placements) is built by the same
embedded backend that runs episodes, so the stored distances and the reference path are
exactly what a run sees: the replay uses the run defaults (``sim`` clock, ``assisted``
triggers, run seed 0), so ``sortie run SUITE --agent oracle`` repeats it step for step.
"""

from __future__ import annotations

from dataclasses import dataclass

from sortie.agents.oracle import OracleAgent
from sortie.backends.base import OracleView
from sortie.backends.catalog import DEFAULT_BACKEND, build_backend
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import InvalidPoseError
from sortie.core.records import PluginRef, StepRecord, TrajectoryFooter, TrajectoryHeader
from sortie.generation.rejected import Rejected
from sortie.missions.rescue.mission import RescueMission
from sortie.missions.rescue.spec import LevelRules
from sortie.missions.runtime import MissionRuntime
from sortie.run.episode import run_episode
from sortie.run.jobs import backend_ref, episode_header

DECIMALS = 3
"""Decimals kept in stored positions (millimetres): small files, no loss that matters."""


@dataclass(frozen=True, slots=True)
class Measures:
    """An episode's distances in its finished world (doors open), metres."""

    path_distance: float
    shortest_length: float
    doors_on_path: tuple[str, ...]


class Validator:
    """Measures and replays candidate episodes on one reusable embedded backend."""

    def __init__(self) -> None:
        """Create the backend (no sensors: the oracle needs none)."""
        self.backend = build_backend(DEFAULT_BACKEND, {}, body="walker", sensors=())

    def measure(self, spec: EpisodeSpec, rules: LevelRules) -> Measures:
        """Return the distances of ``spec``, rejecting it if they break ``rules``."""
        try:
            self.backend.reset(spec, 0)
        except InvalidPoseError:  # e.g. a start beside a gate the walker's body overlaps
            raise Rejected("the walker's body does not fit at the start") from None
        oracle = self.backend.oracle_view()
        graph = oracle.nav_graph()
        start = spec.start.position()
        casualty, stretcher = oracle.position_of("casualty"), oracle.position_of("stretcher")
        there = graph.geodesic_distance(start, casualty)
        back = graph.geodesic_distance(casualty, stretcher)
        lo, hi = rules.distance
        if not lo <= there <= hi:
            raise Rejected(f"walking distance {there:.1f} m outside {lo:g}-{hi:g} m")
        if abs(casualty[2] - start[2]) < rules.min_height_change:
            raise Rejected(f"height change under {rules.min_height_change:g} m")
        if back == float("inf"):
            raise Rejected("stretcher unreachable from the casualty")
        doors = graph.doors_on_every_shortest_path(start, casualty) if rules.door_on_path else ()
        if rules.door_on_path and not doors:
            raise Rejected("no closed door on every shortest path")
        return Measures(round(there, DECIMALS), round(there + back, DECIMALS), tuple(doors))

    def replay(self, spec: EpisodeSpec) -> list[list[float]]:
        """Run the oracle on ``spec``; return its positions (the start, then one per step).

        Raises:
            Rejected: if the oracle does not complete the episode.
        """
        return oracle_positions(
            RescueMission(self.backend), self.backend.oracle_view(), oracle_header(spec)
        )


def oracle_header(spec: EpisodeSpec) -> TrajectoryHeader:
    """Return the header a default oracle run of ``spec`` gets (run seed 0, no sensors)."""
    return episode_header(spec, PluginRef(name="oracle"), backend_ref(spec.family))


def oracle_positions(
    runtime: MissionRuntime, view: OracleView, header: TrajectoryHeader
) -> list[list[float]]:
    """Run the oracle (seeing ``view``) through ``header``'s episode; return its positions.

    The list starts with the start position, then holds one position per step.

    Raises:
        Rejected: if the oracle does not complete the episode.
    """
    agent = OracleAgent()
    agent.attach(view)
    recorder = PositionRecorder()
    footer = run_episode(runtime, agent, header, [recorder])
    if footer.outcome != "success":
        raise Rejected(f"oracle failed: {footer.failure_reason}")
    start = header.episode.start
    return [rounded((start.x, start.y, start.z)), *recorder.points]


def rounded(point: tuple[float, float, float]) -> list[float]:
    """Return the point as a list rounded to the millimetre (suite files stay short and stable)."""
    return [round(float(v), DECIMALS) for v in point]


class PositionRecorder:
    """An episode observer keeping only the body's positions (rounded, as suites store them)."""

    def __init__(self) -> None:
        self.points: list[list[float]] = []

    def on_start(self, header: TrajectoryHeader) -> None:
        """Start empty."""
        self.points = []

    def on_step(self, record: StepRecord) -> None:
        """Keep the step's position."""
        self.points.append(rounded((record.pose.x, record.pose.y, record.pose.z)))

    def on_end(self, footer: TrajectoryFooter) -> None:
        """Nothing to finish."""
