"""What a backend reports after each reset and step."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import KW_ONLY, dataclass, field
from enum import StrEnum

import numpy as np
from numpy.typing import NDArray

from sortie.core.pose import Pose
from sortie.core.vocabulary import WORDS


class Sensor(StrEnum):
    """What an agent can sense each step: a camera's images, or the body's own pose."""

    RGB = "rgb"
    DEPTH = "depth"
    SEMANTIC = "semantic"
    POSE = "pose"
    """Position and heading (as habitat-lab's GPS and compass): the mission gives it, not the
    renderer, as the run's ``PoseSettings`` say (``sortie.core.run_config``)."""


IMAGE_SENSORS = frozenset({Sensor.RGB, Sensor.DEPTH, Sensor.SEMANTIC})
"""The sensors a backend renders; the others are the mission's to give."""


def image_sensors(sensors: Iterable[str]) -> list[str]:
    """Return the image sensors among ``sensors``, sorted (what a backend is asked to render)."""
    return sorted(s for s in set(sensors) if s in IMAGE_SENSORS)


class EventKind(StrEnum):
    """Things that happen in a step and that missions and metrics count (the shared kinds).

    A family adds its own kinds as a ``StrEnum`` in its vocabulary (``sortie.core.vocabulary``).
    """

    CONTACT = "contact"
    DOOR_OPENED = "door_opened"
    DOOR_CLOSED = "door_closed"
    PICKED_UP = "picked_up"
    DROPPED = "dropped"
    INTERACTION_FAILED = "interaction_failed"
    INVALID_ACTION = "invalid_action"


WORDS.add_events(EventKind)


@dataclass(frozen=True, slots=True)
class Event:
    """One event of a step; ``target`` names the object involved, if any.

    ``kind`` is an ``EventKind`` or a kind a family declared.
    """

    kind: StrEnum
    target: str | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Frames:
    """The images rendered for one step; a sensor not asked for is None.

    ``rgb`` is uint8 (H, W, 3); ``depth`` float32 metres along the optical axis (inf where
    nothing was hit); ``semantic`` int32 instance ids (0: nothing, else the object's id).
    """

    rgb: NDArray[np.uint8] | None = None
    depth: NDArray[np.float32] | None = None
    semantic: NDArray[np.int32] | None = None


@dataclass(frozen=True, slots=True)
class Observation:
    """A body's view of the world after a reset or step: images and its own events.

    ``pose`` is here for the harness (records, metrics, oracles); missions decide whether an
    agent may see it.
    """

    frames: Frames
    pose: Pose
    events: tuple[Event, ...] = field(default_factory=tuple)
    holding: str | None = None


@dataclass(frozen=True, slots=True)
class ActionLimits:
    """The largest action a mission accepts in one step; larger ones are clamped or refused.

    Attributes:
        max_turn: degrees per step.
        max_speed: metres per second of a walker, if the family walks.
        max_move: metres per motion primitive of a multirotor (d_max), if the family flies.
        max_steps: the step budget (T_max), if the budget is counted in steps.
    """

    max_turn: float = 30.0
    max_speed: float | None = None
    max_move: float | None = None
    max_steps: int | None = None


@dataclass(frozen=True, slots=True)
class CameraInfo:
    """The agent's camera: image size in pixels, horizontal field of view and pitch (degrees)."""

    width: int
    height: int
    hfov: float
    pitch: float
    """Degrees, negative looking down."""


@dataclass(frozen=True, slots=True)
class Brief:
    """What an agent is told when an episode starts.

    Attributes:
        family: mission family, e.g. ``rescue``.
        level: level or mission type, e.g. ``L3``.
        text: the instruction as one text (stage instructions and clue).
        clue: the clue text alone, if the family has one.
        images: named reference images, e.g. ``{"reference": rgb}``.
        stages: (name, instruction) of every stage, in order.
        control_period: seconds one motion action lasts.
        budget_s: the mission clock budget in seconds.
        semantic_classes: the semantic sensor's label map: instance id -> class name, as a
            segmentation camera's colour table gives it (not where anything is).
        limits: the largest action the mission accepts per step.
        camera: the agent's camera, when the backend says what it is.
        actions: the actions a household planner may name (``go_to``, ``pick``...).
        skills: (name, what it does) of each skill offered to a household planner.
    """

    family: str
    level: str
    text: str
    _: KW_ONLY
    clue: str = ""
    images: dict[str, NDArray[np.uint8]] = field(default_factory=dict)
    stages: tuple[tuple[str, str], ...] = ()
    control_period: float = 0.2
    budget_s: float = 0.0
    semantic_classes: dict[int, str] = field(default_factory=dict)
    limits: ActionLimits = field(default_factory=ActionLimits)
    camera: CameraInfo | None = None
    actions: tuple[str, ...] = ()
    skills: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class MissionObservation:
    """What an agent perceives after each step: its images and its own state.

    Attributes:
        frames: the images the agent asked for.
        carrying: whether the agent holds something.
        events: what happened in the last step (contacts, pick-ups, failed interactions).
        step: steps taken so far.
        clock: mission clock so far, seconds (the clock the budget is counted on).
        time_left: seconds of budget left.
        pose: the body's position and heading, only for an agent that reads the pose sensor
            (``Sensor.POSE``), in the frame and with the noise the run's ``PoseSettings`` say.
    """

    frames: Frames
    carrying: bool
    events: tuple[Event, ...] = ()
    step: int = 0
    clock: float = 0.0
    time_left: float = 0.0
    pose: Pose | None = None

    def kept_images(self) -> dict[str, NDArray[np.uint8]]:
        """Return the RGB images a run records of this observation, by name (``rgb``)."""
        return {} if self.frames.rgb is None else {"rgb": self.frames.rgb}
