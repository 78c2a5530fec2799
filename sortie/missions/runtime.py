"""The mission runtime: the rules every family shares, around a backend.

A family subclass says what its stages are, how an action is carried out, when the episode
has failed and what the metrics need to know at the end. This base keeps the two clocks
(``sim``: each step costs the control period; ``latency``: each step costs the larger of the
control period and the agent's decision time), the budget, collisions with a cooldown,
invalid actions and the step records.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from sortie.backends.base import Backend, StepOutcome, SupportsCameraInfo
from sortie.core.actions import Action
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.core.observation import Brief, CameraInfo, Event, EventKind, MissionObservation
from sortie.core.records import (
    FailureReason,
    ModelCallRecord,
    Outcome,
    StepRecord,
    TrajectoryFooter,
    step_model,
)
from sortie.core.run_config import PoseSettings
from sortie.core.serialize import action_to_dict
from sortie.core.step_lines import StepDraft
from sortie.missions.clock import Clock as Clock
from sortie.missions.family import FamilySettings
from sortie.missions.pose_sensor import PoseSensor
from sortie.missions.stages import Stage, StageTracker

COLLISION_COOLDOWN = 5
"""Steps after a counted collision during which further contacts are not counted again."""


class AgentSaid(NamedTuple):
    """What a step's record keeps of the agent's decision.

    A named tuple: the episode loop makes one every step, and a tuple is made in a fraction
    of a frozen dataclass's time.
    """

    seconds: float = 0.0
    """Wall seconds the decision took."""
    text: str | None = None
    """The agent's words (reasoning, raw model text), if any."""
    calls: Sequence[ModelCallRecord] = ()
    """The model calls made to decide."""


NOTHING_SAID = AgentSaid()


def camera_of(backend: Backend) -> CameraInfo | None:
    """Return the backend's camera for the brief, if the backend says what it is."""
    return backend.camera_info() if isinstance(backend, SupportsCameraInfo) else None


class MissionRuntime(ABC):
    """Runs one family's rules over a backend, one episode at a time.

    A family's runtime is built as ``Runtime(backend, clock=..., settings=...)``: ``settings``
    is an instance of the family's settings model (``Family.settings``), validated once by
    whoever built it; None gives the model's defaults, which live in the model only.
    """

    family: str = ""
    """The family's name; the rest of what it is: its descriptor (``family.py``)."""
    settings: FamilySettings
    """The family's settings the rules are played with (set by the family's constructor)."""
    pose_settings: PoseSettings | None = None
    """How the pose sensor reads, set by whoever builds the runtime for an agent that reads it
    (``Sensor.POSE``); None: observations carry no pose."""

    def __init__(
        self, backend: Backend, clock: Clock | str = Clock.SIM, control_period: float = 0.2
    ) -> None:
        """Create the runtime.

        Args:
            backend: the simulator to drive.
            clock: ``sim`` or ``latency``: which clock the budget is counted on.
            control_period: seconds one step lasts on the sim clock.
        """
        self.backend = backend
        try:
            self.clock = Clock(clock)
        except ValueError:
            raise ConfigError(f"clock {clock!r} is not one of: sim, latency") from None
        self.control_period = control_period
        self.brief: Brief | None = None

    # --- what a family provides ------------------------------------------------------
    @abstractmethod
    def _setup(self, spec: EpisodeSpec) -> tuple[list[Stage], Brief]:
        """Read the episode's own data; return the stages and the brief."""

    @abstractmethod
    def _act(self, action: Action) -> tuple[StepOutcome, list[Event]]:
        """Carry out one action (validated by the family); return the step and its events."""

    @abstractmethod
    def _failure_reason(self) -> str:
        """Return why the episode failed when the budget ran out."""

    @abstractmethod
    def _facts(self) -> dict[str, Any]:
        """Return the end state that metrics need."""

    def _step_seconds(self) -> float:
        """Return the sim-clock seconds the last step took (one control period by default)."""
        return self.control_period

    def _distance(self, target: str) -> float:
        """Return the distance from the agent to a stage's target (an object by default)."""
        return self.backend.distance_to(target)

    # --- the episode ----------------------------------------------------------------------
    def reset(self, spec: EpisodeSpec, seed: int) -> MissionObservation:
        """Start an episode: build the world, place the agent, start the stages."""
        if spec.family != self.family:
            raise ConfigError(
                f"episode {spec.episode_id}: family {spec.family!r}, but this "
                f"runtime runs {self.family!r} episodes"
            )
        self.spec = spec
        self._step_model = step_model(self.family)
        observation = self.backend.reset(spec, seed)
        stages, self.brief = self._setup(spec)
        self.tracker = StageTracker(stages, self._distance)
        self.tracker.start()
        self.steps, self.clock_sim, self.clock_latency = 0, 0.0, 0.0
        self._cooldown, self._collisions = 0, 0
        self.outcome: Outcome | None = Outcome.SUCCESS if self.tracker.all_done else None
        self.failure: str | None = None
        self._pose_sensor = (
            PoseSensor(self.pose_settings, observation.pose, seed) if self.pose_settings else None
        )
        return self._sensed(self._observe(observation.frames, ()))

    @property
    def done(self) -> bool:
        """Return whether the episode has ended."""
        return self.outcome is not None

    def step(
        self, action: Action, decision_seconds: float = 0.0, said: AgentSaid = NOTHING_SAID
    ) -> tuple[MissionObservation, StepRecord]:
        """Apply one agent action; return what the agent sees and the step's record.

        ``said`` is what the record keeps of the agent's decision (its time, words and model
        calls), so that the record is made once.
        """
        observation, draft = self.advance(action, decision_seconds, said)
        return observation, draft.record()

    def advance(
        self, action: Action, decision_seconds: float = 0.0, said: AgentSaid = NOTHING_SAID
    ) -> tuple[MissionObservation, StepDraft]:
        """Apply one agent action, as ``step`` does; return the step's record as a draft.

        The episode loop writes the draft's line without building the record's model
        (``sortie.core.step_lines``); its values are checked there, not here.
        """
        if self.done:
            raise ConfigError(f"episode {self.spec.episode_id}: step() after the episode ended")
        outcome, events = self._act(action)
        counted = self._count_collision(outcome.events)
        dt_sim = self._step_seconds()
        dt_latency = max(dt_sim, decision_seconds)
        self.steps += 1
        self.clock_sim += dt_sim
        self.clock_latency += dt_latency
        stage = self.tracker.active
        self.tracker.record_step(self.steps, dt_sim, dt_latency, counted)
        self._judge()
        all_events = (*outcome.events, *events)
        record = self._record(action, all_events, stage, counted, outcome, said)
        return self._sensed(self._observe(outcome.observation.frames, all_events)), record

    def footer(self, error: str | None = None) -> TrajectoryFooter:
        """Return how the episode ended (``error``: the agent or backend failed)."""
        return TrajectoryFooter(
            outcome=self.outcome or Outcome.ERROR,
            failure_reason=self.failure,
            steps=self.steps,
            clock_sim=self.clock_sim,
            clock_latency=self.clock_latency,
            stages=self.tracker.records(),
            facts=self._facts(),
            error=error,
        )

    def abort(self, reason: FailureReason) -> None:
        """End the episode as an error with ``reason`` (the agent or the backend failed)."""
        self.outcome, self.failure = Outcome.ERROR, reason

    # --- shared rules -------------------------------------------------------------------
    @property
    def clock_used(self) -> float:
        """Return the clock the budget is counted on."""
        return self.clock_sim if self.clock is Clock.SIM else self.clock_latency

    def _judge(self) -> None:
        assert self.brief is not None
        if self.tracker.all_done:
            self.outcome = Outcome.SUCCESS
        elif self.clock_used >= self.brief.budget_s - 1e-9:
            self.outcome, self.failure = Outcome.FAILURE, self._failure_reason()

    def _count_collision(self, events: tuple[Event, ...]) -> int:
        """Count a contact once, then ignore contacts for the cooldown's steps."""
        if self._cooldown > 0:
            self._cooldown -= 1
            return 0
        if events and any(e.kind is EventKind.CONTACT for e in events):
            self._cooldown = COLLISION_COOLDOWN
            self._collisions += 1
            return 1
        return 0

    def _sensed(self, observation: MissionObservation) -> MissionObservation:
        """Return ``observation`` with the pose sensor's reading, for an agent that reads it."""
        if self._pose_sensor is None:
            return observation
        return replace(observation, pose=self._pose_sensor.read(self.backend.pose()))

    def _observe(self, frames: Any, events: tuple[Event, ...]) -> MissionObservation:
        assert self.brief is not None
        used = self.clock_used
        return MissionObservation(
            frames,
            self.backend.holding() is not None,
            tuple(events),
            self.steps,
            used,
            max(0.0, self.brief.budget_s - used),
        )

    def _record(
        self,
        action: Action,
        events: tuple[Event, ...],
        stage: Stage | None,
        collisions: int,
        outcome: StepOutcome,
        said: AgentSaid,
    ) -> StepDraft:
        return StepDraft(
            self._step_model,
            self.steps,
            self.backend.pose(),
            action_to_dict(action),
            events,
            self.tracker.statuses(),
            stage.name if stage else None,
            self.tracker.distance_of(stage),
            collisions,
            self.clock_sim,
            self.clock_latency,
            self.backend.holding(),
            (said.seconds, outcome.backend_seconds, outcome.render_seconds),
            said.text,
            said.calls,
        )
