"""How an aerial run is played (``-F judge=…``, ``-F max_move=…``): the settings model."""

from __future__ import annotations

from pydantic import Field, field_validator

from sortie.core.episode import MAX_COORDINATE
from sortie.missions.aerial.judge import JUDGES
from sortie.missions.family import FamilySettings


class AerialSettings(FamilySettings):
    """How an aerial run's reports are judged and how far a drone may move per step."""

    judge: str = Field(default="exact", description="the report judge: exact, embedding or llm")
    # Left out of the JSON form while None: headers and stores of runs that do not set it keep
    # the bytes they had before the setting existed.
    max_move: float | None = Field(
        default=None,
        gt=0,
        le=MAX_COORDINATE,
        allow_inf_nan=False,
        exclude_if=lambda value: value is None,
        description="d_max in metres for every episode; unset: each episode's own",
    )

    @field_validator("judge")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in JUDGES:
            raise ValueError(JUDGES.miss_message(value))
        JUDGES.get(value)  # an uninstalled judge (its extra) fails now, not after a flight
        return value
