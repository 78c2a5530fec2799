"""The actions agents send: ground motion, interactions, flight primitives, task actions.

Actions are frozen records; each mission family declares which kinds it accepts
(``Family.actions``). ``ACTION_TYPES`` names them: records and the wire spell them so.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Interaction(StrEnum):
    """Discrete interactions of a ground agent."""

    GRAB = "grab"
    DROP = "drop"
    OPEN_DOOR = "open_door"


class FlightPrimitive(StrEnum):
    """The eight motion primitives of a multirotor; magnitudes in metres or degrees."""

    FORWARD = "forward"
    BACKWARD = "backward"
    LEFT = "left"
    RIGHT = "right"
    UP = "up"
    DOWN = "down"
    TURN_LEFT = "turn_left"
    TURN_RIGHT = "turn_right"


class TaskActionKind(StrEnum):
    """Task actions of an aerial mission."""

    LAND = "land"
    DROP_PAYLOAD = "drop_payload"
    COLLECT_SAMPLE = "collect_sample"
    DONE = "done"


@dataclass(frozen=True, slots=True)
class Move:
    """Turn by ``turn`` degrees, then move at ``speed`` m/s for one control period.

    ``pitch`` sets the camera pitch in degrees when given, and keeps it when None.
    """

    turn: float = 0.0
    speed: float = 0.0
    pitch: float | None = None


@dataclass(frozen=True, slots=True)
class Interact:
    """Attempt one discrete interaction."""

    kind: Interaction


@dataclass(frozen=True, slots=True)
class Fly:
    """Execute one flight primitive with a magnitude (metres, or degrees for turns).

    ``report`` is what the agent reports with this step (an aerial mission keeps the last one).
    """

    primitive: FlightPrimitive
    magnitude: float
    report: str | None = None


@dataclass(frozen=True, slots=True)
class TaskAction:
    """Execute one task action of an aerial mission, reporting ``report`` with it."""

    kind: TaskActionKind
    report: str | None = None


@dataclass(frozen=True, slots=True)
class Subtask:
    """A household planner's subtask: ``action`` on ``target`` (optionally at ``place``)."""

    action: str
    target: str
    skill: str
    place: str | None = None


@dataclass(frozen=True, slots=True)
class InvalidAction:
    """What an agent produced that could not be read as an action, kept verbatim."""

    raw: str
    error: str


Action = Move | Interact | Fly | TaskAction | Subtask | InvalidAction

ACTION_TYPES: dict[str, type[Action]] = {
    "move": Move,
    "interact": Interact,
    "fly": Fly,
    "task": TaskAction,
    "subtask": Subtask,
    "invalid": InvalidAction,
}
"""The action vocabulary, declared once: each action's ``type`` name in records and on the
wire (``sortie.core.serialize``, ``sortie.remote.wire`` derive theirs from it)."""
TYPE_NAMES: dict[type[Action], str] = {cls: name for name, cls in ACTION_TYPES.items()}
