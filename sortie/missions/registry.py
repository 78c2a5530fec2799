"""The mission families by name, and the check of an episode against its family."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.core.registry import Registry

if TYPE_CHECKING:
    from sortie.missions.runtime import MissionRuntime

FAMILIES: Registry[type[MissionRuntime]] = Registry("mission family")
FAMILIES.add("rescue", "sortie.missions.rescue.mission:RescueMission")
FAMILIES.add("aerial", "sortie.missions.aerial.mission:AerialMission")
FAMILIES.add("household", "sortie.missions.household.mission:HouseholdMission")

FAMILY_DATA: Registry[Callable[[EpisodeSpec], Any]] = Registry("mission family")
"""Per family: the function that validates an episode's ``mission`` part (raises ConfigError)."""
FAMILY_DATA.add("rescue", "sortie.missions.rescue.spec:check_rescue_episode")
FAMILY_DATA.add("aerial", "sortie.missions.aerial.spec:aerial_data")
FAMILY_DATA.add("household", "sortie.missions.household.spec:household_task")


def check_episode(spec: EpisodeSpec) -> None:
    """Raise ConfigError unless ``spec``'s family exists and its mission data suits it."""
    if spec.family not in FAMILY_DATA:
        known = FAMILIES.miss_message(spec.family)
        raise ConfigError(f"episode {spec.episode_id}: family: {known}")
    try:
        FAMILY_DATA.get(spec.family)(spec)
    except ConfigError:
        other = _fitting_family(spec)
        if other is None:
            raise
        raise ConfigError(
            f"episode {spec.episode_id}: family is {spec.family!r}, but its "
            f"mission data is a {other} mission's; fix the family label"
        ) from None


def _fitting_family(spec: EpisodeSpec) -> str | None:
    """Return another family whose check ``spec``'s mission data passes, if there is one."""
    for family in FAMILY_DATA.names():
        if family == spec.family:
            continue
        try:
            FAMILY_DATA.get(family)(spec.model_copy(update={"family": family}))
        except ConfigError:
            continue
        return family
    return None
