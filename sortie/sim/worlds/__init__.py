"""Procedural world builders, registered by name in ``WORLDS``."""

from sortie.sim.worlds.base import WORLDS, Param, WorldBuilder, WorldKit, build_world, world

# Importing the builder modules registers them.
from sortie.sim.worlds import flexible_room  # noqa: E402, F401  isort: skip

__all__ = ["WORLDS", "Param", "WorldBuilder", "WorldKit", "build_world", "world"]
