"""``street``: shopping streets lined with signed shop fronts, lamps, benches and bins.

Like ``suburb``, the world is cut into bands along x, each a road with wide sidewalks and a
row of shops on either side facing it; bigger worlds get a cross street. Shops stand in
blocks of two to four with 3 m alleys between, so the paved service strips behind them
connect to the sidewalks; a walled strip inside the boundary joins everything up.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np

from sortie.sim.assets.buildings import Area, add_ground, add_shop, dashed_line, shop_names
from sortie.sim.assets.props import (
    Footprints,
    add_bench,
    add_crate,
    add_lamp_post,
    add_trash_bin,
    pick,
)
from sortie.sim.assets.structures import wall
from sortie.sim.assets.vegetation import add_tree
from sortie.sim.assets.vehicles import park_cars
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import merge
from sortie.sim.scene import Scene
from sortie.sim.worlds.base import CLUTTER, LIGHTING, Param, ParamValue, world

MARGIN = 2.5  # free paved strip inside the boundary wall
ROAD_HALF = 4.0  # two lanes and two parking lanes
CURB_OUT = 8.0  # ... then a 4 m sidewalk
ALLEY = 3.0
PRODUCE = ("market", "florist", "hardware")  # shops that set crates out front


@world(
    "street",
    "shopping streets with signed shop fronts, parked cars and street furniture (outdoor)",
    (Param("size", 80.0, "side of the square world in metres", 40.0, 200.0), CLUTTER, LIGHTING),
)
def build(kit: WorldKit, rng: np.random.Generator, params: Mapping[str, ParamValue]) -> Scene:
    """Build shopping streets in a square of side ``size``; ``clutter`` sets props and cars."""
    size, clutter = float(params["size"]), float(params["clutter"])
    half, inner = size / 2, size / 2 - MARGIN
    bounds = (-half, -half, half, half)
    bands = max(1, round((size - 2 * MARGIN) / 44.0))
    band = (size - 2 * MARGIN) / bands
    depth = float(np.clip((band - 2 * CURB_OUT) / 2 - 2.0, 6.0, 12.0))
    cross = size >= 80.0
    road_ys = [-inner + band * (b + 0.5) for b in range(bands)]
    crossings = [(-CURB_OUT, y - CURB_OUT, CURB_OUT, y + CURB_OUT) for y in road_ys if cross]
    taken = Footprints(list(crossings))
    names = iter(shop_names(rng, 400))
    spans = [(-inner, -CURB_OUT), (CURB_OUT, inner)] if cross else [(-inner, inner)]
    for road_y in road_ys:
        for side in (-1, 1):
            for x0, x1 in spans:
                _shop_row(kit, rng, names, taken, road_y, side, (x0, x1), depth, clutter)
                _furnish_sidewalk(kit, rng, road_y, side, (x0, x1), clutter)
        lanes = [
            ((-inner, road_y - 2.9), (inner, road_y - 2.9)),
            ((inner, road_y + 2.9), (-inner, road_y + 2.9)),
        ]
        park_cars(kit, rng, taken, 0.2 + 0.6 * clutter, lanes)
    add_ground(kit, bounds, _street_areas(half, road_ys, cross), fill="ground")
    _add_markings(kit, half, road_ys, crossings)
    _add_boundary(kit, half)
    return kit.scene(bounds, str(params["lighting"]))


def _street_areas(half: float, road_ys: list[float], cross: bool) -> list[Area]:
    """Return the roads, then the sidewalks; the paved fill covers the rest."""
    inner = half - MARGIN
    roads: list[Area] = [("road", -half, y - ROAD_HALF, half, y + ROAD_HALF) for y in road_ys]
    walks: list[Area] = [("sidewalk", -half, y - CURB_OUT, half, y + CURB_OUT) for y in road_ys]
    if cross:
        roads.append(("road", -ROAD_HALF, -inner, ROAD_HALF, inner))
        walks.append(("sidewalk", -CURB_OUT, -inner, CURB_OUT, inner))
    return roads + walks


def _blocks(rng: np.random.Generator, x0: float, x1: float) -> list[tuple[float, float]]:
    """Return shop plots along ``[x0, x1]``: 6-10 m wide, in blocks of 2-4 with alleys between."""
    plots: list[tuple[float, float]] = []
    x = x0 + ALLEY / 2
    while x1 - x >= 6.0:
        for _ in range(int(rng.integers(2, 5))):
            width = float(min(rng.uniform(6.0, 10.0), x1 - x))
            if width < 6.0:
                break
            plots.append((x, x + width))
            x += width
        x += ALLEY
    return plots


def _shop_row(
    kit: WorldKit,
    rng: np.random.Generator,
    names: Iterator[tuple[str, str]],
    taken: Footprints,
    road_y: float,
    side: int,
    span: tuple[float, float],
    depth: float,
    clutter: float,
) -> None:
    """Add one row of shops facing the road, with produce crates outside some of them."""
    front = road_y + side * CURB_OUT
    for a, b in _blocks(rng, *span):
        name, kind = next(names)
        center = ((a + b) / 2, front + side * depth / 2)
        add_shop(kit, rng, center, -90.0 * side, b - a, depth, name, kind)
        taken.reserve(a, min(front, front + side * depth), b, max(front, front + side * depth))
        if kind in PRODUCE and rng.random() < 0.3 + 0.6 * clutter:
            for k in range(int(rng.integers(1, 3))):
                # Crates stand against the shop window, leaving the rest of the sidewalk free.
                x = a + 1.0 + 0.8 * k
                add_crate(kit, rng, (x, front - side * 0.45), 0.0, float(rng.uniform(0.5, 0.7)))


def _furnish_sidewalk(
    kit: WorldKit,
    rng: np.random.Generator,
    road_y: float,
    side: int,
    span: tuple[float, float],
    clutter: float,
) -> None:
    """Line the curb side of one sidewalk with lamps, benches with bins, and street trees.

    Everything stays within 1.6 m of the curb, so 2 m of sidewalk stays free by the shops.
    """
    facing = -90.0 * side  # towards the road
    for i, slot in enumerate(np.arange(span[0] + 3.0, span[1] - 2.0, 5.0)):
        x = float(slot)
        if i % 3 == 0:
            add_lamp_post(kit, (x, road_y + side * (ROAD_HALF + 0.4)), facing)
            continue
        roll = rng.random()
        if roll < 0.25 + 0.35 * clutter:
            add_bench(
                kit,
                (x, road_y + side * (ROAD_HALF + 1.3)),
                facing,
                pick(rng, ("brown", "dark green", "black")),
            )
            if rng.random() < 0.5 + 0.4 * clutter:
                add_trash_bin(
                    kit,
                    (x + 1.5, road_y + side * (ROAD_HALF + 0.6)),
                    pick(rng, ("green", "grey", "black")),
                )
        elif roll < 0.45 + 0.4 * clutter:
            add_tree(
                kit,
                rng,
                (x, road_y + side * (ROAD_HALF + 0.8)),
                "broadleaf",
                float(rng.uniform(5.0, 7.0)),
            )


def _add_markings(
    kit: WorldKit,
    half: float,
    road_ys: list[float],
    crossings: list[tuple[float, float, float, float]],
) -> None:
    """Paint dashed centre lines on the roads, leaving the crossings bare."""
    dashes = [m for y in road_ys for m in dashed_line((-half, y), (half, y), crossings)]
    if crossings:
        dashes += dashed_line((0.0, -half + MARGIN), (0.0, half - MARGIN), crossings)
    kit.add("road", merge(dashes), marking="centre line")


def _add_boundary(kit: WorldKit, half: float) -> None:
    """Wall the world in with 3 m brick walls standing just inside its edge."""
    edge = half - 0.1
    corners = [(-edge, -edge), (edge, -edge), (edge, edge), (-edge, edge)]
    for start, end in zip(corners, corners[1:] + corners[:1], strict=True):
        kit.add(
            "wall", wall(start, end, 0.0, 3.0, (150, 82, 62)), kind="boundary", color="red brick"
        )
