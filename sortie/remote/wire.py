"""The wire format of remote agents: versioned JSON messages, images as PNG (docs/remote.md).

Both ends validate every message with these pydantic models. The module needs nothing of
sortie's runtime (no agent, mission or backend), so a policy served through
``sortie.remote.policy`` deals only in these messages.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
from typing import Annotated, Any, Literal, TypeVar, Union

import numpy as np
from numpy.typing import NDArray
from PIL import Image as PILImage
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from sortie.core.actions import Action, Move
from sortie.core.errors import SortieError
from sortie.core.serialize import action_models
from sortie.missions.registry import FAMILIES

SCHEMA_VERSION = 2
"""The version every message carries; an end refuses messages of another version.

2: household missions (the brief's actions and skills, the household part of observations).
"""
MAX_REQUEST_BYTES = 32 * 2**20
"""The largest request a server reads (a brief with reference images stays far below)."""
MAX_RESPONSE_BYTES = 4 * 2**20
"""The largest answer the sortie side reads."""


class WireError(SortieError):
    """A message broke the wire format: ``status`` is the HTTP status it is answered with."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.status, self.code, self.message = status, code, message


class WireModel(BaseModel):
    """A wire record: unknown fields refused, no NaN or infinity, immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


# --- images ---------------------------------------------------------------------------
class Image(WireModel):
    """One image as a base64 PNG.

    ``uint8`` images are (H, W), (H, W, 3) or (H, W, 4) PNGs as they are. ``float32`` (depth,
    metres) and ``int32`` (semantic ids) images are (H, W): each value's four little-endian
    bytes are the RGBA channels of the PNG, so they travel bit for bit.
    """

    encoding: Literal["png"] = "png"
    dtype: Literal["uint8", "float32", "int32"]
    shape: tuple[int, ...]
    data: str


def encode_image(array: NDArray[Any]) -> Image:
    """Return ``array`` (uint8, float32 or int32) as a wire image."""
    dtype = str(array.dtype)
    if dtype not in ("uint8", "float32", "int32"):
        raise WireError(422, "invalid", f"image of dtype {dtype}; allowed: uint8, float32, int32")
    pixels = array if dtype == "uint8" else _as_rgba(array)
    buffer = io.BytesIO()
    PILImage.fromarray(np.ascontiguousarray(pixels)).save(buffer, format="PNG", compress_level=1)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return Image(dtype=dtype, shape=tuple(array.shape), data=data)  # type: ignore[arg-type]


MAX_PIXELS = 4096 * 4096
"""Largest image (width × height) a message may carry; a PNG is checked before it is unpacked."""
MAX_IMAGES = 8
"""Most images one message may carry (an observation has at most seven: three frames and four
household views)."""
MAX_MESSAGE_PIXELS = 4096 * 4096
"""Most pixels all of one message's images may declare together, checked before any is
unpacked: decoding costs about four bytes a pixel, so a message stays under about 70 MB."""


def check_image_budget(images: list[Image]) -> None:
    """Raise ValueError if ``images`` are too many or declare too many pixels together."""
    if len(images) > MAX_IMAGES:
        raise ValueError(f"{len(images)} images; at most {MAX_IMAGES} a message")
    pixels = sum(
        max(image.shape[0], 0) * max(image.shape[1], 0) for image in images if len(image.shape) > 1
    )
    if pixels > MAX_MESSAGE_PIXELS:
        raise ValueError(f"images of {pixels} pixels together; at most {MAX_MESSAGE_PIXELS}")


def _uint8_modes(shape: tuple[int, ...]) -> tuple[str, ...]:
    """Return the PNG modes a uint8 image of ``shape`` may come in (none: a shape not allowed)."""
    if len(shape) == 2:
        return ("L",)
    if len(shape) == 3:
        return {3: ("RGB",), 4: ("RGBA",)}.get(shape[2], ())
    return ()


def _depth_modes(shape: tuple[int, ...]) -> tuple[str, ...]:
    """Return the PNG modes of a float32 or int32 image of ``shape``: RGBA, and only (H, W)."""
    return ("RGBA",) if len(shape) == 2 else ()


def decode_image(image: Image) -> NDArray[Any]:
    """Return the array of a wire image; raise WireError (422) if it is not what it says."""
    try:
        png = PILImage.open(io.BytesIO(base64.b64decode(image.data, validate=True)))
        _check_header(png, image)
        pixels = np.asarray(png)
    except (binascii.Error, OSError, ValueError, PILImage.DecompressionBombError) as error:
        raise WireError(422, "invalid", f"image: not a base64 PNG ({error})") from None
    if image.dtype != "uint8":
        pixels = _from_rgba(pixels, image.dtype)
    if pixels.shape != tuple(image.shape):
        raise WireError(
            422, "invalid", f"image: PNG holds shape {pixels.shape}, message says {image.shape}"
        )
    return pixels


def _check_header(png: PILImage.Image, image: Image) -> None:
    """Refuse a PNG whose size or mode differs from the message's, before unpacking it."""
    modes = _uint8_modes(image.shape) if image.dtype == "uint8" else _depth_modes(image.shape)
    if not modes:
        allowed = "(H, W), (H, W, 3) or (H, W, 4)" if image.dtype == "uint8" else "(H, W)"
        raise WireError(
            422, "invalid", f"image: {image.dtype} of shape {list(image.shape)}; allowed: {allowed}"
        )
    height, width = image.shape[0], image.shape[1]
    if width * height > MAX_PIXELS:
        raise WireError(422, "invalid", f"image of {width}×{height} pixels; at most {MAX_PIXELS}")
    if png.size != (width, height):
        raise WireError(
            422,
            "invalid",
            f"image: PNG is {png.size[0]}×{png.size[1]}, message says {width}×{height}",
        )
    if png.mode not in modes:
        raise WireError(
            422, "invalid", f"image: PNG mode {png.mode} for {image.dtype} {image.shape}"
        )


def _as_rgba(array: NDArray[Any]) -> NDArray[np.uint8]:
    if array.ndim != 2:
        raise WireError(422, "invalid", f"{array.dtype} image of shape {array.shape}; need (H, W)")
    little = array.astype(array.dtype.newbyteorder("<"), copy=False)
    return np.ascontiguousarray(little).view(np.uint8).reshape(*array.shape, 4)


def _from_rgba(pixels: NDArray[Any], dtype: str) -> NDArray[Any]:
    if pixels.ndim != 3 or pixels.shape[2] != 4 or pixels.dtype != np.uint8:
        raise WireError(422, "invalid", f"{dtype} image: the PNG is not 8-bit RGBA")
    raw = np.ascontiguousarray(pixels).view(np.dtype(dtype).newbyteorder("<"))
    return raw.reshape(pixels.shape[:2]).astype(dtype)


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


class RoundMessage(WireModel):
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


class HouseholdMessage(WireModel):
    """The household part of an observation (``sortie.core.observation.HouseholdObservation``).

    ``views`` are the head camera's RGB images by direction; ``detections`` per view the names
    of the things it shows (what a perfect detector reports), in the order of ``VIEWS``.
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


VIEWS = ("front", "left", "back", "right")
"""The household views, in the order the planner is given them."""


class ObservationMessage(WireModel):
    """What the agent perceives after a step: its images and state, never its position.

    A household observation also has ``household`` (the front view is ``frames["rgb"]``).
    """

    frames: dict[Literal["rgb", "depth", "semantic"], Image] = Field(default_factory=dict)
    carrying: bool
    events: list[EventMessage] = Field(default_factory=list)
    step: int
    clock: float
    time_left: float
    household: HouseholdMessage | None = None

    @model_validator(mode="after")
    def _images_within_budget(self) -> ObservationMessage:
        views = list(self.household.views.values()) if self.household else []
        check_image_budget([*self.frames.values(), *views])
        return self

    def image(self, name: str) -> NDArray[Any] | None:
        """Return the ``rgb``, ``depth`` or ``semantic`` image, or None if not sent."""
        frame = self.frames.get(name)  # type: ignore[call-overload]
        return decode_image(frame) if frame is not None else None


# --- actions ----------------------------------------------------------------------------
WIRE_ACTIONS: dict[type[Action], type[BaseModel]] = action_models(WireModel)
"""The wire form of each action type, derived from ``sortie.core.actions``."""
MoveAction = WIRE_ACTIONS[Move]
WireAction: Any = Annotated[
    Union[tuple(WIRE_ACTIONS.values())],  # noqa: UP007  (a union of the derived models)
    Field(discriminator="type"),
]
ACTIONS: TypeAdapter[Any] = TypeAdapter(WireAction)


def family_actions(family: str) -> tuple[type[BaseModel], ...] | None:
    """Return the wire action types ``family`` accepts (its descriptor's), None if unknown."""
    if family not in FAMILIES:
        return None
    return tuple(WIRE_ACTIONS[kind] for kind in FAMILIES.get(family).actions)


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
    sensors: list[Literal["rgb", "depth", "semantic"]] = Field(default_factory=list)


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
