"""What a rescue episode carries beyond the common EpisodeSpec, and the five levels."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated

from pydantic import Field

from sortie.core.episode import MAX_COORDINATE, EpisodeSpec, Name, Record
from sortie.core.errors import ConfigError

Coordinate = Annotated[float, Field(ge=-MAX_COORDINATE, le=MAX_COORDINATE)]
Point = Annotated[list[Coordinate], Field(min_length=3, max_length=3)]
View = Annotated[list[Coordinate], Field(min_length=5, max_length=5)]
MAX_BUDGET_S = 3600.0
"""Longest mission clock a suite may ask for (the paper's levels use 180–300 s)."""
TEXT_LENGTH = 4000


class RescueData(Record):
    """The ``mission`` part of a rescue EpisodeSpec, validated by this family."""

    clue_text: str = Field(max_length=TEXT_LENGTH)
    """The text clue the agent gets (style depends on the level)."""
    reference_view: View
    """Camera pose ``[x, y, z, yaw, pitch]`` the reference image is rendered from."""
    budget_s: float = Field(gt=0, le=MAX_BUDGET_S)
    """Mission clock budget in seconds."""
    path_distance: float = Field(ge=0, le=MAX_COORDINATE)
    """Walkable distance from the start to the casualty (the level's d), metres."""
    shortest_length: float = Field(ge=0, le=MAX_COORDINATE)
    """Shortest walkable length start -> casualty -> stretcher, metres (SPL's L)."""
    reference_path: list[Point] = Field(default_factory=list, max_length=100_000)
    """The expert's positions, one per step, for HS, nDTW and SDTW."""
    doors_on_path: list[Name] = Field(default_factory=list, max_length=1000)
    """Closed doors every shortest path crosses (L4)."""


class Level(StrEnum):
    """RescueBench's five levels."""

    L1 = "L1"
    L2 = "L2"
    L3 = "L3"
    L4 = "L4"
    L5 = "L5"


@dataclass(frozen=True, slots=True)
class LevelRules:
    """One level's constraints (docs/rescue.md, Rules: levels)."""

    distance: tuple[float, float]
    budget_s: float
    worlds: tuple[str, ...]
    hidden_from_start: bool = False
    door_on_path: bool = False
    min_height_change: float = 0.0
    clue_style: str = "direct"


LEVELS: dict[Level, LevelRules] = {
    Level.L1: LevelRules((5, 15), 180, ("flexible_room",), clue_style="direct"),
    Level.L2: LevelRules((5, 30), 180, ("suburb", "street", "forest"), clue_style="surroundings"),
    Level.L3: LevelRules(
        (10, 40),
        240,
        ("suburb", "street", "forest", "campus"),
        hidden_from_start=True,
        clue_style="landmark",
    ),
    Level.L4: LevelRules((10, 60), 300, ("campus",), door_on_path=True, clue_style="topology"),
    Level.L5: LevelRules(
        (10, 80), 300, ("tower", "station"), min_height_change=3.0, clue_style="minimal"
    ),
}


def rescue_data(spec: EpisodeSpec) -> RescueData:
    """Return the validated rescue part of ``spec``, or raise naming the episode and field."""
    from pydantic import ValidationError

    try:
        return RescueData.model_validate(spec.mission)
    except ValidationError as error:
        problems = "; ".join(
            f"mission.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()
        )
        raise ConfigError(f"episode {spec.episode_id}: {problems}") from None


def check_rescue_episode(spec: EpisodeSpec) -> RescueData:
    """Return the rescue data of ``spec`` after checking it names its casualty and stretcher."""
    data = rescue_data(spec)
    missing = [role for role in ("casualty", "stretcher") if role not in spec.targets]
    if missing:
        raise ConfigError(
            f"episode {spec.episode_id}: targets: no {' or '.join(missing)} "
            f"(found: {', '.join(spec.targets) or 'none'})"
        )
    return data
