"""How a rescue run is played (``-F triggers=…``): the settings model, home of its defaults."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from sortie.missions.family import FamilySettings


class Triggers(StrEnum):
    """How interactions happen."""

    ASSISTED = "assisted"  # grab, drop and doors fire by themselves within their gates
    NATIVE = "native"  # the agent must issue them; out-of-range attempts fail


class RescueSettings(FamilySettings):
    """How a rescue run is played."""

    triggers: Triggers = Field(
        default=Triggers.ASSISTED,
        description="assisted (grab, drop and doors fire within their gates) or native (the "
        "agent issues them)",
    )
