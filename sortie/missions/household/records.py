"""Household records: subtask verbs, the executor's error codes, and one planner round as stored.

A household episode is a sequence of planner rounds. In each round the planner names one
subtask (a verb, a target, for ``put`` a place) and the skill that should carry it out; the
executor checks it, runs the skill (retrying some verbs) and answers with feedback. Every
round is kept in its step record as a ``RoundRecord``: the metrics (docs/household.md) read
nothing else.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Self

from pydantic import Field, model_validator

from sortie.core.episode import Record
from sortie.core.records import StepPart

TEXT = 500
"""Longest target, place, skill or feedback text kept in a record."""
Text = Annotated[str, Field(max_length=TEXT)]
Point = tuple[float, float, float]


_ARTICLES = re.compile(r"^(the|a|an|some|my|your)\s+")


def normalise(text: str) -> str:
    """Return a name as names are compared: lower case, single spaces, no leading article.

    Underscores count as spaces, so ``coffee_table`` and ``the Coffee  table`` are one name.
    """
    words = " ".join(text.lower().replace("_", " ").split())
    return _ARTICLES.sub("", words)


class Verb(StrEnum):
    """The subtask actions a household planner may name."""

    GO_TO = "go_to"
    PICK = "pick"
    PUT = "put"
    OPEN = "open"
    CLOSE = "close"
    END = "end"


class ErrorCode(StrEnum):
    """Why the executor refused or failed a subtask (docs/household.md, Rules: error codes)."""

    L1 = "L1"
    """Logic: the hand is full (pick, open or close while holding something)."""
    L2 = "L2"
    """Logic: the hand is empty (put with nothing held)."""
    L3 = "L3"
    """Logic: the container is closed (pick from or put into a closed container)."""
    L4 = "L4"
    """Logic: the target cannot be interacted with that way."""
    D1 = "D1"
    """Distance: the target is farther than the reach (2 m)."""
    D2 = "D2"
    """Distance: the target is too close (under 0.1 m) for the arm to stretch."""
    F1 = "F1"
    """Format: the action or the skill is not in the offered list."""
    F2 = "F2"
    """Format: the target (or place) does not exist, or the skill cannot recognise it."""
    E1 = "E1"
    """Execution: the skill failed three times."""
    E2 = "E2"
    """Execution: a put timed out and the object is no longer held."""
    E3 = "E3"
    """Execution: the skill timed out."""


ERROR_KINDS: dict[str, str] = {"L": "logic", "D": "distance", "F": "format", "E": "execution"}
"""The four kinds of error, by the code's first letter."""
ERROR_MEANINGS: dict[ErrorCode, str] = {
    ErrorCode.L1: "hand full",
    ErrorCode.L2: "hand empty",
    ErrorCode.L3: "container closed",
    ErrorCode.L4: "cannot be interacted with that way",
    ErrorCode.D1: "target farther than 2 m",
    ErrorCode.D2: "target closer than 0.1 m",
    ErrorCode.F1: "action or skill not offered",
    ErrorCode.F2: "target or place unknown or unseen",
    ErrorCode.E1: "skill failed three times",
    ErrorCode.E2: "put timed out, object lost",
    ErrorCode.E3: "skill timed out",
}
"""What each code means in a few words, for reports (the members' docstrings say more)."""


def error_kind(code: ErrorCode) -> str:
    """Return the kind of an error code: ``logic``, ``distance``, ``format`` or ``execution``."""
    return ERROR_KINDS[code.value[0]]


class RoundStatus(StrEnum):
    """How a planner round ended."""

    SUCCESS = "success"
    FAILURE = "failure"
    END = "end"
    """The planner issued ``end``: nothing was executed."""
    UNRECORDED = "unrecorded"
    """Its outcome is not known: an EMMOE log's last subtask when the run stopped without end
    (EMMOE keeps a round's outcome only in the next prompt's history). Never a sortie round's."""


class AttemptRecord(Record):
    """One try of a skill at a subtask, with the base motion it made."""

    skill: Text
    success: bool
    timed_out: bool = False
    """The skill ran out of time (as opposed to failing outright)."""
    path: list[Point] = Field(default_factory=list, max_length=10_000)
    """The base's positions along the motion of this attempt (start and waypoints)."""
    seconds: float = Field(default=0.0, ge=0.0)
    """Simulated seconds the attempt took (motion at the base's speed, manipulation time)."""


class RoundRecord(StepPart):
    """One planner round as stored: the subtask asked for, how it was resolved and what came of it.

    ``action``, ``target``, ``place`` and ``skill`` are the planner's words as given; ``verb``,
    ``target_object`` and ``place_object`` are what the executor made of them (None where it
    could not: an unknown action, an object that does not exist).
    """

    round: int = Field(ge=1)
    action: Text
    target: Text = ""
    place: Text | None = None
    skill: Text = ""
    verb: Verb | None = None
    target_object: Text | None = None
    place_object: Text | None = None
    status: RoundStatus
    code: ErrorCode | None = None
    feedback: Text = ""
    attempts: list[AttemptRecord] = Field(default_factory=list, max_length=10)
    inventory: list[Text] = Field(default_factory=list, max_length=10)
    """What the robot holds after the round."""

    @property
    def succeeded(self) -> bool:
        """Return whether the subtask was carried out (``end`` is not a carried-out subtask)."""
        return self.status is RoundStatus.SUCCESS

    @property
    def failed(self) -> bool:
        """Return whether the subtask was refused or failed."""
        return self.status is RoundStatus.FAILURE

    def path(self) -> list[tuple[float, float, float]]:
        """Return the base's positions along every attempt's motion, in order."""
        return [point for attempt in self.attempts for point in attempt.path]

    def verdict(self) -> str:
        """Return how the round ended: its status and error code."""
        return f"round {self.status.value} ({self.code or 'no code'})"


# --- the task an episode carries (EpisodeSpec.mission of a household episode) ------------------
MAX_ROUNDS = 100
"""Largest round budget a suite may ask for (EMMOE's is 20)."""


class TaskAttribute(StrEnum):
    """The five kinds of household task; one task may have several."""

    SHORT = "short"
    LONG = "long"
    """At least 10 subtasks in the expert's plan."""
    OPEN_ENDED = "open_ended"
    """Several outcomes are right: more than one keypath."""
    LOGICAL = "logical"
    """The instruction is vague: what to do must be inferred."""
    HUMAN_STYLE = "human_style"
    """The instruction is conversational."""


class Split(StrEnum):
    """Which part of a suite a task belongs to."""

    TRAIN = "train"
    TEST = "test"


class ObjectRole(StrEnum):
    """What a named thing of a household scene is."""

    ITEM = "item"
    """A small object the gripper can hold."""
    RECEPTACLE = "receptacle"
    """Furniture items are put on."""
    CONTAINER = "container"
    """Furniture with a door that opens; items are put inside."""
    ROOM = "room"
    """A room: a place to go to."""


class Relation(StrEnum):
    """Goal conditions over the final state."""

    ON = "on"
    INSIDE = "inside"
    OPEN = "open"
    CLOSED = "closed"
    HELD = "held"


class TaskObject(Record):
    """A scene object a task mentions: its kind, its role and the names that mean it."""

    kind: Annotated[str, Field(max_length=100)]
    role: ObjectRole
    names: list[Text] = Field(default_factory=list, max_length=50)
    """Other names of the object (the synonym table): ``["red mug", "red cup"]``."""


class KeyStep(Record):
    """A subtask of a keypath or of the expert's plan: a verb, a target, for ``put`` a place."""

    action: Verb
    target: Text = ""
    place: Text | None = None
    skill: Text | None = None
    """The skill the expert used (expert plans only)."""


class GoalCondition(Record):
    """One condition on the final state: ``object`` is ``relation`` (``place`` for on/inside)."""

    relation: Relation
    object: Text
    place: Text | None = None


class HouseholdTask(Record):
    """The ``mission`` part of a household EpisodeSpec.

    Object names in keypaths, goals and the expert plan are scene object names, each listed in
    ``objects`` with its other names; the metrics match a round to a keypath step through them.
    """

    instruction: Annotated[str, Field(min_length=1, max_length=4000)]
    attributes: list[TaskAttribute] = Field(min_length=1, max_length=5)
    split: Split = Split.TRAIN
    objects: dict[Text, TaskObject] = Field(min_length=1, max_length=500)
    keypaths: list[Annotated[list[KeyStep], Field(min_length=1, max_length=100)]] = Field(
        min_length=1, max_length=50
    )
    """Alternative ordered lists of the subtasks the task needs (``end`` not included)."""
    goals: list[GoalCondition] = Field(default_factory=list, max_length=100)
    expert: list[KeyStep] = Field(min_length=1, max_length=200)
    """The expert's full plan, ``end`` included: its length is PLWSR's L_expert."""
    max_rounds: int = Field(default=20, ge=1, le=MAX_ROUNDS)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        problems = [*self._step_problems(), *goal_problems(self.goals, self.objects)]
        if self.expert[-1].action is not Verb.END:
            problems.append(f"expert.{len(self.expert) - 1}: the expert's plan must end with end")
        if problems:
            raise ValueError("; ".join(problems[:5]))
        return self

    def _step_problems(self) -> list[str]:
        steps = [
            (f"keypaths.{i}.{j}", step)
            for i, path in enumerate(self.keypaths)
            for j, step in enumerate(path)
        ]
        steps += [(f"expert.{j}", step) for j, step in enumerate(self.expert)]
        return [p for where, step in steps for p in step_problems(where, step, self.objects)]


_TARGET_ROLES: dict[Verb, frozenset[ObjectRole]] = {
    Verb.GO_TO: frozenset(ObjectRole),
    Verb.PICK: frozenset({ObjectRole.ITEM}),
    Verb.PUT: frozenset({ObjectRole.ITEM}),
    Verb.OPEN: frozenset({ObjectRole.CONTAINER}),
    Verb.CLOSE: frozenset({ObjectRole.CONTAINER}),
}
_PLACE_ROLES = frozenset({ObjectRole.RECEPTACLE, ObjectRole.CONTAINER})


def step_problems(where: str, step: KeyStep, objects: dict[str, TaskObject]) -> list[str]:
    """Return what is wrong with one keypath or expert step (empty if nothing)."""
    if step.action is Verb.END:
        return [] if not step.target else [f"{where}.target: end takes no target"]
    problems = _role_problems(f"{where}.target", step.target, _TARGET_ROLES[step.action], objects)
    if step.action is Verb.PUT:
        if step.place is None:
            return [*problems, f"{where}.place: put needs a place"]
        problems += _role_problems(f"{where}.place", step.place, _PLACE_ROLES, objects)
    elif step.place is not None:
        problems.append(f"{where}.place: only put takes a place, not {step.action.value}")
    return problems


def goal_problems(goals: list[GoalCondition], objects: dict[str, TaskObject]) -> list[str]:
    """Return what makes a task's goal conditions unknown or impossible (empty if nothing)."""
    problems: list[str] = []
    located: dict[str, int] = {}
    states: dict[str, tuple[int, Relation]] = {}
    for i, goal in enumerate(goals):
        problems += _goal_problems(f"goals.{i}", goal, objects)
        if goal.relation in (Relation.OPEN, Relation.CLOSED):
            if goal.object in states and states[goal.object][1] is not goal.relation:
                problems.append(
                    f"goals.{i}: {goal.object} cannot be both open and closed "
                    f"(goals.{states[goal.object][0]})"
                )
            states[goal.object] = (i, goal.relation)
        elif goal.object in located:
            problems.append(
                f"goals.{i}: {goal.object} already has a place (goals.{located[goal.object]})"
            )
        else:
            located[goal.object] = i
    held = [g.object for g in goals if g.relation is Relation.HELD]
    if len(held) > 1:
        problems.append(f"goals: one gripper cannot hold {', '.join(held)}")
    return problems


def _goal_problems(where: str, goal: GoalCondition, objects: dict[str, TaskObject]) -> list[str]:
    if goal.relation in (Relation.OPEN, Relation.CLOSED):
        roles = frozenset({ObjectRole.CONTAINER})
        problems = _role_problems(f"{where}.object", goal.object, roles, objects)
        return problems + (
            [f"{where}.place: {goal.relation.value} takes no place"] * bool(goal.place)
        )
    problems = _role_problems(f"{where}.object", goal.object, frozenset({ObjectRole.ITEM}), objects)
    if goal.relation is Relation.HELD:
        return problems + ([f"{where}.place: held takes no place"] * bool(goal.place))
    role = ObjectRole.RECEPTACLE if goal.relation is Relation.ON else ObjectRole.CONTAINER
    if goal.place is None:
        return [*problems, f"{where}.place: {goal.relation.value} needs a place"]
    return problems + _role_problems(f"{where}.place", goal.place, frozenset({role}), objects)


def _role_problems(
    where: str, name: str, roles: frozenset[ObjectRole], objects: dict[str, TaskObject]
) -> list[str]:
    if name not in objects:
        shown = ", ".join(sorted(objects)[:8])
        return [f"{where}: unknown object {name!r} (the task's objects: {shown})"]
    role = objects[name].role
    if role not in roles:
        allowed = " or ".join(sorted(r.value for r in roles))
        return [f"{where}: {name!r} is a household {role.value}, expected: {allowed}"]
    return []


def history_line(record: RoundRecord) -> str:
    """Return one round as EMMOE writes it: ``(k) Action, obj[, place] (success|fail)``."""
    words = ", ".join(w for w in (record.action, record.target, record.place or "") if w)
    outcome = {RoundStatus.SUCCESS: "success", RoundStatus.FAILURE: "fail"}.get(
        record.status, record.status.value
    )
    skill = f" - skill: {record.skill}" if record.skill else ""
    return f"({record.round}) {words} ({outcome}){skill}"
