"""The rescue family's rules (docs/rescue.md, Rules): four stages, triggers, doors, budgets."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sortie.backends.base import (
    Backend,
    StepOutcome,
    SupportsInteraction,
    SupportsSemanticClasses,
    SupportsViewRender,
)
from sortie.backends.queries import PositionQueries
from sortie.core.actions import Action, Interact, Interaction, InvalidAction, Move
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.core.observation import ActionLimits, Brief, Event, EventKind
from sortie.missions.rescue.facts import RescueFacts
from sortie.missions.rescue.goals import goal_views
from sortie.missions.rescue.settings import RescueSettings, Triggers
from sortie.missions.rescue.spec import RescueData, rescue_data
from sortie.missions.runtime import Clock, MissionRuntime, camera_of
from sortie.missions.stages import Stage


class RescueFailure(StrEnum):
    """Why a rescue episode failed."""

    TIMEOUT_S1 = "timeout_s1"
    TIMEOUT_S2 = "timeout_s2"
    TIMEOUT_S3 = "timeout_s3"
    TIMEOUT_S4 = "timeout_s4"
    DROP_OUT_OF_RANGE = "drop_out_of_range"


@dataclass(frozen=True, slots=True)
class RescueRules:
    """The numbers of the rescue rules; every one can be overridden by a suite."""

    sighting_radius: float = 7.5
    trigger_radius: float = 1.5
    trigger_height: float = 1.0
    handoff_radius: float = 2.0
    door_radius: float = 1.5
    door_angle: float = 35.0
    max_turn: float = 30.0
    max_speed: float = 1.5
    pitches: tuple[float, ...] = (0.0, 30.0, -30.0)


class RescueMission(MissionRuntime):
    """Search and rescue on foot: explore, pick up, return, hand off."""

    family = "rescue"

    def __init__(
        self,
        backend: Backend,
        clock: Clock | str = Clock.SIM,
        settings: RescueSettings | None = None,
        rules: RescueRules = RescueRules(),
        control_period: float = 0.2,
    ) -> None:
        """Create the rescue rules over ``backend`` (which must support interactions).

        ``settings`` are the run's, validated (None: the model's defaults).
        """
        super().__init__(backend, clock, control_period)
        if not isinstance(backend, SupportsInteraction):
            raise ConfigError(f"backend {backend.name!r} cannot pick up or open doors")
        self.settings = settings or RescueSettings()
        self.triggers = self.settings.triggers
        self.goal_images = self.settings.goal_images
        self.rules = rules
        self._hands: SupportsInteraction = backend

    # --- setup ------------------------------------------------------------------------
    def _setup(self, spec: EpisodeSpec) -> tuple[list[Stage], Brief]:
        self.data: RescueData = rescue_data(spec)
        for role in ("casualty", "stretcher"):
            if role not in spec.targets:
                raise ConfigError(f"episode {spec.episode_id}: targets has no {role!r}")
        self.casualty, self.stretcher = spec.targets["casualty"], spec.targets["stretcher"]
        self.picked_up = self.dropped_in_zone = False
        self.failed_drops_near = 0
        # Distances measured in the current state, by object (emptied whenever it changes).
        self._measured: dict[str, float] = {}
        self._doors = self.backend.doors()
        stages = self._stages()
        return stages, self._brief(spec, stages)

    def _stages(self) -> list[Stage]:
        # S1 and S3 are done within a distance of their own target: the tracker has just
        # measured it, in the state it asks them in (``StageTracker.target_distance``).
        r, b = self.rules, self.backend
        return [
            Stage(
                "S1",
                "explore",
                "Search the area until you come near the casualty.",
                self.casualty,
                lambda: self._target_distance() <= r.sighting_radius,
            ),
            Stage(
                "S2",
                "rescue",
                "Reach the casualty and pick them up.",
                self.casualty,
                lambda: self.picked_up,
            ),
            Stage(
                "S3",
                "return",
                "Carry the casualty back towards the ambulance's stretcher.",
                self.stretcher,
                lambda: (
                    self.picked_up
                    and b.holding() == self.casualty
                    and self._target_distance() <= r.sighting_radius
                ),
            ),
            Stage(
                "S4",
                "hand off",
                "Put the casualty down by the stretcher.",
                self.stretcher,
                lambda: self.dropped_in_zone,
            ),
        ]

    def _target_distance(self) -> float:
        distance = self.tracker.target_distance()
        assert distance is not None  # asked only of S1 and S3, which have targets
        return distance

    def _brief(self, spec: EpisodeSpec, stages: list[Stage]) -> Brief:
        labels = {}
        if isinstance(self.backend, SupportsSemanticClasses):
            labels = self.backend.semantic_classes()
        steps = " ".join(f"({s.name}) {s.brief}" for s in stages)
        text = (
            f"A casualty needs rescue. Clue: {self.data.clue_text} {steps} "
            f"You start near the ambulance."
        )
        limits = ActionLimits(max_turn=self.rules.max_turn, max_speed=self.rules.max_speed)
        return Brief(
            self.family,
            spec.level,
            text,
            clue=self.data.clue_text,
            images=self._goal_images(spec),
            stages=tuple((s.name, s.brief) for s in stages),
            control_period=self.control_period,
            budget_s=self.data.budget_s,
            semantic_classes=labels,
            limits=limits,
            camera=camera_of(self.backend),
        )

    def _goal_images(self, spec: EpisodeSpec) -> dict[str, NDArray[np.uint8]]:
        """Return the brief's goal images (docs/rescue.md, Goal images), with the run's camera."""
        if not isinstance(self.backend, SupportsViewRender):
            return {}
        b = self.backend
        position_of = b.position_of if isinstance(b, PositionQueries) else None
        doors = [position_of(door) for door in self._doors] if position_of else []
        views = goal_views(spec, self.data, self.goal_images, position_of, doors)
        render = b.render_view
        return {name: render(v.x, v.y, v.z, v.yaw, v.pitch) for name, v in views.items()}

    # --- one step ---------------------------------------------------------------------
    def _act(self, action: Action) -> tuple[StepOutcome, list[Event]]:
        self._measured = {}
        problem = self._invalid(action)
        if problem is not None:
            outcome = self.backend.step(Move())
            return outcome, [Event(EventKind.INVALID_ACTION, None, problem)]
        events: list[Event] = []
        if isinstance(action, Interact):
            events.append(self._interact(action.kind))
            outcome = self.backend.step(Move())
        else:
            assert isinstance(action, Move)
            outcome = self.backend.step(action)
        self._measured = {}  # the body moved
        if self.triggers is Triggers.ASSISTED:
            events += self._assist()
        return outcome, events

    def _distance(self, target: str) -> float:
        """Return the distance to a stage's target, as measured already in this state if it was.

        The tracker measures its active stage's target after the step's triggers, which have
        often just measured the same one (the casualty, or the stretcher while carrying).
        """
        known = self._measured.get(target)
        return self.backend.distance_to(target) if known is None else known

    def _distance_now(self, name: str) -> float:
        """Return the distance to ``name`` and keep it while nothing moves (``_distance``)."""
        distance = self._measured[name] = self.backend.distance_to(name)
        return distance

    def _invalid(self, action: Action) -> str | None:
        """Return why ``action`` is not allowed here, or None."""
        r = self.rules
        if isinstance(action, InvalidAction):
            return f"{action.error}: {action.raw[:500]}"
        if isinstance(action, Move):
            if not (math.isfinite(action.turn) and abs(action.turn) <= r.max_turn):
                return f"turn {action.turn} outside [-{r.max_turn:g}, {r.max_turn:g}] degrees"
            if not (math.isfinite(action.speed) and abs(action.speed) <= r.max_speed):
                return f"speed {action.speed} outside [-{r.max_speed:g}, {r.max_speed:g}] m/s"
            if action.pitch is not None and action.pitch not in r.pitches:
                return f"pitch {action.pitch} not one of {r.pitches}"
            return None
        if isinstance(action, Interact):
            return None
        return f"{type(action).__name__} is not a rescue action (Move or Interact)"

    def _interact(self, kind: Interaction) -> Event:
        """Carry out an interaction the agent asked for, if its gate allows it."""
        if kind is Interaction.GRAB:
            return self._grab() or _failed(kind, "no casualty within reach")
        if kind is Interaction.DROP:
            if self.backend.holding() is None:
                return _failed(kind, "nothing held")
            event = self._drop()
            if event is None:
                self.failed_drops_near += self.tracker.active is not None and (
                    self.tracker.active.name == "S4"
                )
            return event or _failed(kind, "stretcher not within reach")
        door = self._door_in_reach()
        return self._hands.set_door(door, True) if door else _failed(kind, "no closed door ahead")

    def _assist(self) -> list[Event]:
        """Fire the assisted triggers whose gates are met."""
        events = [e for e in (self._grab(), self._drop()) if e is not None]
        door = self._door_in_reach()
        if door is not None:
            events.append(self._hands.set_door(door, True))
            self._measured = {}
        return events

    def _grab(self) -> Event | None:
        r, b = self.rules, self.backend
        if b.holding() is not None or self.dropped_in_zone:
            return None
        near = self._distance_now(self.casualty) <= r.trigger_radius
        if near and abs(b.height_difference(self.casualty)) <= r.trigger_height:
            self.picked_up, self._measured = True, {}
            return self._hands.pick_up(self.casualty)
        return None

    def _drop(self) -> Event | None:
        r, b = self.rules, self.backend
        if b.holding() != self.casualty or self._distance_now(self.stretcher) > r.trigger_radius:
            return None
        if abs(b.height_difference(self.stretcher)) > r.trigger_height:
            return None  # the stretcher is on another floor, right below or above
        self._measured = {}
        event = self._hands.put_down()
        self.dropped_in_zone = b.distance_between(self.casualty, self.stretcher) <= (
            r.handoff_radius
        )
        return event

    def _door_in_reach(self) -> str | None:
        r, b = self.rules, self.backend
        for door in self._doors:
            if (
                not b.door_state(door)
                and b.distance_to(door) <= r.door_radius
                and abs(b.bearing_to(door)) <= r.door_angle
            ):
                return door
        return None

    # --- the end ----------------------------------------------------------------------
    def _failure_reason(self) -> str:
        stage = self.tracker.active
        if stage is not None and stage.name == "S4" and self.failed_drops_near:
            return RescueFailure.DROP_OUT_OF_RANGE.value
        return f"timeout_{stage.name.lower()}" if stage else RescueFailure.TIMEOUT_S4.value

    def _facts(self) -> dict[str, Any]:
        b = self.backend
        return RescueFacts(
            picked_up=self.picked_up,
            dropped_in_zone=self.dropped_in_zone,
            final_to_casualty=b.distance_to(self.casualty),
            final_to_stretcher=b.distance_to(self.stretcher),
            casualty_point=self._point(self.casualty),
            stretcher_point=self._point(self.stretcher),
            triggers=self.triggers.value,
            clock=self.clock,
        ).as_record()

    def _point(self, name: str) -> tuple[float, float, float] | None:
        """Return the base point distances to ``name`` are measured to (None if unknown)."""
        if isinstance(self.backend, PositionQueries):
            return self.backend.position_of(name)
        return None


def _failed(kind: Interaction, why: str) -> Event:
    return Event(EventKind.INTERACTION_FAILED, None, f"{kind.value}: {why}")
