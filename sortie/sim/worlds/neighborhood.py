"""``neighborhood``: a suburb seen from the air (MissionBench's "neighbourhood" flights).

West of Main Avenue, east-west streets of numbered houses with parked cars, a park along
the north edge; east of it a community centre with a landing pad, a depot of supply crates,
a water tower, a park with a pond and a fenced solar farm. A power line runs along the
south edge. Routes follow every street, the avenue, the park and farm perimeters, the
north fence and the power line.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sortie.sim.assets.blocks import add_block, add_roof_sign
from sortie.sim.assets.buildings import Area, add_ground
from sortie.sim.assets.infrastructure import (
    CRATE_COLORS,
    CRATE_LABELS,
    add_landing_pad,
    add_supply_crate,
    add_water_tank,
)
from sortie.sim.assets.props import add_boundary
from sortie.sim.kit import WorldKit
from sortie.sim.scene import Scene
from sortie.sim.worlds.aerial import (
    CURB,
    FLIGHT_SIZE,
    ROAD_HALF,
    STREETS,
    Plates,
    Routes,
    add_car_at,
    add_park,
    add_people,
    house_row,
    park_along,
    power_line,
    road_markings,
    solar_farm,
)
from sortie.sim.worlds.base import LIGHTING, ParamValue, world

STREET_GAP = 60.0  # between neighbouring streets' centre lines: two 23 m lots and the road
EAST = 120.0  # width of the community strip east of Main Avenue


@world(
    "neighborhood",
    "a suburb for drone flights: numbered houses, cars, parks, a solar farm "
    "and a power line (aerial)",
    (FLIGHT_SIZE, LIGHTING),
)
def build(kit: WorldKit, rng: np.random.Generator, params: Mapping[str, ParamValue]) -> Scene:
    """Build a square neighbourhood of side ``size``."""
    half = float(params["size"]) / 2
    bounds = (-half, -half, half, half)
    avenue = half - EAST + 8.0
    routes, plates = Routes(bounds), Plates()
    streets = [float(y) for y in np.arange(-half + 40.0, half - 75.0, STREET_GAP)]
    areas: list[Area] = [
        ("road", avenue - ROAD_HALF, -half, avenue + ROAD_HALF, half),
        ("sidewalk", avenue - CURB, -half, avenue + CURB, half),
    ]
    for k, y in enumerate(streets):
        name = STREETS[k % len(STREETS)]
        _street(kit, rng, plates, (-half, avenue - CURB), y, name)
        areas += [
            ("road", -half, y - ROAD_HALF, avenue, y + ROAD_HALF),
            ("sidewalk", -half, y - CURB, avenue, y + CURB),
        ]
        routes.add(f"road_{name.lower()}", [(-half, y), (avenue, y)])
    crossings = [(avenue - CURB, y - CURB, avenue + CURB, y + CURB) for y in streets]
    road_markings(
        kit,
        [((-half, y), (avenue - CURB, y)) for y in streets] + [((avenue, -half), (avenue, half))],
        crossings,
    )
    park_along(
        kit,
        rng,
        plates,
        (avenue + 2.4, -half + 20),
        (avenue + 2.4, half - 20),
        0.25,
        "Main Avenue",
        crossings,
    )
    routes.add("road_main", [(avenue, -half), (avenue, half)])
    north = (-half + 3.0, streets[-1] + 35.0, avenue - CURB - 3.0, half - 3.0)
    areas += add_park(kit, rng, north, ("figure", "bronze", "The Founder"), 8)
    routes.loop("perimeter_north_park", north)
    areas += _community(kit, rng, plates, routes, (avenue + CURB, -half, half, half))
    routes.add(
        "power_line",
        power_line(kit, [(-half + 5, -half + 8), (avenue - 12, -half + 8)], "south line", "P"),
    )
    add_boundary(kit, bounds, 2.0, "dark green")
    routes.add("fence_north", [(-half, half), (half, half)])
    routes.add("fence_west", [(-half, -half), (-half, half)])
    add_ground(kit, bounds, areas, fill="grass")
    return kit.scene(bounds, str(params["lighting"]), routes=routes.routes)


def _street(
    kit: WorldKit,
    rng: np.random.Generator,
    plates: Plates,
    span: tuple[float, float],
    y: float,
    name: str,
) -> None:
    """Add both rows of houses along one street and the cars parked at its curbs."""
    street = f"{name} Street"
    house_row(kit, rng, plates, span, y, -1, street, 1)
    house_row(kit, rng, plates, span, y, 1, street, 2)
    park_along(kit, rng, plates, (span[0] + 5, y - 2.6), (span[1] - 5, y - 2.6), 0.25, street)
    park_along(kit, rng, plates, (span[1] - 5, y + 2.6), (span[0] + 5, y + 2.6), 0.25, street)
    add_people(kit, rng, (span[0] + 10, y + 4.6, span[1] - 10, y + 6.4), 2, street)


def _community(
    kit: WorldKit,
    rng: np.random.Generator,
    plates: Plates,
    routes: Routes,
    strip: tuple[float, float, float, float],
) -> list[Area]:
    """Fill the east strip: park (north), community centre and depot (middle), solar farm."""
    x0, y0, x1, y1 = strip
    cx = (x0 + x1) / 2
    park = (x0 + 6.0, y1 - 150.0, x1 - 6.0, y1 - 6.0)
    areas = add_park(kit, rng, park, ("horse", "white", "Liberty"), 10)
    routes.loop("perimeter_park", park)
    centre = add_block(
        kit,
        (cx - 20.0, y1 - 185.0),
        180.0,
        30.0,
        20.0,
        2,
        1,
        "cream",
        "community centre",
        "Main Avenue",
        "COMMUNITY",
    )
    add_roof_sign(kit, centre, 180.0, "COMMUNITY", "navy")
    add_landing_pad(kit, (cx + 25.0, y1 - 185.0, 0.0), 0.0, "H", 10.0, 1)
    add_water_tank(kit, (cx + 30.0, y1 - 215.0, 0.0), "MAPLEWOOD", "light blue", 12.0)
    for i in range(6):
        add_supply_crate(
            kit,
            (cx - 30.0 + 3.0 * i, y1 - 215.0, 0.0),
            0.0,
            CRATE_COLORS[i % len(CRATE_COLORS)],
            CRATE_LABELS[i % 5],
        )
    for k in range(5):
        add_car_at(kit, rng, plates, (cx - 30.0 + 6.0 * k, y1 - 160.0), 90.0, "community car park")
    add_people(kit, rng, (cx - 30.0, y1 - 210.0, cx + 20.0, y1 - 200.0), 3, "depot")
    farm = (x0 + 8.0, y0 + 10.0, x1 - 8.0, min(y0 + 90.0, y1 - 240.0))
    solar_farm(kit, rng, farm, "solar farm", damaged=2)
    routes.loop("perimeter_farm", farm)
    return areas + [("sidewalk", cx - 40.0, y1 - 222.0, cx + 40.0, y1 - 150.0)]
