"""The ``forest`` world's flight preset: a wide wooded valley for drone flights.

Rolling wooded hills cut by a river in its own flat valley, a power line in a cleared
corridor, a trail from the ranger station to a meadow, and clearings where deer graze. The
ranger station (numbered lodges, a landing pad, a water tank, solar panels, cars, crates,
rangers) stands in a fenced clearing. Routes: the river, the trail, the power line, the
station's perimeter and the north fence.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sortie.sim.assets.animals import add_herd
from sortie.sim.assets.buildings import add_house
from sortie.sim.assets.infrastructure import (
    CRATE_COLORS,
    CRATE_LABELS,
    add_landing_pad,
    add_solar_panel,
    add_supply_crate,
    add_water_tank,
)
from sortie.sim.assets.props import add_fence
from sortie.sim.assets.structures import jitter_color
from sortie.sim.assets.terrain import Terrain, broadleaf, pine, rolling_terrain
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Mesh
from sortie.sim.scene import Scene
from sortie.sim.worlds.aerial import Height, Plates, Routes, add_car_at, add_people, power_line
from sortie.sim.worlds.base import ParamValue
from sortie.sim.worlds.fence import terrain_fence

Point = tuple[float, float]
CELL = 9.0  # one tree per cell of the planting grid at most
RIVER_HALF = 5.0
WATER = (58, 104, 150)
DIRT = (150, 120, 84)


def build_flight(
    kit: WorldKit, rng: np.random.Generator, params: Mapping[str, ParamValue]
) -> Scene:
    """Build the flight forest of side ``extent``."""
    half = float(params["extent"]) / 2
    bounds = (-half, -half, half, half)
    routes = Routes(bounds)
    river = _river_path(rng, half)
    station, meadow = (-half * 0.45, -half * 0.45), (half * 0.35, half * 0.5)
    trail = [station, (station[0] + 40.0, 0.0), (meadow[0] - 60.0, meadow[1] - 20.0), meadow]
    corridor = half * 0.55
    flats = [(*station, 32.0), (*meadow, 22.0), (-half * 0.5, half * 0.55, 18.0)]
    flats += [(x, y, RIVER_HALF + 6.0) for x, y in river]
    ground = rolling_terrain(
        rng,
        (-half - 8, -half - 8, half + 8, half + 8),
        float(params["relief"]) * 3.0,
        12.0,
        4.0,
        flats,
    )
    kit.add("ground", ground.mesh(rng, jitter_color(rng, (88, 118, 58), 10)))
    kit.add("water", _ribbon(ground, river, RIVER_HALF, 0.05, WATER, flat=True), kind="river")
    kit.add("road", _ribbon(ground, _densify(trail), 1.5, 0.25, DIRT), surface="dirt", kind="trail")
    height = _height(ground)
    _station(kit, rng, routes, station)
    add_herd(kit, rng, "deer", meadow, 6, 12.0, height, "meadow deer")
    add_herd(kit, rng, "deer", (-half * 0.5, half * 0.55), 4, 10.0, height, "clearing deer")
    line = [(corridor, -half + 10.0), (corridor, half - 10.0)]
    routes.add("power_line", power_line(kit, line, "valley line", "V", 70.0, height))
    _plant(kit, rng, ground, half, flats, _densify(trail), corridor)
    terrain_fence(kit, ground, half)
    routes.add("river", river)
    routes.add("trail", trail)
    routes.add("fence_north", [(-half, half), (half, half)])
    return kit.scene(bounds, str(params["lighting"]), routes=routes.routes)


def _height(ground: Terrain) -> Height:
    """Return a function giving the ground's height at a point."""
    return lambda x, y: float(ground.height_at(x, y))


def _river_path(rng: np.random.Generator, half: float) -> list[Point]:
    """Return a meandering west-to-east river line, a point every 8 m."""
    xs = np.arange(-half, half + 0.1, 8.0)
    phase, amp = float(rng.uniform(0, 2 * np.pi)), float(rng.uniform(15.0, 25.0))
    ys = half * 0.1 + amp * np.sin(xs / 60.0 + phase)
    return [(float(x), float(y)) for x, y in zip(xs, ys, strict=True)]


def _densify(points: list[Point], step: float = 4.0) -> list[Point]:
    """Return the polyline with extra points at most ``step`` metres apart."""
    out: list[Point] = [points[0]]
    for (xa, ya), (xb, yb) in zip(points, points[1:], strict=False):
        count = max(1, int(np.ceil(np.hypot(xb - xa, yb - ya) / step)))
        out += [(xa + (xb - xa) * t, ya + (yb - ya) * t) for t in np.arange(1, count + 1) / count]
    return out


def _ribbon(
    ground: Terrain,
    points: list[Point],
    half_width: float,
    lift: float,
    color: tuple[int, int, int],
    flat: bool = False,
) -> Mesh:
    """Return a strip ``2 half_width`` wide along ``points``, ``lift`` above the ground.

    A ``flat`` strip (water) lies at one level: the lowest ground along it.
    """
    p = np.asarray(points, np.float64)
    d = np.gradient(p, axis=0)
    n = np.column_stack([-d[:, 1], d[:, 0]]) / np.linalg.norm(d, axis=1)[:, None]
    left, right = p + n * half_width, p - n * half_width
    z = ground.height_at(p[:, 0], p[:, 1]) + lift
    z = np.full_like(z, float(z.min())) if flat else z
    verts = np.vstack([np.column_stack([left, z]), np.column_stack([right, z])])
    k = len(p)
    i = np.arange(k - 1)
    faces = np.vstack(
        [np.column_stack([i, i + k, i + k + 1]), np.column_stack([i, i + k + 1, i + 1])]
    )
    colors = np.tile(np.asarray(color, np.uint8), (len(faces), 1))
    return Mesh(verts.astype(np.float32), faces.astype(np.int32), colors)


def _station(kit: WorldKit, rng: np.random.Generator, routes: Routes, center: Point) -> None:
    """Build the fenced ranger station in its flat clearing."""
    cx, cy = center
    x0, y0, x1, y1 = cx - 26.0, cy - 26.0, cx + 26.0, cy + 26.0
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    for a, b in zip(corners, corners[1:] + corners[:1], strict=True):
        add_fence(kit, a, b, 1.8, "brown", kind="ranger station")
    routes.loop("perimeter_station", (x0, y0, x1, y1))
    for i in range(2):
        add_house(
            kit,
            rng,
            (cx - 12.0 + 18.0 * i, cy + 14.0),
            -90.0,
            10.0,
            7.0,
            i + 1,
            "brown",
            1,
            street="Ranger Station",
            roof_number=True,
        )
    add_landing_pad(kit, (cx - 12.0, cy - 12.0, 0.0), 0.0, "H", 10.0, 1)
    add_water_tank(kit, (cx + 16.0, cy - 14.0, 0.0), "FIRE", "red", 6.0)
    add_solar_panel(
        kit, (cx + 2.0, cy - 20.0, 0.0), -90.0, 6, bool(rng.random() < 0.5), "ranger station"
    )
    plates = Plates()
    for k, color in enumerate(("green", "white")):
        add_car_at(kit, rng, plates, (cx + 4.0 + 5.0 * k, cy + 2.0), 90.0, "ranger station", color)
    for i in range(3):
        add_supply_crate(
            kit, (cx - 4.0 + 2.5 * i, cy - 6.0, 0.0), 0.0, CRATE_COLORS[i + 2], CRATE_LABELS[i]
        )
    add_people(kit, rng, (cx - 15.0, cy - 2.0, cx + 15.0, cy + 6.0), 3, "ranger station")


def _plant(
    kit: WorldKit,
    rng: np.random.Generator,
    ground: Terrain,
    half: float,
    flats: list[tuple[float, float, float]],
    trail: list[Point],
    corridor: float,
) -> None:
    """Plant one tree in most cells of a jittered grid, clear of clearings, river and paths."""
    grid = np.arange(-half + CELL / 2, half, CELL)
    gx, gy = np.meshgrid(grid, grid)
    xs = (gx + rng.uniform(-3.0, 3.0, gx.shape)).ravel()
    ys = (gy + rng.uniform(-3.0, 3.0, gy.shape)).ravel()
    keep = rng.random(xs.shape) < 0.8
    keep &= np.abs(xs - corridor) > 9.0
    for cx, cy, r in flats:
        keep &= np.hypot(xs - cx, ys - cy) > r + 2.0
    for tx, ty in trail:
        keep &= np.hypot(xs - tx, ys - ty) > 4.0
    zs = ground.height_at(xs, ys)
    kinds = rng.choice(["pine", "oak"], size=xs.shape, p=[0.6, 0.4])
    heights = rng.uniform(9.0, 16.0, xs.shape)
    for x, y, z, kind, h in zip(
        xs[keep], ys[keep], zs[keep], kinds[keep], heights[keep], strict=True
    ):
        base = (float(x), float(y), float(z))
        green = (40, 85, 45) if kind == "pine" else (70, 120, 45)
        mesh = (pine if kind == "pine" else broadleaf)(base, float(h), jitter_color(rng, green, 15))
        kit.add("tree", mesh, kind=str(kind), height=round(float(h), 2))
