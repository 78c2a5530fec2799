"""The aerial family's rules (docs/aerial.md, Rules): a multirotor flown by one instruction.

Each step is one flight primitive (magnitudes clamped to d_max and 30°, and flagged when
clamped; d_max is the episode's unless the run's ``max_move`` setting replaces it) or one task
action. An episode whose data say ``show_pose`` tells the agent its exact pose every step.
The episode ends when the agent says ``done`` or lands, or when T_max steps are spent;
success is then decided by the mission's types, as MissionBench's code decides it: the report
matches (the judge's verdict is kept), the final pose is at the goal (position per axis and
heading), the last task action is the mission's and the final pose is at the goal, the flown
path covers the reference route. Two stages trace progress for the reports: S1 reaching the
goal region (for a patrol: covering the route), S2 the objective.
"""

from __future__ import annotations

import math
from dataclasses import replace
from enum import StrEnum
from typing import Any

from sortie.backends.base import Backend, StepOutcome, SupportsSemanticClasses
from sortie.core.actions import Action, FlightPrimitive, Fly, InvalidAction
from sortie.core.episode import EpisodeSpec
from sortie.core.observation import ActionLimits, Brief, Event, EventKind, MissionObservation
from sortie.core.pose import Pose
from sortie.missions.aerial.facts import AerialFacts, TaskActionFacts, VerdictFacts
from sortie.missions.aerial.judge import JUDGES, Verdict
from sortie.missions.aerial.patrol import patrol_iou
from sortie.missions.aerial.settings import AerialSettings
from sortie.missions.aerial.spec import AerialData, MissionType, aerial_data
from sortie.missions.aerial.vocabulary import AerialEvent, TaskAction
from sortie.missions.aerial.vocabulary import TaskActionKind as Task
from sortie.missions.runtime import Clock, MissionRuntime, Outcome, camera_of
from sortie.missions.stages import Stage

PATROL_IOU = 0.5
"""A patrol succeeds when the 20 m buffers of flown and reference routes overlap this much."""
NEAR_GOAL = 20.0
"""An episode that ran out of steps this close to the goal (metres, 3D) drifted or oscillated."""
_TURNS = (FlightPrimitive.TURN_LEFT, FlightPrimitive.TURN_RIGHT)


class AerialFailure(StrEnum):
    """Why an aerial episode failed: MissionBench's failure modes (errors: ``FailureReason``)."""

    PREMATURE_TERMINATION = "premature_termination"
    """The agent said done (or landed) without ever reaching the goal region."""
    OBJECTIVE_UNMET = "objective_unmet"
    """The goal region was reached, but the report, the action or the final pose was wrong."""
    DRIFT_OSCILLATION = "drift_oscillation"
    """The steps ran out near the goal or while circling."""
    TIMEOUT = "timeout"
    """The steps ran out far from the goal."""


class AerialMission(MissionRuntime):
    """Mission-level UAV control: fly, report, inspect, act, patrol."""

    family = "aerial"
    settings: AerialSettings

    def __init__(
        self,
        backend: Backend,
        clock: Clock | str = Clock.SIM,
        settings: AerialSettings | None = None,
        control_period: float = 1.0,
    ) -> None:
        """Create the aerial rules over ``backend`` (a multirotor).

        Args:
            backend: the simulator, with a multirotor body.
            clock: which clock is recorded as the mission clock; the budget is T_max steps.
            settings: the run's, validated (None: the model's defaults); ``judge`` names the
                report judge (see ``sortie.missions.aerial.judge.JUDGES``).
            control_period: seconds a primitive lasts on the sim clock.
        """
        super().__init__(backend, clock, control_period)
        self.settings = settings or AerialSettings()
        self.judge_name = self.settings.judge
        self.judge = JUDGES.get(self.judge_name)

    # --- setup ------------------------------------------------------------------------
    def _setup(self, spec: EpisodeSpec) -> tuple[list[Stage], Brief]:
        self.data: AerialData = aerial_data(spec)
        self.goal = self.data.goal
        self.max_move = self.settings.max_move or self.data.max_move
        """d_max: the run's setting, else the episode's."""
        start = self.backend.pose()
        self.start_distance = _distance3(start, self.goal)
        self.path: list[tuple[float, float, float]] = [start.position()]
        # Positions after each motion step, start and task actions left out: the patrol's
        # flown path as MissionBench builds it.
        self.flown: list[tuple[float, float, float]] = []
        self.report: str | None = None
        self.task_actions: list[dict[str, Any]] = []
        self.ended_by: str | None = None
        self.verdict: Verdict | None = None
        self.success_by_type: dict[str, bool] = {}
        self.success = False
        stages = self._stages()
        return stages, self._brief(spec, stages)

    def _stages(self) -> list[Stage]:
        if MissionType.PATROL in self.data.types:
            first = Stage(
                "S1", "patrol", "Fly along the route.", None, lambda: self.coverage() >= PATROL_IOU
            )
        else:
            first = Stage(
                "S1", "reach", "Fly to where the target can be observed.", "goal", self.at_goal
            )
        objective = Stage(
            "S2", "objective", "Complete the mission and say done.", None, lambda: self.success
        )
        return [first, objective]

    def _brief(self, spec: EpisodeSpec, stages: list[Stage]) -> Brief:
        labels = {}
        if isinstance(self.backend, SupportsSemanticClasses):
            labels = self.backend.semantic_classes()
        limits = ActionLimits(
            max_turn=self.data.max_turn,
            max_move=self.max_move,
            max_steps=self.data.step_budget,
        )
        return Brief(
            self.family,
            spec.level,
            self.data.instruction,
            stages=tuple((s.name, s.brief) for s in stages),
            control_period=self.control_period,
            budget_s=self.data.step_budget * self.control_period,
            semantic_classes=labels,
            limits=limits,
            camera=camera_of(self.backend),
        )

    # --- one step ---------------------------------------------------------------------
    def _act(self, action: Action) -> tuple[StepOutcome, list[Event]]:
        events: list[Event] = []
        if isinstance(action, Fly | TaskAction) and action.report and action.report.strip():
            self.report = action.report.strip()
        if isinstance(action, Fly):
            action, clamped = self._clamp(action)
            events += clamped
            outcome = self.backend.step(action)
        else:
            outcome = self.backend.step(_HOVER)
            events += self._task(action)
        self.path.append(self.backend.pose().position())
        if not isinstance(action, TaskAction):
            self.flown.append(self.path[-1])
        if self.ended_by is not None or self.steps + 1 >= self.data.step_budget:
            self._decide()
        return outcome, events

    def _clamp(self, action: Fly) -> tuple[Fly, list[Event]]:
        """Return the action with its magnitude in [0, limit], and a flag if it was changed."""
        limit = self.data.max_turn if action.primitive in _TURNS else self.max_move
        magnitude = action.magnitude if math.isfinite(action.magnitude) else 0.0
        kept = min(max(magnitude, 0.0), limit)
        if kept == action.magnitude:
            return action, []
        detail = f"{action.primitive.value} {action.magnitude:g} clamped to {kept:g}"
        return Fly(action.primitive, kept, action.report), [
            Event(AerialEvent.CLAMPED, None, detail)
        ]

    def _task(self, action: Action) -> list[Event]:
        """Carry out a task action (or refuse an invalid one); done and land end the flight."""
        if isinstance(action, InvalidAction):
            return [Event(EventKind.INVALID_ACTION, None, f"{action.error}: {action.raw[:500]}")]
        if not isinstance(action, TaskAction):
            return [
                Event(
                    EventKind.INVALID_ACTION,
                    None,
                    f"{type(action).__name__} is not an aerial action (Fly or TaskAction)",
                )
            ]
        if action.kind is Task.DONE:
            self.ended_by = "done"
            return []
        self.task_actions.append(
            {"kind": action.kind.value, "step": self.steps + 1, "at_goal": self.at_goal()}
        )
        if action.kind is Task.LAND:
            self.ended_by = "land"
        return [Event(AerialEvent.TASK_ACTION, self.data.target, action.kind.value)]

    def _sensed(self, observation: MissionObservation) -> MissionObservation:
        """Return the observation with a pose: the sensor's, or the exact one ``show_pose`` gives.

        An agent that reads the pose sensor keeps the reading the run's pose settings describe.
        """
        sensed = super()._sensed(observation)
        if sensed.pose is None and self.data.show_pose:
            return replace(sensed, pose=self.backend.pose())
        return sensed

    # --- success ------------------------------------------------------------------------
    def at_goal(self) -> bool:
        """Return whether the body is within τ_d of the goal position on every axis."""
        return self.data.at_goal(self.backend.pose().position())

    def at_goal_pose(self) -> bool:
        """Return whether the body is at the goal on every axis and within τ_yaw of its heading."""
        return self.data.at_goal_pose(self.backend.pose())

    def coverage(self) -> float:
        """Return the patrol IoU of the path flown so far (start excluded) against the route."""
        return patrol_iou(self.flown, self.data.patrol)

    def last_task_action(self) -> str | None:
        """Return the kind of the last task action carried out (``done`` aside), or None."""
        return self.task_actions[-1]["kind"] if self.task_actions else None

    def _decide(self) -> None:
        """Judge every type's success rule at the end of the flight."""
        data = self.data
        if data.answer:
            self.verdict = self.judge(self.report, data.answer, data.answer_kind)
        reported = self.verdict is not None and self.verdict.match
        # MissionBench's manipulation: the final pose (geometry) AND the task; the task is the
        # last one the agent declared, as its code keeps the latest declared task.
        rules = {
            MissionType.REPORTING: lambda: reported,
            MissionType.INSPECTION: lambda: self.at_goal_pose() or reported,
            MissionType.MANIPULATION: lambda: (
                self.at_goal_pose() and (self.last_task_action() == data.task_action)
            ),
            MissionType.PATROL: lambda: self.coverage() >= PATROL_IOU,
        }
        self.success_by_type = {t.value: rules[t]() for t in data.types}
        self.success = all(self.success_by_type.values())

    def _judge(self) -> None:
        if self.ended_by is None and self.steps < self.data.step_budget:
            return
        if self.success:
            self.outcome = Outcome.SUCCESS
        else:
            self.outcome, self.failure = Outcome.FAILURE, self._failure_reason()

    def _failure_reason(self) -> str:
        reached = self.tracker.records()[0].status == "done"
        if reached:
            return AerialFailure.OBJECTIVE_UNMET.value
        if self.ended_by is not None:
            return AerialFailure.PREMATURE_TERMINATION.value
        closest = min(_distance3(Pose(*p), self.goal) for p in self.path)
        return (
            AerialFailure.DRIFT_OSCILLATION
            if closest <= NEAR_GOAL or _circling(self.path)
            else AerialFailure.TIMEOUT
        ).value

    def _distance(self, target: str) -> float:
        if target == "goal":
            return _distance3(self.backend.pose(), self.goal)
        return super()._distance(target)

    def _facts(self) -> dict[str, Any]:
        verdict = VerdictFacts(**self.verdict.as_dict()) if self.verdict else None
        return AerialFacts(
            report=self.report,
            verdict=verdict,
            judge=self.judge_name,
            success_by_type=self.success_by_type,
            ended_by=self.ended_by,
            task_actions=[TaskActionFacts(**a) for a in self.task_actions],
            start_distance=self.start_distance,
            final_distance=_distance3(self.backend.pose(), self.goal),
            step_budget=self.data.step_budget,
            clock=self.clock,
        ).as_record()


_HOVER = Fly(FlightPrimitive.TURN_LEFT, 0.0)
"""A step that moves nothing: task actions and invalid actions still cost a step."""


def _distance3(pose: Pose, goal: Pose) -> float:
    return math.dist(pose.position(), goal.position())


def _circling(path: list[tuple[float, float, float]]) -> bool:
    """Return whether the path went round: its net displacement is under a quarter of its length."""
    length = sum(math.dist(a, b) for a, b in zip(path, path[1:], strict=False))
    return length > 0 and math.dist(path[0], path[-1]) < 0.25 * length
