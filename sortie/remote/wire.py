"""The wire format of remote agents: versioned JSON messages, images as PNG (docs/remote.md).

Both ends validate every message with these pydantic models. The module needs nothing of
sortie's runtime (no agent, backend or mission rules), so a policy served through
``sortie.remote.policy`` deals only in these messages. Its actions and observation message
derive from the words the families declare (``sortie.core.vocabulary``): every family is
looked up when the module is imported, so a family registered later (a test's
``FAMILIES.override``) is checked by its own action models, but its observation part does not
travel.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, Union

from numpy.typing import NDArray
from pydantic import (
    BaseModel,
    Field,
    TypeAdapter,
    ValidationError,
    create_model,
    model_validator,
)

from sortie.core.messages import MAX_IMAGES as MAX_IMAGES
from sortie.core.messages import MAX_MESSAGE_PIXELS as MAX_MESSAGE_PIXELS
from sortie.core.messages import MAX_PIXELS as MAX_PIXELS
from sortie.core.messages import Image as Image
from sortie.core.messages import MessageModel
from sortie.core.messages import WireError as WireError
from sortie.core.messages import check_image_budget as check_image_budget
from sortie.core.messages import decode_image as decode_image
from sortie.core.messages import encode_image as encode_image
from sortie.core.serialize import action_model, action_models
from sortie.core.vocabulary import WORDS, MessagePart, ObservationPart
from sortie.missions.registry import FAMILIES

SCHEMA_VERSION = 2
"""The version every message carries; an end refuses messages of another version.

2: household missions (the brief's actions and skills, the household part of observations).
"""
MAX_REQUEST_BYTES = 32 * 2**20
"""The largest request a server reads (a brief with reference images stays far below)."""
MAX_RESPONSE_BYTES = 4 * 2**20
"""The largest answer the sortie side reads."""


class WireModel(MessageModel):
    """A wire record: unknown fields refused, no NaN or infinity, immutable."""


# --- the brief --------------------------------------------------------------------------
class Limits(WireModel):
    """The largest action the mission accepts per step (None: not this family's control)."""

    max_turn: float
    max_speed: float | None = None
    max_move: float | None = None
    max_steps: int | None = None


class Camera(WireModel):
    """The agent's camera: pixels, horizontal field of view and pitch in degrees."""

    width: int
    height: int
    hfov: float
    pitch: float


class PoseReading(WireModel):
    """The pose sensor's reading: metres and degrees, in the frame the run chose."""

    x: float
    y: float
    z: float
    yaw: float


class StageInfo(WireModel):
    """One stage of the mission and its instruction."""

    name: str
    instruction: str


class SkillInfo(WireModel):
    """A skill offered to a household planner, and what it is for."""

    name: str
    role: str


class BriefMessage(WireModel):
    """What the agent is told when an episode starts (``sortie.core.observation.Brief``).

    ``action_schema`` is the JSON schema of the actions the family accepts; ``actions`` and
    ``skills`` are what a household planner may name (empty for the other families).
    """

    family: str
    level: str
    text: str
    clue: str = ""
    images: dict[str, Image] = Field(default_factory=dict)
    stages: list[StageInfo] = Field(default_factory=list)
    control_period: float
    budget_s: float
    semantic_classes: dict[int, str] = Field(default_factory=dict)
    limits: Limits
    camera: Camera | None = None
    action_schema: dict[str, Any] = Field(default_factory=dict)
    actions: list[str] = Field(default_factory=list, max_length=100)
    skills: list[SkillInfo] = Field(default_factory=list, max_length=100)

    @model_validator(mode="after")
    def _images_within_budget(self) -> BriefMessage:
        check_image_budget(list(self.images.values()))
        return self

    def image(self, name: str) -> NDArray[Any] | None:
        """Return the named reference image as an array, or None if the brief has none."""
        return decode_image(self.images[name]) if name in self.images else None


# --- observations -----------------------------------------------------------------------
class EventMessage(WireModel):
    """Something that happened in the last step (a contact, a pick-up, an invalid action)."""

    kind: str
    target: str | None = None
    detail: str = ""


class ObservationFields(WireModel):
    """The shared fields of an observation message: images, state, the pose if it is read."""

    frames: dict[Literal["rgb", "depth", "semantic"], Image] = Field(default_factory=dict)
    carrying: bool
    events: list[EventMessage] = Field(default_factory=list)
    step: int
    clock: float
    time_left: float
    # Left out while None: a server of an older sortie, which refuses unknown fields, reads
    # every observation of an agent without the pose sensor as before.
    pose: PoseReading | None = Field(default=None, exclude_if=lambda value: value is None)

    @model_validator(mode="after")
    def _images_within_budget(self) -> ObservationFields:
        parts = [getattr(self, key) for key in OBSERVATION_PARTS]
        images = [image for part in parts if part is not None for image in part.images()]
        check_image_budget([*self.frames.values(), *images])
        return self

    def image(self, name: str) -> NDArray[Any] | None:
        """Return the ``rgb``, ``depth`` or ``semantic`` image, or None if not sent."""
        frame = self.frames.get(name)  # type: ignore[call-overload]
        return decode_image(frame) if frame is not None else None

    def part(self) -> tuple[ObservationPart, MessagePart] | None:
        """Return the family part this message holds, with how it is read (None: none)."""
        for key, declared in OBSERVATION_PARTS.items():
            value = getattr(self, key, None)
            if value is not None:
                return declared, value
        return None


def _observation_parts() -> dict[str, ObservationPart]:
    """Return each family's observation part by its field name, the families found first."""
    parts = [v.observation for v in WORDS.families().values() if v.observation is not None]
    return {part.key: part for part in sorted(parts, key=lambda part: part.key)}


OBSERVATION_PARTS = _observation_parts()
"""The families' own parts of an observation message, by field (``household``...)."""
if TYPE_CHECKING:  # the fields every observation has; the families' parts are added below
    ObservationMessage = ObservationFields
else:
    ObservationMessage = create_model(
        "ObservationMessage",
        __base__=ObservationFields,
        __doc__="What the agent perceives after a step; a family's own part under its key.",
        **{key: (part.model | None, None) for key, part in OBSERVATION_PARTS.items()},
    )


# --- actions ----------------------------------------------------------------------------
WIRE_ACTIONS: dict[str, type[BaseModel]] = action_models(WireModel)
"""The wire form of each declared action type (the families' too), by its type name."""
MoveAction = WIRE_ACTIONS["move"]
WireAction: Any = Annotated[
    Union[tuple(WIRE_ACTIONS.values())],  # noqa: UP007  (a union of the derived models)
    Field(discriminator="type"),
]
ACTIONS: TypeAdapter[Any] = TypeAdapter(WireAction)


def family_actions(family: str) -> tuple[type[BaseModel], ...] | None:
    """Return the wire action types ``family`` accepts (its descriptor's), None if unknown."""
    if family not in FAMILIES:
        return None
    names = (WORDS.action_name(kind) for kind in FAMILIES.get(family).actions)
    return tuple(action_model(name, WireModel) for name in names)  # a late family's too


def action_schema(family: str) -> dict[str, Any]:
    """Return the JSON schema of the actions ``family`` accepts (all types if it is unknown)."""
    kinds = family_actions(family)
    if not kinds:
        return ACTIONS.json_schema()
    if len(kinds) == 1:
        return TypeAdapter(kinds[0]).json_schema()
    union = Annotated[Union[kinds], Field(discriminator="type")]  # type: ignore[valid-type]  # noqa: UP007
    return TypeAdapter(union).json_schema()


def read_action(value: Any) -> Any:
    """Return ``value`` (a dict or an action model) as a validated wire action.

    Raises:
        WireError: (422, ``invalid_action``) it is not one of the actions above.
    """
    if isinstance(value, BaseModel):
        value = value.model_dump()
    try:
        return ACTIONS.validate_python(value)
    except ValidationError as error:
        raise WireError(422, "invalid_action", f"{_cut(value)}: {_summary(error)}") from None


# --- messages ---------------------------------------------------------------------------
SESSION = r"^[A-Za-z0-9_-]{1,64}$"


class Message(WireModel):
    """Every message carries the schema version."""

    schema_version: int = SCHEMA_VERSION


class Hello(Message):
    """``GET /v1/hello``: who serves, which families it plays, which images it needs."""

    agent: str
    families: list[str] | None = None
    sensors: list[Literal["rgb", "depth", "semantic", "pose"]] = Field(default_factory=list)


class ResetRequest(Message):
    """``POST /v1/reset``: start episode ``session`` with this seed and brief."""

    session: str = Field(pattern=SESSION)
    seed: int = Field(ge=0, lt=2**63)
    brief: BriefMessage


class ResetResponse(Message):
    """The answer to a reset."""

    session: str


class ActRequest(Message):
    """``POST /v1/act``: the observation after ``step`` steps of ``session``."""

    session: str = Field(pattern=SESSION)
    step: int = Field(ge=0)
    observation: ObservationMessage


class ModelCall(WireModel):
    """A model call the served agent made for this action (the run's usage table counts it)."""

    model: str
    latency: float = Field(ge=0)
    tokens_in: int = Field(default=0, ge=0)
    tokens_out: int = Field(default=0, ge=0)
    attempts: int = Field(default=1, ge=1)
    cached: bool = False
    error: str | None = None
    format: str | None = Field(default=None, exclude_if=lambda v: v is None)
    finish_reason: str | None = Field(default=None, exclude_if=lambda v: v is None)
    reasoning: str | None = Field(default=None, exclude_if=lambda v: v is None)
    chat_template: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """These four only when said (``sortie.core.records.ModelCallRecord``): the format asked
    in, why the answer ended, the model's thinking, the chat template that served it."""
    waited: float = Field(default=0.0, ge=0, exclude_if=lambda v: not v)
    failed_time: float = Field(default=0.0, ge=0, exclude_if=lambda v: not v)
    served: str | None = Field(default=None, exclude_if=lambda v: v is None)
    cost: float | None = Field(default=None, ge=0, exclude_if=lambda v: v is None)
    """These four only when not 0 or None, as in the record: the seconds waited before
    retries and spent in failed attempts, the model the server served, the call's cost."""


class ActResponse(Message):
    """The agent's action, its words if it has any, and the model calls it made."""

    action: WireAction
    text: str | None = None
    calls: list[ModelCall] = Field(default_factory=list)


M = TypeVar("M", bound=Message)


class ErrorResponse(Message):
    """A 4xx or 5xx answer: a code (``malformed``, ``schema_version``, ...) and why."""

    error: str
    message: str


def parse_message(kind: type[M], body: bytes, limit: int = MAX_REQUEST_BYTES) -> M:
    """Return ``body`` read as a ``kind`` message.

    Raises:
        WireError: too large (413), not a JSON object (400, ``malformed``), another schema
            version (400, ``schema_version``), or not a valid ``kind`` (422, ``invalid``).
    """
    if len(body) > limit:
        raise WireError(413, "too_large", f"message of {len(body)} bytes; at most {limit}")
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as error:
        raise WireError(400, "malformed", f"not JSON ({str(error)[:200]})") from None
    if not isinstance(data, dict):
        raise WireError(400, "malformed", f"a JSON object is needed, got {type(data).__name__}")
    check_version(data)
    try:
        return kind.model_validate(data)
    except ValidationError as error:
        raise WireError(422, "invalid", f"{kind.__name__}: {_summary(error)}") from None


def check_version(data: dict[str, Any]) -> None:
    """Raise WireError (400, ``schema_version``) unless ``data`` speaks this version."""
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise WireError(
            400,
            "schema_version",
            f"schema_version {version!r} is not spoken here; this end speaks {SCHEMA_VERSION}",
        )


def _summary(error: ValidationError) -> str:
    """Return pydantic's errors on one line: where, what was found, what is allowed."""
    parts = [
        f"{'.'.join(str(p) for p in e['loc']) or 'message'}: {e['msg']}" for e in error.errors()[:5]
    ]
    return "; ".join(parts)


def _cut(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 300 else text[:300] + " [cut]"


def content_length(text: str | None) -> int | None:
    """Return a Content-Length header's value, or None unless it is a plain, sane number."""
    if text is None or not (text.isascii() and text.isdecimal() and len(text) <= 12):
        return None
    return int(text)
