"""The household part of an observation message: the views, the task and the rounds so far.

A remote planner gets what ``HouseholdObservation`` holds: each view's RGB image as a PNG, the
executor's last answer, and every earlier round without its attempts (the skills' base paths).
``sortie.remote.wire`` adds this part to its observation message under ``household``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError

from sortie.core.messages import Image, WireError, decode_image, encode_image
from sortie.core.observation import Frames, MissionObservation
from sortie.core.vocabulary import MessagePart, ObservationPart
from sortie.missions.household.observation import VIEW_NAMES, HouseholdObservation
from sortie.missions.household.records import RoundRecord


class RoundMessage(MessagePart):
    """One earlier household round: the subtask named, how it ended, the executor's answer."""

    round: int = Field(ge=1)
    action: str
    target: str = ""
    place: str | None = None
    skill: str = ""
    verb: str | None = None
    target_object: str | None = None
    place_object: str | None = None
    status: Literal["success", "failure", "end"]
    code: str | None = None
    feedback: str = ""
    inventory: list[str] = Field(default_factory=list, max_length=10)


class HouseholdMessage(MessagePart):
    """The household part of an observation (``HouseholdObservation``).

    ``views`` are the head camera's RGB images by direction; ``detections`` per view the names
    of the things it shows (what a perfect detector reports), in the order of ``VIEW_NAMES``.
    """

    views: dict[Literal["front", "left", "back", "right"], Image] = Field(default_factory=dict)
    task: str = ""
    inventory: list[str] = Field(default_factory=list, max_length=10)
    history: list[RoundMessage] = Field(default_factory=list, max_length=1000)
    feedback: str = ""
    code: str | None = None
    detections: list[list[str]] = Field(default_factory=list, max_length=4)
    round: int = 0
    rounds_left: int = 0

    def images(self) -> list[Image]:
        """Return the views' images."""
        return list(self.views.values())


def to_message(observation: MissionObservation) -> HouseholdMessage | None:
    """Return the household part of an observation (None for the other families)."""
    if not isinstance(observation, HouseholdObservation):
        return None
    views = zip(VIEW_NAMES, observation.views, strict=False)
    return HouseholdMessage(
        views={name: encode_image(v.rgb) for name, v in views if v.rgb is not None},  # type: ignore[misc]
        task=observation.task,
        inventory=list(observation.inventory),
        history=[
            RoundMessage(**r.model_dump(mode="json", exclude={"attempts"}))
            for r in observation.history
            if isinstance(r, RoundRecord)
        ],
        feedback=observation.feedback,
        code=observation.code,
        detections=[list(names) for names in observation.detections],
        round=observation.round,
        rounds_left=observation.rounds_left,
    )


def from_message(shared: MissionObservation, part: Any) -> HouseholdObservation:
    """Return the household observation of the shared fields and the household part.

    Raises:
        WireError: a round sortie cannot read (422).
    """
    return HouseholdObservation(
        shared.frames,
        shared.carrying,
        shared.events,
        shared.step,
        shared.clock,
        shared.time_left,
        views=tuple(Frames(rgb=decode_image(part.views[n])) for n in VIEW_NAMES if n in part.views),
        task=part.task,
        inventory=tuple(part.inventory),
        history=tuple(_round(r) for r in part.history),
        feedback=part.feedback,
        code=part.code,
        detections=tuple(tuple(names) for names in part.detections),
        round=part.round,
        rounds_left=part.rounds_left,
    )


def _round(message: RoundMessage) -> RoundRecord:
    try:
        return RoundRecord.model_validate(message.model_dump())
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise WireError(
            422, "invalid", f"household round {message.round}: {where}: {first['msg']}"
        ) from None


OBSERVATION_PART = ObservationPart("household", HouseholdMessage, to_message, from_message)
"""How a household observation travels: under ``household`` in the observation message."""
