"""Procedural world builders, registered by name in ``WORLDS``."""

from sortie.sim.worlds.base import WORLDS, Param, WorldBuilder, WorldKit, build_world, world

# Importing the builder modules registers them.
from sortie.sim.worlds import flexible_room  # noqa: E402, F401  isort: skip
from sortie.sim.worlds import suburb  # noqa: E402, F401  isort: skip
from sortie.sim.worlds import street  # noqa: E402, F401  isort: skip
from sortie.sim.worlds import forest  # noqa: E402, F401  isort: skip
from sortie.sim.worlds import campus  # noqa: E402, F401  isort: skip
from sortie.sim.worlds import tower  # noqa: E402, F401  isort: skip
from sortie.sim.worlds import station  # noqa: E402, F401  isort: skip

__all__ = ["WORLDS", "Param", "WorldBuilder", "WorldKit", "build_world", "world"]
