"""How a rescue run is played (``-F triggers=…``, ``goal_images=…``): its model and defaults."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from sortie.missions.family import FamilySettings


class Triggers(StrEnum):
    """How interactions happen."""

    ASSISTED = "assisted"  # grab, drop and doors fire by themselves within their gates
    NATIVE = "native"  # the agent must issue them; out-of-range attempts fail


class GoalImages(StrEnum):
    """Which goal images the brief holds (docs/rescue.md, Goal images)."""

    EVERY_STAGE = "every-stage"
    """The casualty's ``reference``, the ``stretcher`` and (outdoors) the ``ambulance``."""
    RESCUEBENCH = "rescuebench"
    """The casualty's ``reference`` only, as RescueBench gives."""


class RescueSettings(FamilySettings):
    """How a rescue run is played."""

    triggers: Triggers = Field(
        default=Triggers.ASSISTED,
        description="assisted (grab, drop and doors fire within their gates) or native (the "
        "agent issues them)",
    )
    # Left out of stores and headers while it holds its default, as RunConfig leaves out
    # limit and episodes: a run's header written before this setting existed stays as it was.
    goal_images: GoalImages = Field(
        default=GoalImages.EVERY_STAGE,
        description="every-stage (the casualty's reference, the stretcher and the ambulance) or "
        "rescuebench (the reference only)",
        exclude_if=lambda value: value is GoalImages.EVERY_STAGE,
    )
