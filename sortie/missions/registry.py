"""The mission families by name."""

from __future__ import annotations

from sortie.core.registry import Registry

FAMILIES: Registry[type] = Registry("mission family")
FAMILIES.add("rescue", "sortie.missions.rescue.mission:RescueMission")
