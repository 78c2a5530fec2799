"""Between sortie's records (Brief, MissionObservation, actions) and the wire's messages."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from sortie.core.actions import Action
from sortie.core.errors import ConfigError
from sortie.core.observation import (
    ActionLimits,
    Brief,
    CameraInfo,
    Event,
    Frames,
    MissionObservation,
)
from sortie.core.pose import Pose
from sortie.core.serialize import action_to_dict
from sortie.core.vocabulary import WORDS
from sortie.remote.wire import (
    OBSERVATION_PARTS,
    BriefMessage,
    Camera,
    EventMessage,
    Image,
    Limits,
    ObservationFields,
    ObservationMessage,
    PoseReading,
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
            EventMessage(kind=str(e.kind), target=e.target, detail=e.detail)
            for e in observation.events
        ],
        step=observation.step,
        clock=observation.clock,
        time_left=observation.time_left,
        pose=None if observation.pose is None else PoseReading(**asdict(observation.pose)),
        **_parts_to_wire(observation),
    )


def _parts_to_wire(observation: MissionObservation) -> dict[str, Any]:
    """Return the family part of an observation by its message field (empty: none)."""
    for key, declared in OBSERVATION_PARTS.items():
        part = declared.to_message(observation)
        if part is not None:
            return {key: part}
    return {}


def observation_from_wire(message: ObservationFields) -> MissionObservation:
    """Return the MissionObservation a wire observation describes (its family's, with a part).

    Raises:
        WireError: an event kind or a family part sortie does not know (422).
    """
    frames = Frames(**{name: decode_image(image) for name, image in message.frames.items()})
    shared = MissionObservation(
        frames,
        message.carrying,
        tuple(_event(e) for e in message.events),
        message.step,
        message.clock,
        message.time_left,
        None if message.pose is None else Pose(**message.pose.model_dump()),
    )
    found = message.part()
    if found is None:
        return shared
    declared, part = found
    observation: MissionObservation = declared.from_message(shared, part)
    return observation


def action_to_wire(action: Action) -> Any:
    """Return a sortie action as a validated wire action."""
    return read_action(action_to_dict(action))


def action_from_wire(action: Any) -> Action:
    """Return the sortie action of a validated wire action (its fields are the action's)."""
    fields = action.model_dump(exclude={"type"})
    rebuilt: Action = WORDS.action(action.type)(**fields)
    return rebuilt


def _event(message: EventMessage) -> Event:
    try:
        kind = WORDS.event(message.kind)
    except ConfigError:
        allowed = ", ".join(WORDS.events())
        raise WireError(
            422, "invalid", f"event kind {message.kind!r}; allowed: {allowed}"
        ) from None
    return Event(kind, message.target, message.detail)
