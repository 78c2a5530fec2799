"""What an aerial episode carries beyond the common EpisodeSpec (docs/aerial.md, Rules)."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Annotated, Any, Self

from pydantic import Field, model_validator

from sortie.core.episode import MAX_COORDINATE, EpisodeSpec, Name, PoseField, Record
from sortie.core.errors import ConfigError
from sortie.core.pose import Pose, wrap_degrees
from sortie.missions.aerial.vocabulary import TaskActionKind

Coordinate = Annotated[float, Field(ge=-MAX_COORDINATE, le=MAX_COORDINATE)]
Point = Annotated[list[Coordinate], Field(min_length=3, max_length=3)]
TEXT_LENGTH = 4000
MAX_STEPS = 1000
"""Largest step budget a suite may ask for (MissionBench uses 20 and 50)."""


class MissionType(StrEnum):
    """MissionBench's four mission types; a mission may carry two."""

    REPORTING = "reporting"
    INSPECTION = "inspection"
    MANIPULATION = "manipulation"
    PATROL = "patrol"


class AnswerKind(StrEnum):
    """What an expected answer is, which decides how the exact judge normalises it."""

    NUMBER = "number"
    PLATE = "plate"
    COLOUR = "colour"
    LABEL = "label"
    TEXT = "text"


CAMERA: dict[str, Any] = {"width": 256, "height": 256, "hfov": 90.0, "pitch": -45.0}
"""MissionBench's camera: 256² pixels, 90° across, pitched 45° down (every aerial run uses it)."""

STEP_BUDGETS = {MissionType.PATROL: 50}
"""T_max per type; every other type gets DEFAULT_STEPS. A two-type mission gets the larger."""
DEFAULT_STEPS = 20


class AerialData(Record):
    """The ``mission`` part of an aerial EpisodeSpec, validated by this family."""

    instruction: str = Field(min_length=1, max_length=TEXT_LENGTH)
    """The one high-level instruction the agent is given."""
    types: list[MissionType] = Field(min_length=1, max_length=2)
    target: Name | None = None
    """The scene object the mission is about (what to report on, inspect or act at)."""
    goal: PoseField
    """An observation-ready pose ``[x, y, z, yaw]``: the target centred in the camera."""
    answer: str | None = Field(default=None, max_length=TEXT_LENGTH)
    """Expected report (reporting missions, and inspections that ask for one)."""
    answer_kind: AnswerKind = AnswerKind.TEXT
    task_action: TaskActionKind | None = None
    """The action a manipulation mission must execute at the goal."""
    patrol: list[Point] = Field(default_factory=list, max_length=10_000)
    """Reference path of a patrol mission, ``[x, y, z]`` points."""
    max_steps: int | None = Field(default=None, ge=1, le=MAX_STEPS)
    """T_max; None takes the type's default (50 for patrol, else 20)."""
    max_move: float = Field(gt=0, le=MAX_COORDINATE)
    """d_max: the largest translation per step, ¼ of the start–goal distance at generation (a
    run's ``-F max_move`` replaces it)."""
    max_turn: float = Field(default=30.0, gt=0, le=180)
    axis_tolerance: float = Field(default=5.0, gt=0, le=MAX_COORDINATE)
    """τ_d: the goal counts as reached within this many metres on each axis."""
    yaw_tolerance: float = Field(default=15.0, gt=0, le=180)
    show_pose: bool = False
    """Whether the agent is told its absolute pose each step (``MissionObservation.pose``,
    exact and in the episode's frame, whatever sensors the agent declares)."""

    @model_validator(mode="after")
    def _complete(self) -> Self:
        """Refuse missions whose types lack what their success rule needs."""
        types = set(self.types)
        if len(types) != len(self.types):
            raise ValueError(f"types {[t.value for t in self.types]} repeat a type")
        if MissionType.REPORTING in types and not self.answer:
            raise ValueError("a reporting mission needs an expected answer")
        if MissionType.MANIPULATION in types and self.task_action in (None, TaskActionKind.DONE):
            raise ValueError(
                "a manipulation mission needs a task action: land, drop_payload or collect_sample"
            )
        if MissionType.PATROL in types and len(self.patrol) < 2:
            raise ValueError(
                f"a patrol needs a reference path of at least 2 points, got {len(self.patrol)}"
            )
        return self

    @property
    def step_budget(self) -> int:
        """Return T_max: the given one, or the largest default of the mission's types."""
        return self.max_steps or max(STEP_BUDGETS.get(t, DEFAULT_STEPS) for t in self.types)

    def at_goal(self, position: Sequence[float]) -> bool:
        """Return whether ``position`` is within τ_d of the goal position on every axis."""
        goal = self.goal.position()
        return all(abs(a - b) <= self.axis_tolerance for a, b in zip(position, goal, strict=True))

    def at_goal_pose(self, pose: Pose) -> bool:
        """Return whether ``pose`` is at the goal on every axis and within τ_yaw of its heading."""
        turn = wrap_degrees(pose.yaw - self.goal.yaw)
        return self.at_goal(pose.position()) and abs(turn) <= self.yaw_tolerance


def aerial_data(spec: EpisodeSpec) -> AerialData:
    """Return the validated aerial part of ``spec``, or raise naming the episode and field."""
    from pydantic import ValidationError

    try:
        return AerialData.model_validate(spec.mission)
    except ValidationError as error:
        problems = "; ".join(
            f"mission.{'.'.join(map(str, e['loc']))}: {e['msg']}".rstrip(".")
            if e["loc"]
            else f"mission: {e['msg']}"
            for e in error.errors()
        )
        raise ConfigError(f"episode {spec.episode_id}: {problems}") from None
