"""Episode specifications: which world to build, where the agent starts, what the mission is."""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    Strict,
    model_validator,
)

from sortie.core.errors import ParameterError
from sortie.core.pose import Pose

SCHEMA_VERSION = 1
POSTURES = ("standing", "lying")
"""What a placed person can be built as (``sortie.sim.assets.people.add_person``)."""
"""Version of the episode and suite-header layout (trajectory records have their own)."""

MAX_COORDINATE = 1e6
"""Largest absolute coordinate (metres) or angle (degrees) a pose may hold."""
NAME_LIMIT = 100
"""Longest name (a scene object, a builder, a suite, a run id, a parameter)."""
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+=\-]*")


def check_name(name: str, what: str = "name") -> str:
    """Return ``name`` if it is safe as one file or folder name and in a terminal; raise otherwise.

    Safe: letters, digits and ``. _ - = +``, starting with a letter, digit or ``_``, at most
    ``NAME_LIMIT`` characters; so no ``/``, ``..``, absolute paths, NUL bytes or markup.

    Raises:
        ParameterError: the name is empty, too long or has other characters (a ValueError, so
            pydantic reports it as the field's error).
    """
    shown = repr(name) if len(name) <= 60 else f"{name[:40]!r}... ({len(name)} characters)"
    if len(name) > NAME_LIMIT:
        raise ParameterError(f"{what} {shown} is longer than {NAME_LIMIT} characters")
    if not _NAME.fullmatch(name):
        raise ParameterError(
            f"{what} {shown}: use only letters, digits and . _ - = + (starting "
            "with a letter, digit or _), so it can name a file"
        )
    return name


def check_episode_id(value: str) -> str:
    """Return ``value`` if it is safe names joined by ``/`` (at most 3), else raise ValueError."""
    parts = value.split("/")
    if len(parts) > 3:
        raise ValueError(f"episode id {value[:60]!r}: at most 3 parts joined by '/'")
    shown = value if len(value) <= 60 else value[:40] + "..."
    for part in parts:
        check_name(part, f"episode id {shown!r}: part")
        if "__" in part:  # record files join the parts with "__": keep that reversible
            raise ValueError(f"episode id {shown!r}: '__' is not allowed inside a part")
    return value


Name = Annotated[str, AfterValidator(check_name)]
"""A name that is safe in a file name and a terminal: see ``check_name``."""
EpisodeId = Annotated[str, AfterValidator(check_episode_id)]
"""An episode id: safe names joined by ``/``, e.g. ``rescue-l3-v2/0007``."""


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {type(value).__name__}")
    if isinstance(value, int) and abs(value) > MAX_COORDINATE:
        raise ValueError(f"expected a number within ±{MAX_COORDINATE:g}, got {value}")
    number = float(value)
    if not math.isfinite(number) or abs(number) > MAX_COORDINATE:
        raise ValueError(f"expected a finite number within ±{MAX_COORDINATE:g}, got {number}")
    return number


def _pose_from_json(value: Any) -> Pose:
    if type(value) is Pose and all(_plain_coordinate(v) for v in value.as_list()):
        return value  # what the checks below would rebuild: a frozen Pose of the same floats
    if isinstance(value, Pose):
        value = value.as_list()
    if not isinstance(value, list | tuple) or len(value) != 4:
        got = f"{len(value)}" if isinstance(value, list | tuple) else type(value).__name__
        raise ValueError(f"expected 4 numbers [x, y, z, yaw], got {got}")
    return Pose(*(_number(v) for v in value))


def _plain_coordinate(value: Any) -> bool:
    """Return whether ``value`` is a float ``_number`` would return unchanged (NaN is not)."""
    return type(value) is float and -MAX_COORDINATE <= value <= MAX_COORDINATE


PoseField = Annotated[
    Pose,
    BeforeValidator(_pose_from_json),
    PlainSerializer(lambda p: p.as_list(), return_type=list),
]
"""A Pose stored in JSON as ``[x, y, z, yaw]``."""


class Record(BaseModel):
    """Base of sortie's I/O records: frozen, strict about unknown fields, finite numbers only."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class WorldSpec(Record):
    """How to build a world: the builder's name, its seed and its parameters."""

    builder: Name
    """Name of a registered world builder, e.g. ``suburb``."""
    seed: int = Field(ge=0, lt=2**63)
    """Seed of the builder's random generator."""
    params: dict[Name, float | int | Annotated[str, Field(max_length=200)]] = Field(
        default_factory=dict, max_length=64
    )
    """Builder parameters; defaults fill what is missing."""


class Placement(Record):
    """An object an episode adds to its world (the casualty, the stretcher, the ambulance)."""

    asset: Name
    """Kind of object, e.g. ``person``, ``stretcher``, ``ambulance``."""
    name: Name
    """Its name in the scene; episode targets refer to it."""
    pose: PoseField
    """Where it stands (base point) and which way it faces."""
    attributes: dict[Name, Annotated[str, Field(max_length=200)]] = Field(
        default_factory=dict, max_length=64
    )
    """Looks that clues may quote, e.g. ``{"posture": "lying", "top_color": "red"}``."""

    @model_validator(mode="after")
    def _posture_is_one_a_person_can_take(self) -> Placement:
        posture = self.attributes.get("posture")
        if self.asset == "person" and posture is not None and posture not in POSTURES:
            raise ValueError(
                f"placement {self.name!r}: posture {posture!r}; allowed: {', '.join(POSTURES)}"
            )
        return self


Version = Annotated[int, Strict()]
"""A layout version: an integer as written, never a string or a boolean read as one."""


class EpisodeSpec(Record):
    """One episode: the world, the start pose and the mission's own data."""

    schema_version: Version = SCHEMA_VERSION
    """Version of this record's layout."""
    episode_id: EpisodeId
    """Unique id within its suite, e.g. ``rescue-l3-v2/0007``."""
    family: Name
    """Mission family: ``rescue``, ``aerial`` or ``household``."""
    level: Annotated[str, Field(max_length=NAME_LIMIT, pattern=r"^[A-Za-z0-9_.+\-]*$")] = ""
    """Difficulty level or mission type tag, e.g. ``L3``."""
    world: WorldSpec
    """The world to build."""
    start: PoseField
    """The agent's start pose."""
    placements: list[Placement] = Field(default_factory=list, max_length=1000)
    """Objects added to the built world for this episode."""
    targets: dict[Name, Name] = Field(default_factory=dict, max_length=64)
    """Roles of named scene objects, e.g. ``{"casualty": "person_3"}``."""
    mission: dict[str, Any] = Field(default_factory=dict)
    """Family-specific data (clues, budgets, expected answers), validated by the family."""
