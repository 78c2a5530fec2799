"""``suburb``: streets of houses with yards, fences, parked cars and trees (rescue L2-L4).

The square world is cut into bands running along x; each band is a road with sidewalks and
a row of lots on either side, houses facing the road. Bigger worlds get a cross street. A
grass strip runs inside the boundary fence, so every sidewalk connects to every other and
every yard is reachable; obstacles keep walker-wide corridors between them (``Footprints``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from sortie.sim.assets.buildings import Area, add_ground, add_house, dashed_line
from sortie.sim.assets.props import (
    Footprints,
    add_bench,
    add_boundary,
    add_crate,
    add_fence,
    add_lamp_post,
    pick,
)
from sortie.sim.assets.vegetation import add_bush, add_rock, add_tree, tree_reach
from sortie.sim.assets.vehicles import add_car, park_cars
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import merge
from sortie.sim.scene import Scene
from sortie.sim.worlds.base import CLUTTER, LIGHTING, Param, ParamValue, world

MARGIN = 3.0  # free grass strip inside the boundary fence
ROAD_HALF = 3.5
VERGE_OUT = 5.0  # a 1.5 m grass verge with lamps and street trees lines each side of a road
CURB_OUT = 7.0  # ... then a 2 m sidewalk
STREET_NAMES = ("Maple", "Oak", "Elm", "Birch", "Cedar", "Willow", "Aspen", "Linden")


@dataclass(frozen=True, slots=True)
class Lot:
    """One house plot: ``[x0, x1]`` along the road, ``depth`` metres back from ``front``."""

    x0: float
    x1: float
    front: float  # y of the edge on the sidewalk
    side: int  # +1: the lot lies north of its road (y grows away from it), -1: south
    depth: float

    def point(self, u: float, v: float) -> tuple[float, float]:
        """Return the world point ``u`` along x and ``v`` metres back from the sidewalk."""
        return (u, self.front + self.side * v)

    def rect(self, u0: float, v0: float, u1: float, v1: float) -> tuple[float, float, float, float]:
        """Return the world rectangle ``(x0, y0, x1, y1)`` of a lot-frame rectangle."""
        ya, yb = self.front + self.side * v0, self.front + self.side * v1
        return (min(u0, u1), min(ya, yb), max(u0, u1), max(ya, yb))


@world(
    "suburb",
    "streets of houses with yards, fences, parked cars and trees (outdoor, rescue L2-L4)",
    (Param("size", 80.0, "side of the square world in metres", 40.0, 200.0), CLUTTER, LIGHTING),
)
def build(kit: WorldKit, rng: np.random.Generator, params: Mapping[str, ParamValue]) -> Scene:
    """Build a suburb of side ``size``; ``clutter`` sets how many cars, fences and plants."""
    size, clutter = float(params["size"]), float(params["clutter"])
    half = size / 2
    bounds = (-half, -half, half, half)
    bands = max(1, round((size - 2 * MARGIN) / 42.0))
    band = (size - 2 * MARGIN) / bands
    lot_depth = float(np.clip((band - 2 * CURB_OUT) / 2, 11.0, 18.0))
    cross = size >= 70.0
    areas: list[Area] = _street_areas(half, bands, band, cross)
    taken = Footprints()
    if cross:  # keep the crossings free of parked cars
        for b in range(bands):
            road_y = -half + MARGIN + band * (b + 0.5)
            taken.reserve(-CURB_OUT, road_y - CURB_OUT, CURB_OUT, road_y + CURB_OUT)
    for b in range(bands):
        road_y = -half + MARGIN + band * (b + 0.5)
        street = f"{STREET_NAMES[b % len(STREET_NAMES)]} Street"
        _build_street(kit, rng, taken, areas, road_y, half, lot_depth, cross, clutter, street)
    if cross:
        inner = half - MARGIN
        park_cars(
            kit,
            rng,
            taken,
            0.15 + 0.5 * clutter,
            [((2.4, -inner), (2.4, inner)), ((-2.4, inner), (-2.4, -inner))],
        )
    add_ground(kit, bounds, areas, fill="grass")
    _add_markings(kit, half, bands, band, cross)
    add_boundary(kit, bounds)
    return kit.scene(bounds, str(params["lighting"]))


def _street_areas(half: float, bands: int, band: float, cross: bool) -> list[Area]:
    """Return the roads first, then the sidewalks (earlier areas win where they overlap).

    The grass verges between them are left to the ground's grass fill.
    """
    roads: list[Area] = []
    walks: list[Area] = []
    for b in range(bands):
        y = -half + MARGIN + band * (b + 0.5)
        roads.append(("road", -half, y - ROAD_HALF, half, y + ROAD_HALF))
        walks.append(("sidewalk", -half, y - CURB_OUT, half, y - VERGE_OUT))
        walks.append(("sidewalk", -half, y + VERGE_OUT, half, y + CURB_OUT))
    if cross:
        roads.append(("road", -ROAD_HALF, -half + MARGIN, ROAD_HALF, half - MARGIN))
        walks.append(("sidewalk", -CURB_OUT, -half + MARGIN, -VERGE_OUT, half - MARGIN))
        walks.append(("sidewalk", VERGE_OUT, -half + MARGIN, CURB_OUT, half - MARGIN))
    return roads + walks


def _split(x0: float, x1: float, rng: np.random.Generator) -> list[tuple[float, float]]:
    """Return consecutive lots 13..17 m wide filling ``[x0, x1]`` (the last one takes the rest)."""
    edges = [x0]
    while True:
        width = float(rng.uniform(13.0, 17.0))
        if x1 - (edges[-1] + width) < 13.0:
            break
        edges.append(edges[-1] + width)
    edges.append(x1)
    return list(zip(edges, edges[1:], strict=False))


def _build_street(
    kit: WorldKit,
    rng: np.random.Generator,
    taken: Footprints,
    areas: list[Area],
    road_y: float,
    half: float,
    lot_depth: float,
    cross: bool,
    clutter: float,
    street: str,
) -> None:
    """Add the lots on both sides of one road, the lamps along it and its parked cars."""
    inner = half - MARGIN
    spans = [(-inner, -CURB_OUT), (CURB_OUT, inner)] if cross else [(-inner, inner)]
    for side, first in ((-1, 1), (1, 2)):  # odd numbers on the south side, even on the north
        number = first
        for x0, x1 in spans:
            lots = _split(x0, x1, rng)
            for i, (a, b) in enumerate(lots):
                lot = Lot(a, b, road_y + side * CURB_OUT, side, lot_depth)
                _build_lot(
                    kit,
                    rng,
                    taken,
                    areas,
                    lot,
                    number,
                    street,
                    clutter,
                    fence_right=i == len(lots) - 1,
                )
                number += 2
    _line_verges(kit, rng, road_y, inner, cross, clutter)
    # Right-hand traffic: the south lane heads east (+x), the north lane west.
    lanes = [
        ((-inner, road_y - 2.4), (inner, road_y - 2.4)),
        ((inner, road_y + 2.4), (-inner, road_y + 2.4)),
    ]
    park_cars(kit, rng, taken, 0.15 + 0.5 * clutter, lanes)


def _line_verges(
    kit: WorldKit,
    rng: np.random.Generator,
    road_y: float,
    inner: float,
    cross: bool,
    clutter: float,
) -> None:
    """Stand lamp posts and, between them, street trees of one kind along both verges.

    Only trees whose crowns start above head height go on a verge: they block no sidewalk.
    """
    kind = pick(rng, ("broadleaf", "birch"))
    for side in (-1, 1):
        y = road_y + side * (ROAD_HALF + VERGE_OUT) / 2
        for x in np.arange(-inner + 6.0, inner - 1.0, 7.0):
            if cross and abs(x) < CURB_OUT + 1.0:
                continue
            if round((x + inner - 6.0) / 7.0) % 3 == 0:
                add_lamp_post(kit, (float(x), y), -90.0 * side)
            elif rng.random() < 0.2 + 0.7 * clutter:
                add_tree(kit, rng, (float(x), y), kind)


def _build_lot(
    kit: WorldKit,
    rng: np.random.Generator,
    taken: Footprints,
    areas: list[Area],
    lot: Lot,
    number: int,
    street: str,
    clutter: float,
    fence_right: bool,
) -> None:
    """Add a house facing the road, its path, maybe a driveway with a car, fences, plants."""
    width = lot.x1 - lot.x0
    drive = width >= 14.4 and rng.random() < 0.3 + 0.5 * clutter
    drive_left = bool(rng.random() < 0.5)
    house_w = float(min(rng.uniform(7.0, 10.0), width - (5.6 if drive else 4.0)))
    setback = float(rng.uniform(3.0, max(3.0, min(5.5, lot.depth - 7.5))))
    house_d = float(min(rng.uniform(6.0, 9.0), lot.depth - setback - 2.2))
    # 2 m beside the house on each side (3.6 m on a driveway side) stays walkable.
    low = lot.x0 + (3.6 if drive and drive_left else 2.0)
    high = lot.x1 - (3.6 if drive and not drive_left else 2.0)
    cx = low + house_w / 2 + float(rng.uniform(0.0, max(0.0, high - low - house_w)))
    door_u = float(rng.uniform(cx - house_w / 2 + 1.0, cx + house_w / 2 - 1.0))
    add_house(
        kit,
        rng,
        lot.point(cx, setback + house_d / 2),
        -90.0 * lot.side,
        house_w,
        house_d,
        number,
        door_offset=(door_u - cx) * lot.side,
        street=street,
    )
    taken.reserve(*lot.rect(cx - house_w / 2, setback, cx + house_w / 2, setback + house_d))
    areas.append(("sidewalk", *lot.rect(door_u - 0.6, 0.0, door_u + 0.6, setback)))
    if drive:
        u0 = lot.x0 + 0.3 if drive_left else lot.x1 - 3.3
        areas.append(("sidewalk", *lot.rect(u0, 0.0, u0 + 3.0, 6.0)))
        add_car(kit, rng, lot.point(u0 + 1.5, 2.7), -90.0 * lot.side)
        taken.reserve(*lot.rect(u0 + 0.6, 0.6, u0 + 2.4, 4.8))
    if rng.random() < 0.3 + 0.6 * clutter:
        _fence_lot(kit, rng, taken, lot, setback, fence_right)
    _plant_front(kit, rng, taken, lot, (cx - house_w / 2, cx + house_w / 2), door_u, setback)
    _plant_yard(kit, rng, taken, lot, clutter)


def _fence_lot(
    kit: WorldKit,
    rng: np.random.Generator,
    taken: Footprints,
    lot: Lot,
    setback: float,
    fence_right: bool,
) -> None:
    """Fence a lot's sides from the house front back, and its back if it lies north.

    Each lot owns its left side (and the last one its right), and only northern lots own
    their back line, so neighbouring fences never overlap.
    """
    color, height = pick(rng, ("white", "brown", "dark green")), float(rng.uniform(0.9, 1.3))
    lines = [((lot.x0, setback), (lot.x0, lot.depth))]
    if fence_right:
        lines.append(((lot.x1, setback), (lot.x1, lot.depth)))
    if lot.side > 0:
        lines.append(((lot.x0, lot.depth), (lot.x1, lot.depth)))
    for (u0, v0), (u1, v1) in lines:
        add_fence(kit, lot.point(u0, v0), lot.point(u1, v1), height, color)
        x0, y0, x1, y1 = lot.rect(u0, v0, u1, v1)
        taken.reserve(x0 - 0.05, y0 - 0.05, x1 + 0.05, y1 + 0.05)


def _plant_front(
    kit: WorldKit,
    rng: np.random.Generator,
    taken: Footprints,
    lot: Lot,
    house: tuple[float, float],
    door_u: float,
    setback: float,
) -> None:
    """Plant small bushes against the house front, clear of the door and the corners."""
    for u in np.arange(house[0] + 1.0, house[1] - 0.9, 1.4):
        if abs(u - door_u) > 1.4 and rng.random() < 0.5:
            x, y = lot.point(float(u), setback - 0.55)
            add_bush(kit, rng, (x, y), float(rng.uniform(0.35, 0.5)))
            taken.reserve(x - 0.5, y - 0.5, x + 0.5, y + 0.5)


def _plant_yard(
    kit: WorldKit, rng: np.random.Generator, taken: Footprints, lot: Lot, clutter: float
) -> None:
    """Try to place a few trees, bushes, rocks and benches where they leave corridors free."""
    for _ in range(int(clutter * 10 + rng.random() * 3)):
        x, y = lot.point(
            float(rng.uniform(lot.x0 + 1.0, lot.x1 - 1.0)), float(rng.uniform(1.0, lot.depth - 1.0))
        )
        roll = rng.random()
        if roll < 0.5:
            kind = pick(rng, ("conifer", "broadleaf", "broadleaf", "birch"))
            height = float(rng.uniform(5.0, 8.0))
            if taken.place_disc(x, y, tree_reach(kind, height)):
                add_tree(kit, rng, (x, y), kind, height)
        elif roll < 0.8 and taken.place_disc(x, y, 0.9):
            add_bush(kit, rng, (x, y))
        elif roll < 0.9 and taken.place_disc(x, y, 0.8):
            add_rock(kit, rng, (x, y), float(rng.uniform(0.3, 0.7)))
        elif roll >= 0.9 and taken.place_disc(x, y, 0.9):
            if rng.random() < 0.5:
                add_bench(kit, (x, y), float(rng.uniform(0, 360)))
            else:
                add_crate(kit, rng, (x, y), float(rng.uniform(0, 90)))


def _add_markings(kit: WorldKit, half: float, bands: int, band: float, cross: bool) -> None:
    """Paint dashed centre lines on the roads, leaving the crossings bare."""
    road_ys = [-half + MARGIN + band * (b + 0.5) for b in range(bands)]
    crossings = [(-CURB_OUT, y - CURB_OUT, CURB_OUT, y + CURB_OUT) for y in road_ys]
    crossings = crossings if cross else []
    dashes = [m for y in road_ys for m in dashed_line((-half, y), (half, y), crossings)]
    if cross:
        dashes += dashed_line((0.0, -half + MARGIN), (0.0, half - MARGIN), crossings)
    if dashes:
        kit.add("road", merge(dashes), marking="centre line")
