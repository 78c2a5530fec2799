"""The keys of human play: one key press is one action, sized by the mission's limits."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sortie.core.actions import Action, FlightPrimitive, Fly, Interact, Interaction, Move
from sortie.core.observation import ActionLimits
from sortie.missions.aerial.vocabulary import TaskAction, TaskActionKind
from sortie.missions.household.vocabulary import Subtask
from sortie.missions.registry import FAMILIES
from sortie.remote.wire import WireError

SCALES = (0.25, 0.5, 0.75, 1.0)
"""A drone's magnitude as a share of its limit (keys 1 to 4 on the page)."""


@dataclass(frozen=True, slots=True)
class Binding:
    """A key, what the page says it does, and the action it makes (scale, report) -> action."""

    key: str
    label: str
    make: Callable[[float, str | None], Action]


def walker_keys(limits: ActionLimits) -> list[Binding]:
    """Return the walker's keys: walk, turn 15° or the limit, grab, drop, open a door, wait."""
    speed, turn = limits.max_speed or 1.0, limits.max_turn
    return [
        Binding("ArrowUp", f"walk forward {speed:g} m/s", lambda s, r: Move(0.0, speed)),
        Binding("ArrowDown", f"walk back {speed:g} m/s", lambda s, r: Move(0.0, -speed)),
        Binding("ArrowLeft", "turn left 15°", lambda s, r: Move(15.0, 0.0)),
        Binding("ArrowRight", "turn right 15°", lambda s, r: Move(-15.0, 0.0)),
        Binding("q", f"turn left {turn:g}°", lambda s, r: Move(turn, 0.0)),
        Binding("e", f"turn right {turn:g}°", lambda s, r: Move(-turn, 0.0)),
        Binding("g", "grab", lambda s, r: Interact(Interaction.GRAB)),
        Binding("x", "drop", lambda s, r: Interact(Interaction.DROP)),
        Binding("o", "open door", lambda s, r: Interact(Interaction.OPEN_DOOR)),
        Binding(" ", "wait one step", lambda s, r: Move()),
    ]


_FLIGHT = (
    ("w", FlightPrimitive.FORWARD),
    ("s", FlightPrimitive.BACKWARD),
    ("a", FlightPrimitive.LEFT),
    ("d", FlightPrimitive.RIGHT),
    ("r", FlightPrimitive.UP),
    ("f", FlightPrimitive.DOWN),
    ("q", FlightPrimitive.TURN_LEFT),
    ("e", FlightPrimitive.TURN_RIGHT),
)
_TASKS = (
    ("l", TaskActionKind.LAND),
    ("p", TaskActionKind.DROP_PAYLOAD),
    ("c", TaskActionKind.COLLECT_SAMPLE),
    ("Enter", TaskActionKind.DONE),
)


def drone_keys(limits: ActionLimits) -> list[Binding]:
    """Return the drone's keys: the eight primitives (magnitude: limit × scale), task actions."""
    move, turn = limits.max_move or 1.0, limits.max_turn
    keys = [_fly(key, primitive, move, turn) for key, primitive in _FLIGHT]
    return keys + [_task(key, kind) for key, kind in _TASKS]


def _fly(key: str, primitive: FlightPrimitive, move: float, turn: float) -> Binding:
    turning = primitive in (FlightPrimitive.TURN_LEFT, FlightPrimitive.TURN_RIGHT)
    limit, unit = (turn, "°") if turning else (move, " m")
    label = f"{primitive.value.replace('_', ' ')} (up to {limit:g}{unit})"
    return Binding(key, label, lambda s, r: Fly(primitive, round(limit * s, 3), r or None))


def _task(key: str, kind: TaskActionKind) -> Binding:
    label = kind.value.replace("_", " ") + (
        " (ends the flight)" if kind.value in ("land", "done") else ""
    )
    return Binding(key, label, lambda s, r: TaskAction(kind, r or None))


def accepts(family: str, kind: type[Action]) -> bool:
    """Return whether ``family``'s missions take actions of ``kind`` (its descriptor says)."""
    return family in FAMILIES and kind in FAMILIES.get(family).actions


def keys_for(family: str, limits: ActionLimits) -> dict[str, Binding]:
    """Return the family's key bindings by key: flight keys, walking keys, or none.

    A family of subtasks has none: its page has a form.
    """
    if accepts(family, Subtask) or not (accepts(family, Fly) or accepts(family, Move)):
        return {}
    keys = drone_keys(limits) if accepts(family, Fly) else walker_keys(limits)
    return {binding.key: binding for binding in keys}


def action_for(
    bindings: dict[str, Binding], key: str, scale: float = 1.0, report: str | None = None
) -> Action:
    """Return the action of a key press.

    Raises:
        WireError: (422) a key with no binding, or a scale not among ``SCALES``.
    """
    if key not in bindings:
        known = ", ".join(repr(k) for k in bindings)
        raise WireError(422, "invalid_action", f"key {key!r} does nothing here; keys: {known}")
    if scale not in SCALES:
        raise WireError(422, "invalid", f"scale {scale!r}; allowed: {SCALES}")
    return bindings[key].make(scale, report)
