"""``airsim_nh``: one small suburban block, like AirSim's "neighborhood" (AirSimNH) map.

A loop of four streets encloses two rows of numbered houses; more houses face it from
outside, north and south. A park with a statue lies west of the loop, a water tower and a
landing pad east of it, a power line runs along the east fence. Routes: the loop, each of
its streets, the park's perimeter, the north fence and the power line.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sortie.sim.assets.buildings import Area, add_ground
from sortie.sim.assets.infrastructure import add_landing_pad, add_water_tank
from sortie.sim.assets.props import add_boundary
from sortie.sim.kit import WorldKit
from sortie.sim.scene import Scene
from sortie.sim.worlds.aerial import (
    CURB,
    ROAD_HALF,
    Plates,
    Routes,
    add_park,
    house_row,
    park_along,
    power_line,
    road_markings,
)
from sortie.sim.worlds.base import LIGHTING, Param, ParamValue, world

LOOP_X = 95.0  # the loop's east and west streets
LOOP_Y = 50.0  # its north and south streets


@world(
    "airsim_nh",
    "one small suburban block in a loop of streets, like AirSim's neighborhood map (aerial)",
    (Param("size", 300.0, "side of the square world in metres", 300.0, 600.0), LIGHTING),
)
def build(kit: WorldKit, rng: np.random.Generator, params: Mapping[str, ParamValue]) -> Scene:
    """Build the block in a square world of side ``size``."""
    half = float(params["size"]) / 2
    bounds = (-half, -half, half, half)
    routes, plates = Routes(bounds), Plates()
    span = (-LOOP_X + CURB, LOOP_X - CURB)
    for y, name, first in ((-LOOP_Y, "Hilltop", 1), (LOOP_Y, "Lakeview", 101)):
        street = f"{name} Drive"
        house_row(kit, rng, plates, span, y, -1, street, first)
        house_row(kit, rng, plates, span, y, 1, street, first + 1)
        park_along(kit, rng, plates, (span[0], y - 2.6), (span[1], y - 2.6), 0.3, street)
        routes.add(f"road_{name.lower()}", [(-LOOP_X, y), (LOOP_X, y)])
    for x, name in ((-LOOP_X, "West"), (LOOP_X, "East")):
        park_along(
            kit,
            rng,
            plates,
            (x + 2.6, -LOOP_Y + CURB),
            (x + 2.6, LOOP_Y - CURB),
            0.3,
            f"{name} Lane",
        )
        routes.add(f"road_{name.lower()}", [(x, -LOOP_Y), (x, LOOP_Y)])
    routes.loop("road_loop", (-LOOP_X, -LOOP_Y, LOOP_X, LOOP_Y))
    areas = _loop_areas()
    _markings(kit)
    park = (-half + 5.0, -LOOP_Y + 10.0, -LOOP_X - CURB - 5.0, LOOP_Y - 10.0)
    areas += add_park(kit, rng, park, ("figure", "grey", "The Pioneer"), 6)
    routes.loop("perimeter_park", park)
    add_water_tank(kit, (LOOP_X + 25.0, 0.0, 0.0), "NH", "white", 10.0)
    add_landing_pad(kit, (LOOP_X + 25.0, -25.0, 0.0), 0.0, "H", 8.0, 1)
    routes.add(
        "power_line",
        power_line(kit, [(half - 8, -half + 8), (half - 8, half - 8)], "east line", "E"),
    )
    add_boundary(kit, bounds, 2.0, "white")
    routes.add("fence_north", [(-half, half), (half, half)])
    add_ground(kit, bounds, areas, fill="grass")
    return kit.scene(bounds, str(params["lighting"]), routes=routes.routes)


def _loop_areas() -> list[Area]:
    """Return the loop's roads (first) and sidewalks, and paint its centre lines."""
    roads: list[Area] = []
    walks: list[Area] = []
    for y in (-LOOP_Y, LOOP_Y):
        roads.append(
            ("road", -LOOP_X - ROAD_HALF, y - ROAD_HALF, LOOP_X + ROAD_HALF, y + ROAD_HALF)
        )
        walks.append(("sidewalk", -LOOP_X - CURB, y - CURB, LOOP_X + CURB, y + CURB))
    for x in (-LOOP_X, LOOP_X):
        roads.append(("road", x - ROAD_HALF, -LOOP_Y, x + ROAD_HALF, LOOP_Y))
        walks.append(("sidewalk", x - CURB, -LOOP_Y, x + CURB, LOOP_Y))
    return roads + walks


def _markings(kit: WorldKit) -> None:
    """Paint the loop's dashed centre lines, bare at its corners."""
    corners = [
        (x - CURB, y - CURB, x + CURB, y + CURB)
        for x in (-LOOP_X, LOOP_X)
        for y in (-LOOP_Y, LOOP_Y)
    ]
    lines = [((-LOOP_X, y), (LOOP_X, y)) for y in (-LOOP_Y, LOOP_Y)]
    lines += [((x, -LOOP_Y), (x, LOOP_Y)) for x in (-LOOP_X, LOOP_X)]
    road_markings(kit, lines, corners)
