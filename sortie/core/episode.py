"""Episode specifications: which world to build, where the agent starts, what the mission is."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer

from sortie.core.pose import Pose

SCHEMA_VERSION = 1


def _pose_from_json(value: Any) -> Pose:
    if isinstance(value, Pose):
        return value
    if not isinstance(value, list | tuple) or len(value) != 4:
        got = f"{len(value)}" if isinstance(value, list | tuple) else type(value).__name__
        raise ValueError(f"expected 4 numbers [x, y, z, yaw], got {got}")
    return Pose(*(float(v) for v in value))


PoseField = Annotated[
    Pose,
    BeforeValidator(_pose_from_json),
    PlainSerializer(lambda p: p.as_list(), return_type=list),
]
"""A Pose stored in JSON as ``[x, y, z, yaw]``."""


class Record(BaseModel):
    """Base of sortie's I/O records: frozen, strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class WorldSpec(Record):
    """How to build a world: the builder's name, its seed and its parameters."""

    builder: str
    """Name of a registered world builder, e.g. ``suburb``."""
    seed: int = Field(ge=0)
    """Seed of the builder's random generator."""
    params: dict[str, float | int | str] = Field(default_factory=dict)
    """Builder parameters; defaults fill what is missing."""


class Placement(Record):
    """An object an episode adds to its world (the casualty, the stretcher, the ambulance)."""

    asset: str
    """Kind of object, e.g. ``person``, ``stretcher``, ``ambulance``."""
    name: str
    """Its name in the scene; episode targets refer to it."""
    pose: PoseField
    """Where it stands (base point) and which way it faces."""
    attributes: dict[str, str] = Field(default_factory=dict)
    """Looks that clues may quote, e.g. ``{"posture": "lying", "top_color": "red"}``."""


class EpisodeSpec(Record):
    """One episode: the world, the start pose and the mission's own data."""

    schema_version: int = SCHEMA_VERSION
    """Version of this record's layout."""
    episode_id: str
    """Unique id within its suite, e.g. ``rescue-l3-v1/0007``."""
    family: str
    """Mission family: ``rescue``, ``aerial`` or ``household``."""
    level: str = ""
    """Difficulty level or mission type tag, e.g. ``L3``."""
    world: WorldSpec
    """The world to build."""
    start: PoseField
    """The agent's start pose."""
    placements: list[Placement] = Field(default_factory=list)
    """Objects added to the built world for this episode."""
    targets: dict[str, str] = Field(default_factory=dict)
    """Roles of named scene objects, e.g. ``{"casualty": "person_3"}``."""
    mission: dict[str, Any] = Field(default_factory=dict)
    """Family-specific data (clues, budgets, expected answers), validated by the family."""
