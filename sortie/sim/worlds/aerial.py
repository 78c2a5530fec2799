"""Pieces the flight worlds share: streets of houses, parked cars, people, power lines, routes.

Flight worlds are hundreds of metres across and seen from above, so they are laid out on
straight streets and filled with few, large, recognisable things rather than walker-scale
clutter. Every car has a unique plate painted on its roof too; every house its number on
the roof; every world names its patrol routes (``Routes``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from sortie.core.pose import Pose
from sortie.sim.assets.buildings import add_house, dashed_line
from sortie.sim.assets.infrastructure import (
    add_power_line,
    add_pylon,
    add_solar_panel,
    add_statue,
)
from sortie.sim.assets.people import add_person
from sortie.sim.assets.props import add_bench, add_fence
from sortie.sim.assets.vegetation import add_tree
from sortie.sim.assets.vehicles import add_car, random_plate
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import merge
from sortie.sim.scene import Route, SceneObject
from sortie.sim.worlds.base import Param

Rect = tuple[float, float, float, float]
Height = Callable[[float, float], float]
ROAD_HALF = 4.0
CURB = 7.0  # road plus a sidewalk on each side
FLIGHT_SIZE = Param("size", 360.0, "side of the square world in metres", 300.0, 600.0)
STREETS = (
    "Maple",
    "Oak",
    "Elm",
    "Birch",
    "Cedar",
    "Willow",
    "Aspen",
    "Linden",
    "Poplar",
    "Chestnut",
)


@dataclass
class Plates:
    """Hands out licence plates no other car in the world carries."""

    used: set[str] = field(default_factory=set)

    def new(self, rng: np.random.Generator) -> str:
        """Return a fresh random plate."""
        plate = random_plate(rng)
        while plate in self.used:
            plate = random_plate(rng)
        self.used.add(plate)
        return plate


@dataclass
class Routes:
    """Named patrol routes, each clipped to stay a margin inside the world."""

    bounds: Rect
    margin: float = 2.0
    routes: dict[str, Route] = field(default_factory=dict)

    def add(self, name: str, points: Sequence[tuple[float, float]]) -> None:
        """Add route ``name`` through ``points`` (clipped into the bounds)."""
        x0, y0, x1, y1 = self.bounds
        m = self.margin
        self.routes[name] = tuple(
            (float(np.clip(x, x0 + m, x1 - m)), float(np.clip(y, y0 + m, y1 - m)))
            for x, y in points
        )

    def loop(self, name: str, rect: Rect) -> None:
        """Add a closed route around rectangle ``rect`` (a perimeter), counter-clockwise."""
        x0, y0, x1, y1 = rect
        self.add(name, [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)])


def add_car_at(
    kit: WorldKit,
    rng: np.random.Generator,
    plates: Plates,
    position: tuple[float, float],
    yaw: float,
    place: str,
    color: str | None = None,
) -> SceneObject:
    """Add a car with a unique plate, also painted on its roof, parked at ``place``."""
    return add_car(kit, rng, position, yaw, color, plates.new(rng), roof_plate=True, place=place)


def park_along(
    kit: WorldKit,
    rng: np.random.Generator,
    plates: Plates,
    start: tuple[float, float],
    end: tuple[float, float],
    chance: float,
    place: str,
    keep_clear: Sequence[Rect] = (),
) -> list[SceneObject]:
    """Park cars nose to tail from ``start`` to ``end`` in 7 m slots, each with ``chance``."""
    (x0, y0), (x1, y1) = start, end
    span = float(np.hypot(x1 - x0, y1 - y0))
    dx, dy = (x1 - x0) / span, (y1 - y0) / span
    yaw = float(np.degrees(math.atan2(dy, dx)))
    cars = []
    for t in np.arange(4.0, span - 3.0, 7.0):
        x, y = float(x0 + dx * t), float(y0 + dy * t)
        clear = not any(a - 3 <= x <= c + 3 and b - 3 <= y <= d + 3 for a, b, c, d in keep_clear)
        if rng.random() < chance and clear:
            cars.append(add_car_at(kit, rng, plates, (x, y), yaw, place))
    return cars


def house_row(
    kit: WorldKit,
    rng: np.random.Generator,
    plates: Plates,
    span: tuple[float, float],
    road_y: float,
    side: int,
    street: str,
    first_number: int,
    depth: float = 22.0,
) -> list[SceneObject]:
    """Add houses along one side of an east-west road, numbered by twos, facing it.

    ``side`` is +1 for the lots north of the road, -1 south. Some lots get a driveway car
    (``place``: ``driveway of <number> <street>``) and a tree in the back yard.
    """
    houses, number, x = [], first_number, span[0] + 2.0
    front = road_y + side * CURB
    while x + 12.0 <= span[1]:
        house, lot = _lot(kit, rng, plates, (x, front, depth), side, (number, street))
        houses.append(house)
        number += 2
        x += lot
    return houses


def _lot(
    kit: WorldKit,
    rng: np.random.Generator,
    plates: Plates,
    where: tuple[float, float, float],
    side: int,
    address: tuple[int, str],
) -> tuple[SceneObject, float]:
    """Add one lot and its house; return the house and the lot's width.

    ``where`` is the lot's west end, the curb line and the yard depth; ``address`` the
    house number and street.
    """
    x, front, depth = where
    number, street = address
    lot = float(rng.uniform(14.0, 18.0))
    width, house_d = float(rng.uniform(8.0, 10.5)), float(rng.uniform(7.0, 9.0))
    setback = float(rng.uniform(4.0, 6.0))
    cx = x + 1.0 + width / 2
    house = add_house(
        kit,
        rng,
        (cx, front + side * (setback + house_d / 2)),
        -90.0 * side,
        width,
        house_d,
        number,
        street=street,
        roof_number=True,
    )
    if lot - width > 5.0 and rng.random() < 0.55:
        spot = (cx + width / 2 + 2.2, front + side * 3.0)
        add_car_at(kit, rng, plates, spot, 90.0 * side, f"driveway of {number} {street}")
    if rng.random() < 0.6:
        back = front + side * min(depth - 3.0, setback + house_d + 4.0)
        add_tree(kit, rng, (x + lot / 2 + float(rng.uniform(-3, 3)), back))
    return house, lot


def road_markings(
    kit: WorldKit,
    lines: Sequence[tuple[tuple[float, float], tuple[float, float]]],
    crossings: Sequence[Rect],
) -> None:
    """Paint dashed centre lines along ``lines``, leaving the ``crossings`` bare."""
    dashes = [m for a, b in lines for m in dashed_line(a, b, crossings)]
    if dashes:
        kit.add("road", merge(dashes), marking="centre line")


def add_people(
    kit: WorldKit,
    rng: np.random.Generator,
    area: Rect,
    count: int,
    place: str,
    height: Height | None = None,
) -> list[SceneObject]:
    """Add ``count`` standing people scattered over ``area`` (attribute ``place``)."""
    people = []
    for _ in range(count):
        x = float(rng.uniform(area[0], area[2]))
        y = float(rng.uniform(area[1], area[3]))
        z = height(x, y) if height else 0.0
        people.append(add_person(kit, rng, (x, y, z), float(rng.uniform(0.0, 360.0)), place=place))
    return people


def power_line(
    kit: WorldKit,
    points: Sequence[tuple[float, float]],
    line: str,
    prefix: str,
    spacing: float = 60.0,
    height: Height | None = None,
) -> Route:
    """Add pylons about ``spacing`` apart along a polyline and the wires between them.

    Pylons are numbered ``<prefix>-01``, ``<prefix>-02``, ... along the line; returns the
    points of the line (its patrol route).
    """
    towers: list[tuple[float, float, float]] = []
    for (xa, ya), (xb, yb) in zip(points, points[1:], strict=False):
        length = float(np.hypot(xb - xa, yb - ya))
        count = max(1, round(length / spacing))
        for t in np.linspace(0.0, 1.0, count + 1)[(1 if towers else 0) :]:
            x, y = float(xa + t * (xb - xa)), float(ya + t * (yb - ya))
            towers.append((x, y, height(x, y) if height else 0.0))
    for i, (x, y, z) in enumerate(towers):
        nx, ny = towers[min(i + 1, len(towers) - 1)][:2]
        px, py = towers[max(i - 1, 0)][:2]
        yaw = float(np.degrees(math.atan2(ny - py, nx - px)))
        add_pylon(kit, (x, y, z), yaw, f"{prefix}-{i + 1:02d}", line)
    add_power_line(kit, towers, line)
    return tuple((float(x), float(y)) for x, y in points)


def add_park(
    kit: WorldKit, rng: np.random.Generator, area: Rect, statue: tuple[str, str, str], people: int
) -> list[tuple[str, float, float, float, float]]:
    """Add a park: a statue in the middle, trees round the edge, benches, strolling people.

    ``statue`` is ``(kind, color, name)``. Returns the ground areas it paints (a pond).
    """
    x0, y0, x1, y1 = area
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    kind, color, name = statue
    add_statue(kit, (cx, cy, 0.0), float(rng.uniform(0, 360)), kind, color, name)
    pond = (cx + (x1 - x0) * 0.18, cy - 8.0, cx + (x1 - x0) * 0.38, cy + 8.0)
    for t in np.arange(0.0, 1.0, 0.06):
        for x, y in (
            (x0 + 4 + t * (x1 - x0 - 8), y0 + 4),
            (x0 + 4 + t * (x1 - x0 - 8), y1 - 4),
            (x0 + 4, y0 + 4 + t * (y1 - y0 - 8)),
            (x1 - 4, y0 + 4 + t * (y1 - y0 - 8)),
        ):
            if rng.random() < 0.7:
                add_tree(kit, rng, (float(x), float(y)), "broadleaf")
    for a in np.linspace(0.0, 360.0, 6, endpoint=False):
        bx, by = cx + 9.0 * np.cos(np.radians(a)), cy + 9.0 * np.sin(np.radians(a))
        add_bench(kit, (float(bx), float(by)), float(a) + 180.0)
    add_people(kit, rng, (x0 + 8, y0 + 8, pond[0] - 2, y1 - 8), people, "park")
    return [
        ("water", *pond),
        ("sidewalk", cx - 1.5, y0, cx + 1.5, y1),
        ("sidewalk", x0, cy - 1.5, x1, cy + 1.5),
    ]


def solar_farm(
    kit: WorldKit, rng: np.random.Generator, area: Rect, site: str, damaged: int = 1
) -> int:
    """Fence ``area`` and fill it with rows of solar panels; ``damaged`` rows have a crack.

    Returns how many rows it holds.
    """
    x0, y0, x1, y1 = area
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    for a, b in zip(corners, corners[1:] + corners[:1], strict=True):
        add_fence(kit, a, b, 2.0, "grey", kind=site)
    spots = [
        (float(x), float(y))
        for y in np.arange(y0 + 6.0, y1 - 3.0, 7.0)
        for x in np.arange(x0 + 10.0, x1 - 8.0, 16.0)
    ]
    broken = set(rng.choice(len(spots), size=min(damaged, len(spots)), replace=False).tolist())
    for i, (x, y) in enumerate(spots):
        add_solar_panel(kit, (x, y, 0.0), -90.0, 8, i in broken, site)
    return len(spots)


def viewing_pose(
    obj: SceneObject, height: float = 30.0, yaw: float = 0.0, pitch: float = -45.0
) -> Pose:
    """Return the multirotor pose ``height`` metres above ``obj``'s top that centres it in view.

    The camera, pitched ``pitch`` degrees and heading ``yaw``, looks at the object's top
    centre from ``height / tan(-pitch)`` metres back along the heading.
    """
    x, y, _ = (float(v) for v in obj.center())
    top = float(obj.bounds()[1][2])
    back = height / math.tan(math.radians(-pitch))
    c, s = np.cos(np.radians(yaw)), np.sin(np.radians(yaw))
    return Pose(x - back * c, y - back * s, top + height, yaw)
