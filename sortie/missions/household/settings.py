"""How a household run is played (``-F setting=… skills=…``): its model, home of its defaults."""

from __future__ import annotations

from pydantic import Field

from sortie.missions.family import FamilySettings
from sortie.missions.household.skills import Profile, Setting


class HouseholdSettings(FamilySettings):
    """What the household skills may know, and how reliable they are."""

    setting: Setting = Field(
        default=Setting.PRIVILEGED, description="what skills may know: privileged or sensor-only"
    )
    skills: Profile = Field(
        default=Profile.DEFAULT, description="skill success model: default or perfect"
    )
