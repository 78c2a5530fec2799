"""The mission families by name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sortie.core.registry import Registry

if TYPE_CHECKING:
    from sortie.missions.runtime import MissionRuntime

FAMILIES: Registry[type[MissionRuntime]] = Registry("mission family")
FAMILIES.add("rescue", "sortie.missions.rescue.mission:RescueMission")
FAMILIES.add("aerial", "sortie.missions.aerial.mission:AerialMission")
