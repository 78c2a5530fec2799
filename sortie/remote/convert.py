"""Between sortie's records (Brief, MissionObservation, actions) and the wire's messages."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from pydantic import ValidationError

from sortie.core.actions import ACTION_TYPES, Action
from sortie.core.household import RoundRecord
from sortie.core.observation import (
    VIEW_NAMES,
    ActionLimits,
    Brief,
    CameraInfo,
    Event,
    EventKind,
    Frames,
    HouseholdObservation,
    MissionObservation,
)
from sortie.core.serialize import action_to_dict
from sortie.remote.wire import (
    BriefMessage,
    Camera,
    EventMessage,
    HouseholdMessage,
    Image,
    Limits,
    ObservationMessage,
    RoundMessage,
    SkillInfo,
    StageInfo,
    WireError,
    action_schema,
    decode_image,
    encode_image,
    read_action,
)

_SENSORS = ("rgb", "depth", "semantic")


def brief_to_wire(brief: Brief) -> BriefMessage:
    """Return the brief as a wire message, with its family's action schema."""
    camera = brief.camera
    return BriefMessage(
        family=brief.family,
        level=brief.level,
        text=brief.text,
        clue=brief.clue,
        images={name: encode_image(image) for name, image in brief.images.items()},
        stages=[StageInfo(name=name, instruction=text) for name, text in brief.stages],
        control_period=brief.control_period,
        budget_s=brief.budget_s,
        semantic_classes=dict(brief.semantic_classes),
        limits=Limits(**asdict(brief.limits)),
        camera=None if camera is None else Camera(**asdict(camera)),
        action_schema=action_schema(brief.family),
        actions=list(brief.actions),
        skills=[SkillInfo(name=name, role=role) for name, role in brief.skills],
    )


def brief_from_wire(message: BriefMessage) -> Brief:
    """Return the Brief a wire brief describes (its images decoded)."""
    camera = message.camera
    return Brief(
        message.family,
        message.level,
        message.text,
        clue=message.clue,
        images={name: decode_image(image) for name, image in message.images.items()},
        stages=tuple((stage.name, stage.instruction) for stage in message.stages),
        control_period=message.control_period,
        budget_s=message.budget_s,
        semantic_classes=dict(message.semantic_classes),
        limits=ActionLimits(**message.limits.model_dump()),
        camera=None if camera is None else CameraInfo(**camera.model_dump()),
        actions=tuple(message.actions),
        skills=tuple((skill.name, skill.role) for skill in message.skills),
    )


def observation_to_wire(observation: MissionObservation) -> ObservationMessage:
    """Return the observation as a wire message (the images it holds as PNGs)."""
    frames: dict[str, Image] = {}
    for name in _SENSORS:
        array = getattr(observation.frames, name)
        if array is not None:
            frames[name] = encode_image(array)
    return ObservationMessage(
        frames=frames,  # type: ignore[arg-type]
        carrying=observation.carrying,
        events=[
            EventMessage(kind=e.kind.value, target=e.target, detail=e.detail)
            for e in observation.events
        ],
        step=observation.step,
        clock=observation.clock,
        time_left=observation.time_left,
        household=_household_to_wire(observation),
    )


def observation_from_wire(message: ObservationMessage) -> MissionObservation:
    """Return the MissionObservation a wire observation describes.

    Raises:
        WireError: an event kind or a household round sortie does not know (422).
    """
    frames = Frames(**{name: decode_image(image) for name, image in message.frames.items()})
    common = (
        frames,
        message.carrying,
        tuple(_event(e) for e in message.events),
        message.step,
        message.clock,
        message.time_left,
    )
    part = message.household
    if part is None:
        return MissionObservation(*common)
    return HouseholdObservation(
        *common,
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


def _household_to_wire(observation: MissionObservation) -> HouseholdMessage | None:
    """Return the household part of an observation (None for the other families).

    Each round of the history travels without its attempts (the skills' base paths).
    """
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


def _round(message: RoundMessage) -> RoundRecord:
    try:
        return RoundRecord.model_validate(message.model_dump())
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise WireError(
            422, "invalid", f"household round {message.round}: {where}: {first['msg']}"
        ) from None


def action_to_wire(action: Action) -> Any:
    """Return a sortie action as a validated wire action."""
    return read_action(action_to_dict(action))


def action_from_wire(action: Any) -> Action:
    """Return the sortie action of a validated wire action (its fields are the action's)."""
    fields = action.model_dump(exclude={"type"})
    rebuilt: Action = ACTION_TYPES[action.type](**fields)
    return rebuilt


def _event(message: EventMessage) -> Event:
    try:
        kind = EventKind(message.kind)
    except ValueError:
        allowed = ", ".join(k.value for k in EventKind)
        raise WireError(
            422, "invalid", f"event kind {message.kind!r}; allowed: {allowed}"
        ) from None
    return Event(kind, message.target, message.detail)
