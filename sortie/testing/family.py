"""A tiny mission family for tests: walk to a named object (``pointgoal``), in one file.

It exists to prove that a family plugs in through its descriptor alone: registered with one
line (``FAMILIES.override("pointgoal", "sortie.testing.family:POINTGOAL")`` in a test, or
``FAMILIES.add`` in a plug-in), it runs through ``sortie run``, ``sortie report`` (tables and
HTML), the gymnasium registry and the agent server without a change to a generic file. How
reports show it is a report descriptor registered beside it (``REPORTS.override`` in the test:
this layer may not import the report layer), or without one the default. Its rules: reach
within ``radius`` metres (times the ``reach_scale`` setting) of the target before the budget
runs out; one stage, ``S1 reach``; invalid actions cost a step.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from pydantic import Field, ValidationError

from sortie.backends.base import Backend, StepOutcome
from sortie.core.actions import Action, Move
from sortie.core.episode import EpisodeSpec, Name, Placement, Record, WorldSpec
from sortie.core.errors import ConfigError
from sortie.core.observation import (
    ActionLimits,
    Brief,
    Event,
    EventKind,
    MissionObservation,
    Sensor,
)
from sortie.core.pose import Pose
from sortie.core.step_lines import StepDraft
from sortie.core.trajectory import Trajectory
from sortie.metrics.aggregate import ERROR, errored_metrics, is_error
from sortie.missions.family import Family, FamilySettings
from sortie.missions.gym_base import MissionEnv, env_settings
from sortie.missions.runtime import Clock, MissionRuntime, camera_of
from sortie.missions.stages import Stage
from sortie.sim.camera import CameraSpec

MAX_TURN, MAX_SPEED = 45.0, 1.5
METRICS = ("sr", "steps")


class PointGoalData(Record):
    """The ``mission`` part of a pointgoal episode."""

    target: Name
    radius: float = Field(gt=0, le=10)
    budget_s: float = Field(gt=0, le=600)


def pointgoal_data(spec: EpisodeSpec) -> PointGoalData:
    """Return the validated mission data of ``spec``, or raise naming the episode."""
    try:
        return PointGoalData.model_validate(spec.mission)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(map(str, first["loc"]))
        raise ConfigError(f"episode {spec.episode_id}: mission.{where}: {first['msg']}") from None


class PointGoalSettings(FamilySettings):
    """How close counts as reached."""

    reach_scale: float = Field(
        default=1.0, gt=0, le=10, description="multiplies each episode's radius"
    )


class PointGoalMission(MissionRuntime):
    """Walk to within reach of the target object."""

    family = "pointgoal"

    def __init__(
        self,
        backend: Backend,
        clock: Clock | str = Clock.SIM,
        settings: PointGoalSettings | None = None,
        control_period: float = 0.2,
    ) -> None:
        """Create the rules over ``backend`` (any walker) with ``settings`` (None: defaults)."""
        super().__init__(backend, clock, control_period)
        self.settings = settings or PointGoalSettings()
        self.reach_scale = self.settings.reach_scale

    def _setup(self, spec: EpisodeSpec) -> tuple[list[Stage], Brief]:
        data = pointgoal_data(spec)
        reach = data.radius * self.reach_scale
        text = f"Walk to the {data.target}."
        stage = Stage(
            "S1", "reach", text, data.target, lambda: self._distance(data.target) <= reach
        )
        brief = Brief(
            self.family,
            spec.level,
            text,
            stages=(("S1", text),),
            control_period=self.control_period,
            budget_s=data.budget_s,
            limits=ActionLimits(max_turn=MAX_TURN, max_speed=MAX_SPEED),
            camera=camera_of(self.backend),
        )
        return [stage], brief

    def _act(self, action: Action) -> tuple[StepOutcome, list[Event]]:
        if isinstance(action, Move) and _within_limits(action):
            return self.backend.step(action), []
        problem = f"{action!r} is not a Move within {MAX_TURN}° and {MAX_SPEED} m/s"
        return self.backend.step(Move()), [Event(EventKind.INVALID_ACTION, None, problem)]

    def _failure_reason(self) -> str:
        return "budget_exhausted"

    def _facts(self) -> dict[str, Any]:
        return {"reached": self.tracker.all_done}


def _within_limits(move: Move) -> bool:
    turn, speed = move.turn, move.speed
    finite = math.isfinite(turn) and math.isfinite(speed)
    return finite and abs(turn) <= MAX_TURN and abs(speed) <= MAX_SPEED


def score_pointgoal(trajectory: Trajectory) -> dict[str, float]:
    """Return SR (reached) and steps; an errored episode is not scored."""
    footer = trajectory.footer
    if is_error(footer.outcome, footer.failure_reason):
        return errored_metrics(METRICS)
    return {ERROR: 0.0, "sr": float(footer.facts.get("reached", False)), "steps": footer.steps}


class PointGoalEnv(MissionEnv[PointGoalMission]):
    """Pointgoal episodes as a gymnasium env: depth in, (turn, speed) out."""

    family = "pointgoal"
    max_depth = 20.0
    eye_height = 1.6

    def __init__(
        self, episodes: Sequence[EpisodeSpec] | None = None, reach_scale: float | None = None
    ) -> None:
        """Create the env over ``episodes`` on the embedded simulator."""
        settings = env_settings(PointGoalSettings, self.family, reach_scale=reach_scale)
        super().__init__(
            episodes,
            None,
            lambda backend: PointGoalMission(backend, settings=settings),
            "walker",
            CameraSpec(32, 32),
            ("depth",),
            None,
            None,
        )

    def _budget(self, episode: EpisodeSpec) -> float:
        return pointgoal_data(episode).budget_s

    def _own_spaces(self) -> dict[str, spaces.Space[Any]]:
        return {}

    def _own_observation(self, observation: MissionObservation) -> dict[str, Any]:
        return {}

    def _action_space(self) -> spaces.Dict:
        box = spaces.Box(
            np.array([-MAX_TURN, -MAX_SPEED], np.float32),
            np.array([MAX_TURN, MAX_SPEED], np.float32),
        )
        return spaces.Dict({"move": box})

    def _to_action(self, action: dict[str, Any]) -> Action:
        turn, speed = (float(v) for v in action["move"])
        return Move(turn, speed)

    def _reward(self, before: Mapping[str, str], draft: StepDraft) -> float:
        return float(self.mission.tracker.all_done)

    def _ran_out(self) -> bool:
        return self.mission.done and not self.mission.tracker.all_done


class ForwardAgent:
    """Walks straight ahead at 1 m/s: enough for a target in front of the start."""

    name = "forward"
    families = frozenset({"pointgoal"})
    sensors: frozenset[Sensor] = frozenset()

    def reset(self, brief: Brief, seed: int) -> None:
        """Nothing to remember."""

    def act(self, observation: MissionObservation) -> Action:
        """Step forward."""
        return Move(0.0, 1.0)


def pointgoal_episode(
    episode_id: str = "pointgoal/0", ahead: float = 3.0, budget_s: float = 20.0
) -> EpisodeSpec:
    """Return an episode in an empty room: a stretcher ``ahead`` metres in front of the start."""
    return EpisodeSpec(
        episode_id=episode_id,
        family="pointgoal",
        level="near" if ahead < 5 else "far",
        world=WorldSpec(builder="flexible_room", seed=3, params={"size": 14, "clutter": 0.0}),
        start=Pose(-4.0, 0.0, 0.0, 0.0),
        placements=[
            Placement(asset="stretcher", name="stretcher", pose=Pose(-4.0 + ahead, 0.0, 0.0, 90.0))
        ],
        targets={"goal": "stretcher"},
        mission={"target": "stretcher", "radius": 1.5, "budget_s": budget_s},
    )


POINTGOAL = Family(
    name="pointgoal",
    runtime=f"{__name__}:PointGoalMission",
    check=pointgoal_data,
    settings=PointGoalSettings,
    scorer=f"{__name__}:score_pointgoal",
    columns=METRICS,
    metrics=f"{__name__}:METRICS",
    body="walker",
    needs_interaction=False,
    env=f"{__name__}:PointGoalEnv",
    actions=(Move,),
)
"""The descriptor; the test registers it, nothing else does."""
