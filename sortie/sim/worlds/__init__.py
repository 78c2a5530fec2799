"""Procedural world builders, registered by name in ``WORLDS``."""

from sortie.sim.worlds.base import (
    WORLDS,
    Param,
    ParamValue,
    WorldBuilder,
    WorldKit,
    build_world,
    world,
)

# Importing the builder modules registers them.
from sortie.sim.worlds import flexible_room  # noqa: E402, F401  isort: skip
from sortie.sim.worlds import suburb  # noqa: E402, F401  isort: skip
from sortie.sim.worlds import street  # noqa: E402, F401  isort: skip
from sortie.sim.worlds import forest  # noqa: E402, F401  isort: skip
from sortie.sim.worlds import campus  # noqa: E402, F401  isort: skip
from sortie.sim.worlds import tower  # noqa: E402, F401  isort: skip
from sortie.sim.worlds import station  # noqa: E402, F401  isort: skip
from sortie.sim.worlds import neighborhood  # noqa: E402, F401  isort: skip
from sortie.sim.worlds import city  # noqa: E402, F401  isort: skip
from sortie.sim.worlds import savanna  # noqa: E402, F401  isort: skip
from sortie.sim.worlds import airsim_nh  # noqa: E402, F401  isort: skip
from sortie.sim.worlds import apartment  # noqa: E402, F401  isort: skip

FLIGHT_WORLDS: dict[str, dict[str, ParamValue]] = {
    "neighborhood": {},
    "city": {},
    "forest": {"preset": "flight"},
    "savanna": {},
    "airsim_nh": {},
}
"""The outdoor worlds for drone flights (aerial missions), each with the parameters that make
it one: ``forest`` is a ground world unless its ``preset`` is ``flight``."""

__all__ = ["FLIGHT_WORLDS", "WORLDS", "Param", "WorldBuilder", "WorldKit", "build_world", "world"]
