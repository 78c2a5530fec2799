"""Symbolic household plans: from a state and a keypath to the subtasks that carry it out.

Pure functions over a small state (where each item is, which containers are open, what the
gripper holds, where the robot stands). The oracle plans each round from the state it has
followed through the executor's answers; task generation plans the expert's subtask list the
same way. A plan goes to a thing before acting on it, opens a closed container before taking
from or putting into it, and picks an item before putting it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from sortie.core.errors import ConfigError
from sortie.missions.household.records import ErrorCode, KeyStep, ObjectRole, RoundRecord, Verb

Place = tuple[str, str | None]
"""Where an item is: (``on``/``inside``/``held``/``floor``, the furniture or None)."""


class PlanError(ConfigError):
    """A keypath cannot be planned from the state (e.g. a pick with another item held)."""


@dataclass(frozen=True, slots=True)
class PlanState:
    """What a planner knows: things' roles, item places, open containers, gripper, position."""

    roles: dict[str, ObjectRole]
    places: dict[str, Place]
    open: dict[str, bool]
    held: str | None = None
    at: str | None = None
    """The furniture, room or floor item the robot stands at (None: elsewhere)."""

    def standing(self, name: str) -> str:
        """Return where the robot stands to act on ``name`` (an item: its furniture)."""
        if self.roles[name] is not ObjectRole.ITEM:
            return name
        _, furniture = self.places[name]
        return furniture or name

    def after(self, step: KeyStep) -> PlanState:
        """Return the state once ``step`` has been carried out."""
        places, opened = dict(self.places), dict(self.open)
        if step.action is Verb.GO_TO:
            return replace(self, at=self.standing(step.target))
        if step.action is Verb.PICK:
            places[step.target] = ("held", None)
            return replace(self, places=places, held=step.target)
        if step.action is Verb.PUT:
            assert step.place is not None
            relation = "inside" if self.roles[step.place] is ObjectRole.CONTAINER else "on"
            places[step.target] = (relation, step.place)
            return replace(self, places=places, held=None)
        if step.action in (Verb.OPEN, Verb.CLOSE):
            opened[step.target] = step.action is Verb.OPEN
            return replace(self, open=opened)
        return self

    def observe(self, record: RoundRecord) -> PlanState:
        """Return the state after the executor's answer to one round."""
        if record.code is ErrorCode.E2 and self.held is not None:
            places = {**self.places, self.held: ("floor", None)}
            return replace(self, places=places, held=None, at=None)
        if record.succeeded and record.verb is not None and record.target_object:
            step = KeyStep(
                action=record.verb, target=record.target_object, place=record.place_object
            )
            return self.after(step)
        if record.verb is Verb.GO_TO or record.code in (ErrorCode.D1, ErrorCode.D2):
            return replace(self, at=None)  # a motion stopped short, or the target is out of reach
        return self


def plan(state: PlanState, keypath: Iterable[KeyStep]) -> list[KeyStep]:
    """Return the subtasks that carry out ``keypath`` from ``state`` (``end`` not included)."""
    steps: list[KeyStep] = []
    for goal in keypath:
        for step in _steps_for(state, goal):
            steps.append(step)
            state = state.after(step)
    return steps


def _steps_for(state: PlanState, goal: KeyStep) -> list[KeyStep]:
    if goal.action is Verb.GO_TO:
        return [] if state.at == state.standing(goal.target) else [_go(goal.target)]
    if goal.action is Verb.PICK:
        return _pick(state, goal.target)
    if goal.action is Verb.PUT:
        assert goal.place is not None
        return _put(state, goal.target, goal.place)
    if goal.action in (Verb.OPEN, Verb.CLOSE):
        if state.open[goal.target] == (goal.action is Verb.OPEN):
            return []
        return [*_reach(state, goal.target), KeyStep(action=goal.action, target=goal.target)]
    return []


def _pick(state: PlanState, item: str) -> list[KeyStep]:
    if state.held == item:
        return []
    if state.held is not None:
        raise PlanError(f"cannot plan pick {item}: the gripper holds {state.held}")
    steps: list[KeyStep] = []
    relation, furniture = state.places[item]
    if relation == "inside" and furniture is not None and not state.open[furniture]:
        for step in [*_reach(state, furniture), KeyStep(action=Verb.OPEN, target=furniture)]:
            steps.append(step)
            state = state.after(step)
    return [*steps, *_reach(state, item), KeyStep(action=Verb.PICK, target=item)]


def _put(state: PlanState, item: str, place: str) -> list[KeyStep]:
    steps = _pick(state, item)
    for step in steps:
        state = state.after(step)
    if state.roles[place] is ObjectRole.CONTAINER and not state.open[place]:
        opening = [*_reach(state, place), KeyStep(action=Verb.OPEN, target=place)]
        for step in opening:
            state = state.after(step)
        steps += opening
    return [*steps, *_reach(state, place), KeyStep(action=Verb.PUT, target=item, place=place)]


def _reach(state: PlanState, name: str) -> list[KeyStep]:
    standing = state.standing(name)
    return [] if state.at == standing else [_go(standing)]


def _go(name: str) -> KeyStep:
    return KeyStep(action=Verb.GO_TO, target=name)


def shortest_plan(state: PlanState, keypaths: Sequence[Sequence[KeyStep]]) -> list[KeyStep]:
    """Return the shortest plan over ``keypaths`` (the first on a tie; unplannable ones skipped).

    Raises:
        PlanError: no keypath can be planned from ``state``.
    """
    plans = []
    for keypath in keypaths:
        try:
            plans.append(plan(state, keypath))
        except PlanError:
            continue
    if not plans:
        raise PlanError("no keypath of the task can be planned from this state")
    return min(plans, key=len)
