"""The beacon family's own words: the ping, the heard event, the observation and step parts."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import Field

from sortie.core.actions import FamilyAction
from sortie.core.observation import MissionObservation
from sortie.core.records import StepPart, StepRecord
from sortie.core.vocabulary import WORDS, MessagePart, ObservationPart, Vocabulary


@dataclass(frozen=True, slots=True)
class Ping(FamilyAction):
    """Ping the beacon: it answers with a signal that grows as the agent comes near."""

    volume: float = 1.0


class BeaconEvent(StrEnum):
    """What a ping can bring about."""

    HEARD = "heard"
    """The beacon answered from within reach."""


@dataclass(frozen=True, slots=True)
class BeaconObservation(MissionObservation):
    """What a beacon agent perceives: the shared fields and the last ping's signal (0..1)."""

    signal: float = 0.0


class PingRecord(StepPart):
    """What one step's ping found: the signal and whether the beacon was within reach."""

    signal: float = Field(ge=0.0, le=1.0)
    heard: bool

    def verdict(self) -> str:
        """Return whether the ping was heard."""
        return "heard" if self.heard else "not heard"


class BeaconStep(StepRecord):
    """A beacon step: a step that pinged keeps what the ping found."""

    part_model: ClassVar[type[StepPart] | None] = PingRecord


class BeaconMessage(MessagePart):
    """The beacon part of an observation message."""

    signal: float = Field(ge=0.0, le=1.0)


def _to_message(observation: MissionObservation) -> BeaconMessage | None:
    if not isinstance(observation, BeaconObservation):
        return None
    return BeaconMessage(signal=observation.signal)


def _from_message(shared: MissionObservation, part: Any) -> BeaconObservation:
    fields = (shared.frames, shared.carrying, shared.events, shared.step, shared.clock)
    return BeaconObservation(*fields, shared.time_left, signal=part.signal)


VOCABULARY = WORDS.declare(
    Vocabulary(
        "beacon",
        actions={"ping": Ping},
        events=BeaconEvent,
        step_record=BeaconStep,
        observation=ObservationPart("beacon", BeaconMessage, _to_message, _from_message),
    )
)
