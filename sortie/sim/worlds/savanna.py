"""``savanna``: a fenced game reserve for drone flights (MissionBench's "savanna").

Flat sandy ground with grass patches and acacias; herds of elephants, zebras, giraffes and
rhinos, the elephants near a waterhole; dirt tracks; a fenced ranger camp with numbered
huts, jeeps, a landing pad, a water tank, solar panels and supply crates; a power line
along the south fence. Routes follow the tracks, the fences, the camp's perimeter and the
waterhole's shore.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sortie.sim.assets.animals import add_herd
from sortie.sim.assets.buildings import add_ground, add_house
from sortie.sim.assets.infrastructure import (
    CRATE_COLORS,
    CRATE_LABELS,
    add_landing_pad,
    add_solar_panel,
    add_supply_crate,
    add_water_tank,
)
from sortie.sim.assets.props import add_boundary, add_fence
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Mesh, cylinder, merge, quad
from sortie.sim.scene import Scene
from sortie.sim.worlds.aerial import (
    FLIGHT_SIZE,
    Plates,
    Rect,
    Routes,
    add_car_at,
    add_people,
    power_line,
)
from sortie.sim.worlds.base import LIGHTING, ParamValue, world

DIRT = (178, 150, 108)
HERDS = (
    ("zebra", 9, 18.0),
    ("giraffe", 4, 14.0),
    ("rhino", 3, 10.0),
    ("zebra", 6, 14.0),
    ("giraffe", 3, 12.0),
)


@world(
    "savanna",
    "a fenced game reserve for drone flights: herds of elephants, zebras, "
    "giraffes and rhinos, a waterhole, a ranger camp (aerial)",
    (FLIGHT_SIZE, LIGHTING),
)
def build(kit: WorldKit, rng: np.random.Generator, params: Mapping[str, ParamValue]) -> Scene:
    """Build a square reserve of side ``size``."""
    half = float(params["size"]) / 2
    bounds = (-half, -half, half, half)
    routes, plates = Routes(bounds), Plates()
    water = (half * 0.25, half * 0.15, half * 0.25 + 40.0, half * 0.15 + 24.0)
    camp = (-half + 15.0, -half + 25.0, -half + 85.0, -half + 85.0)
    track_y = -half + 110.0
    _tracks(kit, routes, half, track_y, water, camp)
    _camp(kit, rng, plates, routes, camp)
    add_herd(
        kit,
        rng,
        "elephant",
        ((water[0] + water[2]) / 2, water[3] + 14.0),
        5,
        14.0,
        herd="elephant herd 1",
    )
    _herds(kit, rng, half, [water, camp])
    _acacias(kit, rng, half, [water, camp])
    routes.loop("shore_waterhole", (water[0] - 6, water[1] - 6, water[2] + 6, water[3] + 6))
    routes.add(
        "power_line",
        power_line(kit, [(-half + 95, -half + 8), (half - 8, -half + 8)], "reserve line", "R"),
    )
    add_boundary(kit, bounds, 2.4, "brown")
    routes.add("fence_north", [(-half, half), (half, half)])
    routes.add("fence_east", [(half, -half), (half, half)])
    grass = [
        ("grass", float(x), float(y), float(x) + 30.0, float(y) + 20.0)
        for x, y in rng.uniform(-half, half - 30.0, (12, 2))
    ]
    add_ground(kit, bounds, [("water", *water), *grass], fill="ground")
    return kit.scene(bounds, str(params["lighting"]), routes=routes.routes)


def _track(start: tuple[float, float], end: tuple[float, float], width: float = 5.0) -> Mesh:
    """Return a dirt track: a flat ribbon 2 cm above the ground."""
    (x0, y0), (x1, y1) = start, end
    length = float(np.hypot(x1 - x0, y1 - y0))
    nx, ny = -(y1 - y0) / length * width / 2, (x1 - x0) / length * width / 2
    return quad(
        [
            (x0 + nx, y0 + ny, 0.02),
            (x1 + nx, y1 + ny, 0.02),
            (x1 - nx, y1 - ny, 0.02),
            (x0 - nx, y0 - ny, 0.02),
        ],
        color=DIRT,
    )


def _tracks(kit: WorldKit, routes: Routes, half: float, y: float, water: Rect, camp: Rect) -> None:
    """Lay the east-west main track and the branch from it up to the waterhole."""
    gate = ((camp[0] + camp[2]) / 2, camp[3])
    wx = (water[0] + water[2]) / 2
    main = [(-half, y), (half, y)]
    branch = [(wx, y), (wx, water[1] - 8.0)]
    camp_link = [gate, (gate[0], y)]
    ribbons = [_track(a, b) for a, b in (main, branch, camp_link)]
    kit.add("road", merge(ribbons), surface="dirt", kind="track")
    routes.add("track_main", main)
    routes.add("track_waterhole", [camp_link[0], (gate[0], y), (wx, y), branch[1]])


def _camp(
    kit: WorldKit, rng: np.random.Generator, plates: Plates, routes: Routes, camp: Rect
) -> None:
    """Fence the ranger camp and fill it: huts, jeeps, pad, water tank, panels, crates."""
    x0, y0, x1, y1 = camp
    gate = (x0 + x1) / 2
    lines = [
        ((x0, y0), (x1, y0)),
        ((x1, y0), (x1, y1)),
        ((x1, y1), (gate + 4.0, y1)),
        ((gate - 4.0, y1), (x0, y1)),
        ((x0, y1), (x0, y0)),
    ]
    for a, b in lines:
        add_fence(kit, a, b, 2.0, "brown", kind="ranger camp")
    routes.loop("perimeter_camp", camp)
    for i in range(3):
        add_house(
            kit,
            rng,
            (x0 + 12.0 + 16.0 * i, y1 - 14.0),
            -90.0,
            8.0,
            7.0,
            i + 1,
            "beige",
            1,
            street="Ranger Camp",
            roof_number=True,
        )
    for i, color in enumerate(("green", "beige")):
        add_car_at(kit, rng, plates, (gate + 8.0 + 5.0 * i, y1 - 28.0), 90.0, "ranger camp", color)
    add_landing_pad(kit, (x0 + 14.0, y0 + 14.0, 0.0), 0.0, "H", 10.0, 1)
    add_water_tank(kit, (x1 - 12.0, y0 + 12.0, 0.0), "RANGER", "white", 6.0)
    for k in range(3):
        add_solar_panel(kit, (x0 + 36.0, y0 + 6.0 + 6.0 * k, 0.0), -90.0, 6, k == 1, "ranger camp")
    for i in range(4):
        add_supply_crate(
            kit, (x0 + 8.0 + 2.5 * i, y0 + 30.0, 0.0), 0.0, CRATE_COLORS[i], CRATE_LABELS[i]
        )
    add_people(kit, rng, (x0 + 20.0, y0 + 26.0, x1 - 20.0, y1 - 24.0), 4, "ranger camp")


def _herds(kit: WorldKit, rng: np.random.Generator, half: float, keep_out: list[Rect]) -> None:
    """Graze the herds in open country, away from the waterhole and the camp."""
    for k, (species, count, spread) in enumerate(HERDS):
        for _ in range(50):
            x, y = (float(v) for v in rng.uniform(-half + 30.0, half - 30.0, 2))
            if not any(a - 30 <= x <= c + 30 and b - 30 <= y <= d + 30 for a, b, c, d in keep_out):
                break
        add_herd(kit, rng, species, (x, y), count, spread, herd=f"{species} herd {k + 1}")


def _acacias(kit: WorldKit, rng: np.random.Generator, half: float, keep_out: list[Rect]) -> None:
    """Scatter flat-topped acacias, the savanna's umbrella trees."""
    for x, y in rng.uniform(-half + 5.0, half - 5.0, (70, 2)):
        if any(a - 6 <= x <= c + 6 and b - 6 <= y <= d + 6 for a, b, c, d in keep_out):
            continue
        height = float(rng.uniform(4.0, 7.0))
        trunk = cylinder(0.25, height, (float(x), float(y), 0.0), (96, 70, 44), 5, 0.15)
        crown = cylinder(
            height * 0.6, 0.8, (float(x), float(y), height - 0.4), (92, 120, 50), 8, height * 0.45
        )
        kit.add("tree", merge([trunk, crown]), kind="acacia", height=round(height, 1))
