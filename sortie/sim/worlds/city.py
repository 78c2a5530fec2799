"""``city``: downtown blocks for drone flights (MissionBench's "city").

A grid of avenues (north-south) and streets (east-west) cuts the square into blocks. Most
blocks hold four flat-roofed buildings, numbered on their roofs, some with a rooftop sign,
water tank or solar panels; one is a plaza with a statue and people, one a fenced
construction site with supply crates, one a hospital with a helipad on its roof. Cars are
parked along every curb.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sortie.sim.assets.blocks import BLOCK_COLORS, BLOCK_KINDS, COMPANIES, add_block, add_roof_sign
from sortie.sim.assets.buildings import Area, add_ground
from sortie.sim.assets.infrastructure import (
    CRATE_COLORS,
    CRATE_LABELS,
    add_landing_pad,
    add_solar_panel,
    add_statue,
    add_supply_crate,
    add_water_tank,
)
from sortie.sim.assets.props import add_fence, pick
from sortie.sim.assets.vegetation import add_tree
from sortie.sim.kit import WorldKit
from sortie.sim.scene import Scene
from sortie.sim.worlds.aerial import (
    FLIGHT_SIZE,
    STREETS,
    Plates,
    Rect,
    Routes,
    add_people,
    park_along,
    road_markings,
)
from sortie.sim.worlds.base import LIGHTING, ParamValue, world

SPACING = 75.0  # between neighbouring roads' centre lines
ROAD = 5.0  # half width of the carriageway
WALK = 8.0  # half width of carriageway and sidewalks
SIGN_COLORS = ("navy", "red", "white", "yellow", "black", "dark green")
AVENUES = ("First", "Second", "Third", "Fourth", "Fifth", "Sixth", "Seventh", "Eighth")


@world(
    "city",
    "downtown blocks for drone flights: numbered roofs, rooftop signs, a plaza, a "
    "helipad, a construction site (aerial)",
    (FLIGHT_SIZE, LIGHTING),
)
def build(kit: WorldKit, rng: np.random.Generator, params: Mapping[str, ParamValue]) -> Scene:
    """Build a square city of side ``size``."""
    half = float(params["size"]) / 2
    bounds = (-half, -half, half, half)
    lines = [float(v) for v in np.arange(-half + 30.0, half - 20.0, SPACING)]
    routes, plates = Routes(bounds), Plates()
    areas = _roads(kit, rng, plates, routes, half, lines)
    cells = [
        (x0 + WALK, y0 + WALK, x1 - WALK, y1 - WALK)
        for x0, x1 in zip(lines, lines[1:], strict=False)
        for y0, y1 in zip(lines, lines[1:], strict=False)
    ]
    order = rng.permutation(len(cells))
    special = {int(order[0]): _plaza, int(order[1]): _construction, int(order[2]): _hospital}
    number = 1
    for i, cell in enumerate(cells):
        if i in special:
            areas += special[i](kit, rng, routes, cell, number)
            number += 1
        else:
            number = _buildings(kit, rng, cell, number)
    add_ground(kit, bounds, areas, fill="sidewalk")
    return kit.scene(bounds, str(params["lighting"]), routes=routes.routes)


def _roads(
    kit: WorldKit,
    rng: np.random.Generator,
    plates: Plates,
    routes: Routes,
    half: float,
    lines: list[float],
) -> list[Area]:
    """Lay the avenues and streets, paint them, park cars along them; return their areas."""
    areas: list[Area] = []
    crossings = [(x - WALK, y - WALK, x + WALK, y + WALK) for x in lines for y in lines]
    marks = []
    for k, v in enumerate(lines):
        avenue, street = f"{AVENUES[k % len(AVENUES)]} Avenue", f"{STREETS[k]} Street"
        areas += [
            ("road", v - ROAD, -half, v + ROAD, half),
            ("road", -half, v - ROAD, half, v + ROAD),
        ]
        marks += [((v, -half), (v, half)), ((-half, v), (half, v))]
        for lane, sign in ((v - 3.4, 1), (v + 3.4, -1)):
            ends = ((lane, -half * sign), (lane, half * sign))
            park_along(kit, rng, plates, ends[0], ends[1], 0.3, avenue, crossings)
            ends = ((-half * -sign, lane), (half * -sign, lane))
            park_along(kit, rng, plates, ends[0], ends[1], 0.3, street, crossings)
        routes.add(f"road_{AVENUES[k % len(AVENUES)].lower()}_avenue", [(v, -half), (v, half)])
        routes.add(f"road_{STREETS[k].lower()}_street", [(-half, v), (half, v)])
    middle = lines[len(lines) // 2]
    routes.add("road_main", [(middle, -half), (middle, half)])
    road_markings(kit, marks, crossings)
    return areas


def _buildings(kit: WorldKit, rng: np.random.Generator, cell: Rect, number: int) -> int:
    """Fill a block with four buildings (numbered from ``number``); return the next number."""
    x0, y0, x1, y1 = cell
    w, d = (x1 - x0 - 4.0) / 2, (y1 - y0 - 4.0) / 2
    for cx in (x0 + w / 2, x1 - w / 2):
        for cy in (y0 + d / 2, y1 - d / 2):
            width, depth = float(rng.uniform(0.75, 1.0)) * d, float(rng.uniform(0.75, 1.0)) * w
            storeys = int(rng.integers(2, 10))
            sign = COMPANIES[number % len(COMPANIES)] if rng.random() < 0.35 else ""
            block = add_block(
                kit,
                (cx, cy),
                0.0,
                width,
                depth,
                storeys,
                number,
                pick(rng, BLOCK_COLORS),
                pick(rng, BLOCK_KINDS),
                text=sign,
            )
            _roof_things(kit, rng, block.name, (cx, cy), storeys * 3.2 + 0.05, min(width, depth))
            if sign:
                add_roof_sign(
                    kit,
                    block,
                    float(rng.choice([0.0, 90.0, 180.0, 270.0])),
                    sign,
                    pick(rng, SIGN_COLORS),
                )
            number += 1
    return number


def _roof_things(
    kit: WorldKit,
    rng: np.random.Generator,
    building: str,
    center: tuple[float, float],
    top: float,
    span: float,
) -> None:
    """Maybe put a water tank or a row of solar panels on a roof, clear of its number."""
    roll = rng.random()
    corner = span / 2 - 3.8
    if roll < 0.25 and span > 22.0:
        add_water_tank(
            kit,
            (center[0] - corner, center[1] - corner, top),
            f"NO {building.split('_')[1]}",
            "white",
            2.0,
        )
    elif roll < 0.45:
        add_solar_panel(
            kit,
            (center[0], center[1] - span * 0.42, top),
            -90.0,
            4,
            bool(rng.random() < 0.3),
            f"roof of {building}",
        )


def _plaza(
    kit: WorldKit, rng: np.random.Generator, routes: Routes, cell: Rect, number: int
) -> list[Area]:
    """A paved square with a statue, a fountain pool, trees at the corners and people."""
    x0, y0, x1, y1 = cell
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    add_statue(kit, (cx, cy, 0.0), 0.0, "obelisk", "white", "Liberty Column")
    for x, y in ((x0 + 4, y0 + 4), (x1 - 4, y0 + 4), (x0 + 4, y1 - 4), (x1 - 4, y1 - 4)):
        add_tree(kit, rng, (x, y), "broadleaf")
    add_people(kit, rng, (x0 + 5, y0 + 5, x1 - 5, cy - 6), 14, "plaza")
    routes.loop("perimeter_plaza", cell)
    return [
        ("water", cx - 6.0, cy + 8.0, cx + 6.0, cy + 16.0),
        ("grass", x0 + 2, y0 + 2, x0 + 10, y0 + 10),
    ]


def _construction(
    kit: WorldKit, rng: np.random.Generator, routes: Routes, cell: Rect, number: int
) -> list[Area]:
    """A fenced, dug-up block with stacks of supply crates and a few workers."""
    x0, y0, x1, y1 = cell
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    for a, b in zip(corners, corners[1:] + corners[:1], strict=True):
        add_fence(kit, a, b, 2.2, "orange", kind="construction site")
    for i in range(10):
        x, y = x0 + 6.0 + (i % 5) * 4.0, y0 + 8.0 + (i // 5) * 5.0
        add_supply_crate(
            kit,
            (x, y, 0.0),
            float(rng.uniform(0, 30)),
            CRATE_COLORS[int(rng.integers(len(CRATE_COLORS)))],
            CRATE_LABELS[int(rng.integers(len(CRATE_LABELS)))],
        )
    add_people(kit, rng, (x0 + 5, y1 - 20, x1 - 5, y1 - 5), 4, "construction site")
    routes.loop("perimeter_construction", cell)
    return [("ground", x0, y0, x1, y1)]


def _hospital(
    kit: WorldKit, rng: np.random.Generator, routes: Routes, cell: Rect, number: int
) -> list[Area]:
    """A wide hospital with a helipad (a landing pad marked H) on its roof."""
    x0, y0, x1, y1 = cell
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    block = add_block(
        kit,
        (cx, cy),
        0.0,
        y1 - y0 - 8.0,
        x1 - x0 - 8.0,
        4,
        number,
        "white",
        "hospital",
        text="HOSPITAL",
    )
    add_roof_sign(kit, block, 180.0, "HOSPITAL", "red")
    add_landing_pad(kit, (cx + 8.0, cy + 8.0, 4 * 3.2 + 0.05), 0.0, "H", 12.0, number)
    return []
