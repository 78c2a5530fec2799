"""The household family's rules (docs/household.md, Rules): a planner, an executor, 20 rounds.

Each step is one planner round: the planner names a subtask and a skill, the executor checks
and runs it, and the planner then sees four views (front, left, back, right), the task, the
inventory, the history of rounds and the executor's feedback. The episode ends when the
planner says ``end`` or the rounds run out; it succeeds when the planner said ``end`` after
carrying out every step of one of the task's keypaths in order (SR: TP = 1 and ``end``).
A planner that gives no readable answer (an ``InvalidAction``) ends the episode there as its
own failure, ``no_answer``: that step is no round and no ``end``, as EMMOE never records it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Protocol, cast

from sortie.backends.base import (
    Backend,
    StepOutcome,
    SupportsInteraction,
    SupportsManipulation,
    SupportsOracleView,
)
from sortie.core.actions import Action, InvalidAction
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.core.observation import ActionLimits, Brief, Event, EventKind, Frames, Observation
from sortie.core.step_lines import StepDraft
from sortie.missions.household.executor import Executor, Manipulator
from sortie.missions.household.facts import HouseholdFacts
from sortie.missions.household.fit import task_problems
from sortie.missions.household.house import House
from sortie.missions.household.observation import VIEW_NAMES, HouseholdObservation
from sortie.missions.household.records import HouseholdTask, RoundRecord, RoundStatus, Verb
from sortie.missions.household.rules import task_progress
from sortie.missions.household.settings import HouseholdSettings
from sortie.missions.household.skills import Setting, Skill, expert_skill_problems, offered
from sortie.missions.household.spec import household_task
from sortie.missions.runtime import Clock, MissionRuntime, Outcome, camera_of
from sortie.missions.stages import Stage

HEADINGS = (0.0, 90.0, 180.0, 270.0)
"""The four views' headings from the base's, degrees (left positive): front, left, back, right."""
_EVENTS = {
    Verb.PICK: EventKind.PICKED_UP,
    Verb.PUT: EventKind.DROPPED,
    Verb.OPEN: EventKind.DOOR_OPENED,
    Verb.CLOSE: EventKind.DOOR_CLOSED,
}


class Robot(Manipulator, SupportsOracleView, Protocol):
    """A backend the household rules can run on: a manipulator with an oracle view."""


class HouseholdFailure(StrEnum):
    """Why a household episode failed (errors of the harness: ``FailureReason``)."""

    ROUNDS_EXHAUSTED = "rounds_exhausted"
    """The planner never said end within its rounds."""
    ENDED_UNFINISHED = "ended_unfinished"
    """The planner said end before one keypath was carried out."""
    NO_ANSWER = "no_answer"
    """The planner gave no readable answer (EMMOE stops there and records no round)."""


class HouseholdMission(MissionRuntime):
    """Mobile manipulation with a planner choosing subtasks and skills."""

    family = "household"

    def __init__(
        self,
        backend: Backend,
        clock: Clock | str = Clock.SIM,
        settings: HouseholdSettings | None = None,
        control_period: float = 1.0,
    ) -> None:
        """Create the household rules over ``backend`` (a mobile manipulator).

        Args:
            backend: the simulator; it must offer interaction, manipulation and an oracle view
                (the skills plan their motions with it).
            clock: which clock the budget is counted on; the budget itself is in rounds.
            settings: what the skills may know and their success model, validated (None:
                the model's defaults, privileged and default).
            control_period: sim seconds charged to a round that never moved.
        """
        super().__init__(backend, clock, control_period)
        self.settings = settings or HouseholdSettings()
        self.setting, self.profile = self.settings.setting, self.settings.skills
        missing = [
            p.__name__
            for p in (SupportsInteraction, SupportsManipulation, SupportsOracleView)
            if not isinstance(backend, p)
        ]
        if missing:
            raise ConfigError(
                f"household missions need a backend with {', '.join(missing)}; "
                f"{type(backend).__name__} lacks them"
            )

    @property
    def robot(self) -> Robot:
        """Return the backend as what the household rules drive (checked when created)."""
        return cast(Robot, self.backend)

    # --- setup ---------------------------------------------------------------------------
    def _setup(self, spec: EpisodeSpec) -> tuple[list[Stage], Brief]:
        self.task = household_task(spec)
        backend = self.robot
        self.oracle = backend.oracle_view()
        self.house = House.from_objects(self.oracle.objects(), backend.door_state)
        skills = offered(self.setting)
        _check_task_fits(spec, self.task, self.house, skills)
        self.executor = Executor(
            backend, self.oracle, self.house, self.task, skills, self.profile, self.seed
        )
        self.names = self._nameable()
        self.rounds: list[RoundRecord] = []
        self.ended, self.success, self.unanswered = False, False, False
        self.seen: set[str] = set()
        if self.setting is Setting.SENSOR_ONLY:
            self.executor.known = self.seen
        stage = Stage("S1", "task", "Carry out the task, then say end.", None, lambda: self.success)
        return [stage], self._brief(spec, skills)

    def reset(self, spec: EpisodeSpec, seed: int) -> HouseholdObservation:
        """Start an episode; ``seed`` also seeds the skills' outcomes."""
        self.seed = seed
        observation = super().reset(spec, seed)
        assert isinstance(observation, HouseholdObservation)
        return observation

    def _brief(self, spec: EpisodeSpec, skills: tuple[Skill, ...]) -> Brief:
        views = ", ".join(VIEW_NAMES)
        text = (
            f"{self.task.instruction}\n"
            f"After each subtask you receive four images from the head camera: {views}, "
            f"in that order. Answer with one subtask (an action, a target and, for put, a "
            f"place) and the skill to carry it out; say end when the task is done."
        )
        return Brief(
            self.family,
            spec.level,
            text,
            budget_s=self.task.max_rounds * self.control_period,
            limits=ActionLimits(max_steps=self.task.max_rounds),
            camera=camera_of(self.backend),
            actions=tuple(v.value for v in Verb),
            skills=tuple((s.name, s.role) for s in skills),
        )

    def _nameable(self) -> dict[str, str]:
        """Return the scene objects that stand for things a planner may name (a door: its owner)."""
        names = {name: name for name in self.house.things}
        names.update({t.door: t.name for t in self.house.things.values() if t.door})
        return names

    # --- one round -----------------------------------------------------------------------
    def _act(self, action: Action) -> tuple[StepOutcome, list[Event]]:
        if isinstance(action, InvalidAction):
            self.unanswered = True
            detail = f"no readable answer: {action.error}"
            return self._still(), [Event(EventKind.INVALID_ACTION, None, detail)]
        record = self.executor.run(self.steps + 1, action)
        self.rounds.append(record)
        if record.status is RoundStatus.END:
            self.ended = True
        self.success = self.ended and task_progress(self.task, self.rounds) >= 1.0
        return self._still(), _events(record)

    def _still(self) -> StepOutcome:
        """Return the step's outcome: the backend moved in the executor, if at all."""
        return StepOutcome(Observation(Frames(), self.backend.pose(), (), self.house.held))

    def _step_seconds(self) -> float:
        if self.unanswered:
            return self.control_period
        seconds = sum(a.seconds for a in self.rounds[-1].attempts)
        return seconds or self.control_period

    def _judge(self) -> None:
        if self.unanswered:
            self.outcome, self.failure = Outcome.FAILURE, HouseholdFailure.NO_ANSWER.value
            return
        if not self.ended and self.steps < self.task.max_rounds:
            return
        if self.success:
            self.outcome = Outcome.SUCCESS
        else:
            self.outcome, self.failure = Outcome.FAILURE, self._failure_reason()

    def _failure_reason(self) -> str:
        reason = (
            HouseholdFailure.ENDED_UNFINISHED if self.ended else HouseholdFailure.ROUNDS_EXHAUSTED
        )
        return reason.value

    def _record(self, action: Action, *args: Any, **kwargs: Any) -> StepDraft:
        draft = super()._record(action, *args, **kwargs)
        draft.part = None if self.unanswered else self.rounds[-1]
        return draft

    def _observe(self, frames: Any, events: tuple[Event, ...]) -> HouseholdObservation:
        backend = self.robot
        views = backend.look_around(HEADINGS)
        detections = tuple(self._detected(shown) for shown in backend.shown_around(HEADINGS))
        for names in detections:
            self.seen.update(names)
        last = self.rounds[-1] if self.rounds else None
        return HouseholdObservation(
            views[0],
            self.house.held is not None,
            tuple(events),
            self.steps,
            self.clock_used,
            0.0,
            views=tuple(views),
            task=self.task.instruction,
            inventory=(self.house.held,) if self.house.held else (),
            history=tuple(self.rounds),
            feedback=last.feedback if last else "",
            code=last.code.value if last and last.code else None,
            detections=detections,
            round=self.steps,
            rounds_left=max(0, self.task.max_rounds - self.steps),
        )

    def _detected(self, shown: frozenset[str]) -> tuple[str, ...]:
        """Return the things a planner may name among what a view shows (a door: its container)."""
        return tuple(sorted({self.names[n] for n in shown if n in self.names}))

    def _facts(self) -> dict[str, Any]:
        return HouseholdFacts(
            ended=self.ended,
            rounds=len(self.rounds),
            setting=self.setting,
            skills=self.profile,
            held=self.house.held,
            places=self.house.places,
            open=self.house.open,
        ).as_record()


def _events(record: RoundRecord) -> list[Event]:
    if record.status is RoundStatus.SUCCESS and record.verb in _EVENTS:
        return [Event(_EVENTS[record.verb], record.target_object)]
    if record.status is RoundStatus.FAILURE:
        kind = (
            EventKind.INVALID_ACTION
            if record.code and record.code.startswith("F")
            else EventKind.INTERACTION_FAILED
        )
        return [Event(kind, record.target_object, f"{record.code}: {record.feedback}")]
    return []


def _check_task_fits(
    spec: EpisodeSpec, task: HouseholdTask, house: House, skills: tuple[Skill, ...]
) -> None:
    """Refuse a task its world makes impossible, before round one (``household.fit``).

    An impossible task would otherwise be played and scored as an ordinary failure (and
    crash the oracle). A ConfigError is bad input: the run stops at this episode, naming it
    and the step.
    """
    problems = task_problems(task, house, spec.start) + expert_skill_problems(task, skills)
    if problems:
        things = ", ".join(sorted(house.things)[:20]) or "none"
        raise ConfigError(
            f"episode {spec.episode_id}: task does not fit world {spec.world.builder!r} "
            f"(seed {spec.world.seed}): mission.{'; mission.'.join(problems[:5])}; "
            f"its household things: {things}"
        )
