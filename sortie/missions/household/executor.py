"""The executor: checks a planner's subtask, runs it with the named skill, answers with feedback.

Checks come before any motion, in a fixed order, each with its code and message
(docs/household.md, Rules: error codes): the action and skill are offered (F1), the hand
allows it (L1, L2: before the names, as EMMOE's executor checks them), the target and place
exist and the skill can recognise them (F2), the containers and the things allow it (L3, L4:
these need the thing, so they come after F2), the target is within reach (D1, D2). Then the
skill runs: ``go_to``, ``pick``, ``open`` and ``close`` are tried up to three times (E1 when
all fail); ``put`` once (E3 on a time-out, E2 when the object fell from the gripper). Every
attempt and its base motion are kept in the round's record.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from sortie.backends.base import Backend, OracleView, SupportsInteraction, SupportsManipulation
from sortie.core.actions import Action, InvalidAction
from sortie.core.pose import Pose
from sortie.missions.household.house import HELD, House, Thing
from sortie.missions.household.names import AmbiguousName, resolve
from sortie.missions.household.records import (
    AttemptRecord,
    ErrorCode,
    HouseholdTask,
    ObjectRole,
    Point,
    RoundRecord,
    RoundStatus,
    Verb,
)
from sortie.missions.household.skills import Profile, Skill, attempt_works
from sortie.missions.household.vocabulary import Subtask

REACH = 2.0
"""Farthest a target may be from the base's centre for the arm to reach it (metres)."""
TOO_CLOSE = 0.1
"""Closest a target may be for the arm to stretch (metres)."""
TRIES = 3
"""Attempts at go_to, pick, open and close before the executor gives up (E1)."""
DROP_CHANCE = 0.3
"""Share of failed puts in which the object falls from the gripper (E2)."""
BASE_SPEED = 0.5
"""Metres per second of the base along its path (for the simulated clock)."""
HAND_SECONDS = {Verb.PICK: 8.0, Verb.PUT: 8.0, Verb.OPEN: 6.0, Verb.CLOSE: 6.0}
"""Simulated seconds of one manipulation attempt."""
_ALIASES = {"goto": "go_to", "go": "go_to", "navigate": "go_to", "pick_up": "pick", "place": "put"}


class Manipulator(Backend, SupportsInteraction, SupportsManipulation, Protocol):
    """A backend with a mobile manipulator: what the executor drives."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """A subtask refused before any motion: its code and message."""

    code: ErrorCode
    message: str


def parse_verb(action: str) -> Verb | None:
    """Return the verb a planner's action word means (``Go to`` -> go_to), or None."""
    word = "_".join(action.lower().strip().replace("-", " ").split())
    word = _ALIASES.get(word, word)
    return Verb(word) if word in Verb._value2member_map_ else None


class Executor:
    """Runs one episode's subtasks over a backend with a mobile manipulator."""

    def __init__(
        self,
        backend: Manipulator,
        oracle: OracleView,
        house: House,
        task: HouseholdTask,
        skills: tuple[Skill, ...],
        profile: Profile,
        seed: int,
    ) -> None:
        """Create the executor.

        Args:
            backend: the simulator (``Backend``, ``SupportsInteraction`` and
                ``SupportsManipulation``).
            oracle: the privileged view the skills plan their motions with.
            house: the household state, kept up to date by the executor.
            task: the episode's task (its objects' other names).
            skills: the skills offered to the planner.
            profile: how reliable the skills are.
            seed: the episode's seed (skill outcomes are drawn from it).
        """
        self.backend, self.oracle, self.house, self.task = backend, oracle, house, task
        self.skills = {s.name: s for s in skills}
        self.profile, self.seed = profile, seed
        self.known: set[str] | None = None
        """Sensor-only: the things the robot has seen (None: privileged, every thing)."""

    # --- one round -------------------------------------------------------------------------
    def run(self, round_: int, action: Action) -> RoundRecord:
        """Check and carry out one subtask; return its record."""
        words = Words.of(action)
        verb = parse_verb(words.action)
        base = RoundRecord(
            round=round_,
            action=words.action,
            target=words.target,
            place=words.place,
            skill=words.skill,
            verb=verb,
            status=RoundStatus.FAILURE,
        )
        if verb is Verb.END:
            return self._done(base, RoundStatus.END, None, "The task has ended.", [])
        refusal, target, place = self._check(verb, words)
        if refusal is not None:
            return self._done(base, RoundStatus.FAILURE, refusal.code, refusal.message, [])
        assert verb is not None and target is not None
        base = base.model_copy(
            update={"target_object": target.name, "place_object": place.name if place else None}
        )
        return self._execute(base, verb, self.skills[words.skill], target, place)

    def _done(
        self,
        base: RoundRecord,
        status: RoundStatus,
        code: ErrorCode | None,
        feedback: str,
        attempts: list[AttemptRecord],
    ) -> RoundRecord:
        held = [self.house.held] if self.house.held else []
        return base.model_copy(
            update={
                "status": status,
                "code": code,
                "feedback": feedback,
                "attempts": attempts,
                "inventory": held,
            }
        )

    # --- checks before motion ----------------------------------------------------------------
    def _check(
        self, verb: Verb | None, words: Words
    ) -> tuple[Refusal | None, Thing | None, Thing | None]:
        if verb is None:
            return (
                _refuse(ErrorCode.F1, f"{words.action!r} is not in the action list"),
                None,
                None,
            )
        if words.skill not in self.skills:
            offered = ", ".join(self.skills)
            message = f"skill {words.skill!r} is not in the skill list ({offered})"
            return _refuse(ErrorCode.F1, message), None, None
        hand = self._hand(verb)
        if hand is not None:
            return hand, None, None
        try:
            target = self._find(words.target)
            place = self._find(words.place or "") if verb is Verb.PUT else None
        except AmbiguousName as ambiguous:
            return _ambiguous(ambiguous), None, None
        if target is None:
            return self._missing(words.target), None, None
        if verb is Verb.PUT and place is None:
            return self._missing(words.place or ""), target, None
        refusal = self._logic(verb, target, place) or self._reach(verb, target, place)
        return refusal, target, place

    def _find(self, words: str) -> Thing | None:
        return resolve(words, self.house.things, self.task.objects, self._distance_to, self.known)

    def _missing(self, words: str) -> Refusal:
        if self.known is not None and self._find_anywhere(words):
            message = f"{words!r} has not been seen, so the skill cannot recognise it"
            return _refuse(ErrorCode.F2, message + ". Please choose another object")
        return _refuse(ErrorCode.F2, f"{words!r} does not exist! Please choose another object")

    def _find_anywhere(self, words: str) -> bool:
        things, objects = self.house.things, self.task.objects
        try:
            return resolve(words, things, objects, self._distance_to) is not None
        except AmbiguousName:
            return True

    def _hand(self, verb: Verb) -> Refusal | None:
        held = self.house.held
        if verb in (Verb.PICK, Verb.OPEN, Verb.CLOSE) and held is not None:
            return _refuse(ErrorCode.L1, f"your hand is full (holding {held}): put it down first")
        if verb is Verb.PUT and held is None:
            return _refuse(ErrorCode.L2, "your hand is empty: there is nothing to put")
        return None

    def _logic(self, verb: Verb, target: Thing, place: Thing | None) -> Refusal | None:
        house = self.house
        if verb is Verb.GO_TO:
            return None
        if verb is Verb.PICK:
            if target.role is not ObjectRole.ITEM:
                return _not_interactable(target, verb)
            closed = house.enclosed(target.name)
            if closed:
                return _refuse(ErrorCode.L3, f"{closed} is closed, you should open it first")
            return None
        if verb is Verb.PUT:
            return self._put_logic(target, place)
        if target.role is not ObjectRole.CONTAINER:
            return _not_interactable(target, verb)
        if house.open[target.name] == (verb is Verb.OPEN):
            state = "open" if verb is Verb.OPEN else "closed"
            return _refuse(ErrorCode.L4, f"{target.name} is already {state}")
        return None

    def _put_logic(self, target: Thing, place: Thing | None) -> Refusal | None:
        assert place is not None
        if target.name != self.house.held:
            return _refuse(
                ErrorCode.L4, f"{target.name} is not in your hand ({self.house.held} is)"
            )
        if place.role not in (ObjectRole.RECEPTACLE, ObjectRole.CONTAINER):
            return _refuse(
                ErrorCode.L4, f"nothing can be put on {place.name}. Please choose another object"
            )
        if place.role is ObjectRole.CONTAINER and not self.house.open[place.name]:
            return _refuse(ErrorCode.L3, f"{place.name} is closed, you should open it first")
        return None

    def _reach(self, verb: Verb, target: Thing, place: Thing | None) -> Refusal | None:
        if verb is Verb.GO_TO:
            return None
        aim = place if verb is Verb.PUT and place is not None else target
        distance = self._distance_to(aim.name)
        if distance > REACH:
            message = f"{aim.name} is far away ({distance:.1f} m, the reach is {REACH:g} m)"
            return _refuse(ErrorCode.D1, message)
        if distance < TOO_CLOSE:
            return _refuse(ErrorCode.D2, f"{aim.name} is too close ({distance:.2f} m)")
        return None

    # --- carrying it out -------------------------------------------------------------------
    def _execute(
        self, base: RoundRecord, verb: Verb, skill: Skill, target: Thing, place: Thing | None
    ) -> RoundRecord:
        rate = skill.rate(verb, target.is_large if verb is not Verb.PUT else True, self.profile)
        tries = 1 if verb is Verb.PUT else TRIES
        attempts: list[AttemptRecord] = []
        for attempt in range(1, tries + 1):
            works, how_far = attempt_works(self.seed, base.round, attempt, rate)
            attempts.append(self._attempt(verb, skill, target, place, works, how_far))
            if attempts[-1].success:
                done = f"{_phrase(verb, target, place)} done"
                return self._done(base, RoundStatus.SUCCESS, None, done, attempts)
        return self._failed(base, verb, skill, attempts, how_far)

    def _failed(
        self,
        base: RoundRecord,
        verb: Verb,
        skill: Skill,
        attempts: list[AttemptRecord],
        how_far: float,
    ) -> RoundRecord:
        if verb is not Verb.PUT:
            message = f"{skill.name} failed {TRIES} times: the subtask is too difficult to perform"
            return self._done(base, RoundStatus.FAILURE, ErrorCode.E1, message, attempts)
        if how_far < DROP_CHANCE:
            item = self.house.held
            assert item is not None
            self.backend.put_down()
            self.house.put(item, None)
            message = f"{skill.name} timed out, and the object is missing: {item} fell"
            return self._done(base, RoundStatus.FAILURE, ErrorCode.E2, message, attempts)
        message = f"{skill.name} timed out"
        return self._done(base, RoundStatus.FAILURE, ErrorCode.E3, message, attempts)

    def _attempt(
        self,
        verb: Verb,
        skill: Skill,
        target: Thing,
        place: Thing | None,
        works: bool,
        how_far: float,
    ) -> AttemptRecord:
        if verb is Verb.GO_TO:
            path, seconds, arrived = self._drive(target, 1.0 if works else how_far)
            done = works and arrived
            return AttemptRecord(
                skill=skill.name, success=done, timed_out=not done, path=path, seconds=seconds
            )
        if works:
            self._manipulate(verb, target, place)
        here = self.backend.pose().position()
        return AttemptRecord(
            skill=skill.name,
            success=works,
            timed_out=not works,
            path=[here],
            seconds=HAND_SECONDS[verb],
        )

    def _manipulate(self, verb: Verb, target: Thing, place: Thing | None) -> None:
        backend, house = self.backend, self.house
        if verb is Verb.PICK:
            backend.pick_up(target.name)
            house.pick(target.name)
        elif verb is Verb.PUT:
            assert place is not None
            backend.put_on(target.name, place.name)
            house.put(target.name, place.name)
        else:
            assert target.door is not None
            backend.set_door(target.door, verb is Verb.OPEN)
            house.open[target.name] = verb is Verb.OPEN

    # --- base motion --------------------------------------------------------------------------
    def _drive(self, target: Thing, share: float) -> tuple[list[Point], float, bool]:
        """Drive ``share`` of the way to the target's standing pose.

        Returns the base's path, the seconds it took and whether the base stands where it
        was headed (a blocked end point leaves it where it was).
        """
        start = self.backend.pose()
        goal = self._standing_pose(target)
        if goal is None:  # the held item: the robot is already there
            return [start.position()], 1.0, True
        route = self.oracle.shortest_path(start.position(), goal.position())
        if not route:
            return [start.position()], 1.0, False
        points, end = _along([start.position(), *route[1:]], share)
        before = points[-2] if len(points) > 1 else start.position()
        yaw = goal.yaw if share >= 1.0 else _heading(before, end, start.yaw)
        landed = self.backend.move_base(Pose(end[0], end[1], end[2], yaw))
        if math.dist(landed.position()[:2], end[:2]) > 0.05:
            return [start.position()], 1.0, False
        return points, 1.0 + _length(points) / BASE_SPEED, True

    def _standing_pose(self, target: Thing) -> Pose | None:
        if target.role is not ObjectRole.ITEM:
            return target.approach
        place = self.house.places[target.name]
        if place.relation == HELD:
            return None
        if place.place is not None:
            return self.house.things[place.place].approach
        here = self.backend.pose()
        x, y, z = self.oracle.position_of(target.name)
        away = math.hypot(here.x - x, here.y - y) or 1.0
        stand = (x + 0.6 * (here.x - x) / away, y + 0.6 * (here.y - y) / away)
        yaw = math.degrees(math.atan2(y - stand[1], x - stand[0]))
        return Pose(stand[0], stand[1], z, yaw)

    def _distance_to(self, name: str) -> float:
        return self.backend.distance_to(name)


@dataclass(frozen=True, slots=True)
class Words:
    """A subtask in the planner's own words (cut to a record's length)."""

    action: str
    target: str = ""
    place: str | None = None
    skill: str = ""

    @classmethod
    def of(cls, action: Action) -> Words:
        """Return the words of a subtask, or of an action that is not one (an F1)."""
        if isinstance(action, Subtask):
            place = action.place[:200] if action.place is not None else None
            return cls(action.action[:200], action.target[:200], place, action.skill[:200])
        raw = action.raw if isinstance(action, InvalidAction) else type(action).__name__
        return cls(raw[:200])


def _refuse(code: ErrorCode, message: str) -> Refusal:
    return Refusal(code, message[0].upper() + message[1:] + ("" if message.endswith(".") else "."))


def _ambiguous(ambiguous: AmbiguousName) -> Refusal:
    message = f"{ambiguous}: name one of them by its scene name. Please choose another object"
    return _refuse(ErrorCode.F2, message)


def _not_interactable(target: Thing, verb: Verb) -> Refusal:
    message = f"{target.name} cannot be used for {verb.value}. Please choose another object"
    return _refuse(ErrorCode.L4, message)


def _phrase(verb: Verb, target: Thing, place: Thing | None) -> str:
    where = (
        f" {'in' if place and place.role is ObjectRole.CONTAINER else 'on'} {place.name}"
        if place
        else ""
    )
    return f"{verb.value.replace('_', ' ').capitalize()} {target.name}{where}"


def _along(points: list[Point], share: float) -> tuple[list[Point], Point]:
    """Return the path cut at ``share`` of its length, and where it ends."""
    if share >= 1.0 or len(points) < 2:
        return points, points[-1]
    left = share * _length(points)
    kept = [points[0]]
    for a, b in zip(points, points[1:], strict=False):
        leg = math.dist(a, b)
        if leg >= left:
            t = left / leg if leg else 0.0
            end = (a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2]))
            kept.append(end)
            return kept, end
        left -= leg
        kept.append(b)
    return kept, kept[-1]


def _length(points: Iterable[Point]) -> float:
    points = list(points)
    return sum(math.dist(a, b) for a, b in zip(points, points[1:], strict=False))


def _heading(a: Point, b: Point, default: float) -> float:
    if math.isclose(a[0], b[0]) and math.isclose(a[1], b[1]):
        return default
    return math.degrees(math.atan2(b[1] - a[1], b[0] - a[0]))
