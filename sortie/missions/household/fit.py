"""Whether a household task can be carried out in its world (docs/household.md, The world check).

Checked before round one, on the house's starting state: every object the task names is in
the world with the role and kind the task declares; each keypath can be played in order,
with only the steps a plan adds (go to a thing, open a closed container before taking from
or putting into it, pick an item before putting it); and the expert's plan can be played as
written, each step's preconditions holding as the executor checks them (the hand, the
containers, the thing within reach of where the robot went). An impossible task is refused,
never played as an ordinary failure.

Which skills the expert names needs no world: ``skills.expert_skill_problems``, checked at load.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from sortie.core.pose import Pose
from sortie.missions.household.executor import REACH
from sortie.missions.household.house import HELD, House
from sortie.missions.household.names import KIND_SYNONYMS
from sortie.missions.household.records import HouseholdTask, KeyStep, ObjectRole, Verb, normalise


def task_problems(task: HouseholdTask, house: House, start: Pose) -> list[str]:
    """Return what makes ``task`` impossible in ``house`` as it starts (empty if nothing).

    Args:
        task: the episode's task.
        house: the household state of its world at the start.
        start: the robot's starting pose.
    """
    problems = _object_problems(task, house)
    if problems:  # a step over a missing or miscast thing says nothing more
        return problems
    for i, path in enumerate(task.keypaths):
        problems += _play(f"keypaths.{i}", path, _State.of(house, start), house, strict=False)
    return problems + _play("expert", task.expert, _State.of(house, start), house, strict=True)


def _object_problems(task: HouseholdTask, house: House) -> list[str]:
    problems = []
    for name, wanted in task.objects.items():
        thing = house.things.get(name)
        if thing is None:
            problems.append(f"objects.{name}: {name!r} is not in the world")
        elif thing.role is not wanted.role:
            problems.append(
                f"objects.{name}: {name!r} is a {thing.role.value} in the world, "
                f"the task says {wanted.role.value}"
            )
        elif not _same_kind(wanted.kind, thing.kind):
            problems.append(
                f"objects.{name}: {name!r} is of kind {thing.kind} in the world, "
                f"the task says {wanted.kind}"
            )
    return problems


def _same_kind(declared: str, actual: str) -> bool:
    """Return whether the task's kind names the world's (its own words or a synonym)."""
    words = normalise(declared)
    return words == normalise(actual) or KIND_SYNONYMS.get(words) == actual


@dataclass(slots=True)
class _State:
    """The house as a plan plays it: item places, open containers, the hand, the robot's spot.

    ``at`` is where the robot's base stands, (x, y), and what it went to; None where a plan
    cannot know (beside an item on the floor).
    """

    places: dict[str, tuple[str, str | None]]
    open: dict[str, bool]
    at: tuple[float, float] | None
    went: str | None = None
    held: str | None = None
    moved: set[str] = field(default_factory=set)
    """Items put somewhere during the play: where exactly on their place is not known."""

    @classmethod
    def of(cls, house: House, start: Pose) -> _State:
        places = {name: (p.relation, p.place) for name, p in house.places.items()}
        return cls(places, dict(house.open), (start.x, start.y), held=house.held)

    def go_to(self, house: House, name: str) -> None:
        """Stand where the executor's go_to stands for ``name`` (an item: at its furniture)."""
        thing = house.things[name]
        if thing.role is ObjectRole.ITEM:
            relation, host = self.places[name]
            if relation == HELD:
                return
            thing = house.things[host] if host else thing
        self.went = thing.name
        self.at = (thing.approach.x, thing.approach.y) if thing.approach else None


def _play(
    where: str, steps: Sequence[KeyStep], state: _State, house: House, strict: bool
) -> list[str]:
    """Play ``steps`` from ``state``; return the first step that cannot be done.

    ``strict`` plays them as written (the expert's plan); otherwise a step may be preceded by
    the steps a plan adds (a keypath).
    """
    for j, step in enumerate(steps):
        if step.action is Verb.END:
            break
        problem = _do(state, house, step, strict)
        if problem:
            return [f"{where}.{j} ({_words(step)}): {problem}"]
    return []


def _do(state: _State, house: House, step: KeyStep, strict: bool) -> str | None:
    """Carry out one step on ``state``; return why it cannot be done, if it cannot."""
    target = step.target
    if step.action is Verb.GO_TO:
        state.go_to(house, target)
        return None
    if step.action is Verb.PICK:
        return _pick(state, house, target, strict)
    if step.action is Verb.PUT:
        assert step.place is not None  # the task's validation: put has a place
        return _put(state, house, target, step.place, strict)
    return _open_or_close(state, house, target, step.action is Verb.OPEN, strict)


def _pick(state: _State, house: House, item: str, strict: bool) -> str | None:
    if state.held is not None:
        return f"the hand already holds {state.held}"
    relation, host = state.places[item]
    closed = _opened(state, host, strict) if relation == "inside" and host is not None else None
    if closed:
        return closed
    reach = _reach(state, house, item, strict)
    if reach:
        return reach
    state.places[item], state.held = (HELD, None), item
    return None


def _put(state: _State, house: House, item: str, place: str, strict: bool) -> str | None:
    if state.held != item:
        if strict or state.held is not None:
            held = f"the hand holds {state.held}" if state.held else "the hand is empty"
            return f"{item} is not in the hand ({held})"
        problem = _pick(state, house, item, strict)
        if problem:
            return problem
    container = house.things[place].role is ObjectRole.CONTAINER
    closed = _opened(state, place, strict) if container else None
    if closed:
        return closed
    reach = _reach(state, house, place, strict)
    if reach:
        return reach
    state.places[item] = ("inside" if container else "on", place)
    state.held = None
    state.moved.add(item)
    return None


def _opened(state: _State, container: str, strict: bool) -> str | None:
    """Return why ``container`` is in the way (closed, as written), or open it (as planned)."""
    if state.open[container]:
        return None
    if strict:
        return f"{container} is closed (open it first)"
    state.open[container] = True  # a keypath leaves the opening to the plan
    return None


def _open_or_close(
    state: _State, house: House, container: str, opening: bool, strict: bool
) -> str | None:
    if state.open[container] == opening:
        return f"{container} is already {'open' if opening else 'closed'}"
    if strict and state.held is not None:
        return f"the hand holds {state.held} (put it down first)"
    reach = _reach(state, house, container, strict)
    if reach:
        return reach
    state.open[container] = opening
    return None


def _reach(state: _State, house: House, name: str, strict: bool) -> str | None:
    """Return why the robot cannot reach ``name`` from where it stands (the executor's D1).

    A keypath's plan goes to what it acts on; the expert's plan is held to where it went.
    Where the robot or the thing is not known (an item put down during the play), it passes.
    """
    if not strict:
        state.go_to(house, name)
        return None
    if state.at is None or name in state.moved or state.held == name:
        return None
    x, y, _ = house.things[name].position
    distance = math.hypot(x - state.at[0], y - state.at[1])
    if distance <= REACH:
        return None
    where = f"at {state.went}" if state.went else "where it starts"
    return (
        f"{name} is out of reach: {distance:.1f} m from the robot {where}, "
        f"the reach is {REACH:g} m (go to it first)"
    )


def _words(step: KeyStep) -> str:
    place = f", {step.place}" if step.place else ""
    return f"{step.action.value} {step.target}{place}"
