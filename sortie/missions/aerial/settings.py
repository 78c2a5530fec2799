"""How an aerial run is played (``-F judge=…``): the settings model, home of its defaults."""

from __future__ import annotations

from pydantic import Field, field_validator

from sortie.missions.aerial.judge import JUDGES
from sortie.missions.family import FamilySettings


class AerialSettings(FamilySettings):
    """How an aerial run's reports are judged."""

    judge: str = Field(default="exact", description="the report judge: exact, embedding or llm")

    @field_validator("judge")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in JUDGES:
            raise ValueError(JUDGES.miss_message(value))
        JUDGES.get(value)  # an uninstalled judge (its extra) fails now, not after a flight
        return value
