"""``forest``: uneven wooded ground inside a fence, with trees, rocks, bushes and fallen logs."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sortie.sim.assets.structures import jitter_color
from sortie.sim.assets.terrain import (
    Circle,
    Terrain,
    broadleaf,
    bush,
    log,
    pine,
    rock,
    rolling_terrain,
    scatter,
)
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Mesh
from sortie.sim.scene import Scene
from sortie.sim.worlds.base import CLUTTER, LIGHTING, Param, ParamValue, world
from sortie.sim.worlds.fence import terrain_fence
from sortie.sim.worlds.forest_flight import build_flight

GAP = 1.2
"""Clear width kept between any two obstacles, so a walker can pass between them."""
CLEARING = 6.0
"""Radius of the flat, treeless clearing at the centre (where a mission can start)."""
MARGIN = 6.0
"""Ground drawn beyond the fence, so the view never ends at the world's edge."""


@world(
    "forest",
    "uneven wooded ground with trees, rocks, bushes and logs inside a fence (rescue L2/L3); "
    "preset=flight: a wide forest for drone flights (aerial)",
    (
        Param("size", 60.0, "side of the fenced square in metres (ground preset)", 30.0, 120.0),
        Param("relief", 3.0, "height from the lowest to the highest ground in metres", 0.0, 6.0),
        CLUTTER,
        LIGHTING,
        Param(
            "preset",
            "ground",
            "ground: the walker's wood; flight: a wide forest for drones",
            choices=("ground", "flight"),
        ),
        Param("extent", 360.0, "side of the square in metres (flight preset)", 300.0, 600.0),
    ),
)
def build(kit: WorldKit, rng: np.random.Generator, params: Mapping[str, ParamValue]) -> Scene:
    """Build a square forest of side ``size``; ``clutter`` sets how dense the undergrowth is.

    The flight preset builds a different, wider world instead (``forest_flight``); the
    ground preset, the default, is the rescue wood exactly as before.
    """
    if params["preset"] == "flight":
        return build_flight(kit, rng, params)
    half = float(params["size"]) / 2
    clearing = (0.0, 0.0, CLEARING)
    ground = rolling_terrain(
        rng,
        (-half - MARGIN, -half - MARGIN, half + MARGIN, half + MARGIN),
        float(params["relief"]),
        max_slope=15.0,
        flat=[clearing],
    )
    kit.add("ground", ground.mesh(rng, jitter_color(rng, (88, 118, 58), 10)))
    terrain_fence(kit, ground, half)
    area = (-half + 0.5, -half + 0.5, half - 0.5, half - 0.5)
    clutter = float(params["clutter"])
    trees = _plant_trees(kit, rng, ground, area, clutter, [clearing])
    _scatter_floor(kit, rng, ground, area, clutter, [clearing, *trees])
    return kit.scene((-half, -half, half, half), str(params["lighting"]))


def _plant_trees(
    kit: WorldKit,
    rng: np.random.Generator,
    ground: Terrain,
    area: tuple[float, float, float, float],
    clutter: float,
    taken: list[Circle],
) -> list[Circle]:
    """Add pines, oaks and birches; return their footprints (what a walker can bump into)."""
    span = (area[2] - area[0]) * (area[3] - area[1])
    count = int(span * (0.03 + 0.05 * clutter))
    kinds = rng.choice(["pine", "oak", "birch"], size=count, p=[0.45, 0.35, 0.2])
    heights = rng.uniform(6.0, 12.0, count)
    # A pine's lowest branches are at head height, so its footprint is the lowest cone;
    # leafy trees are bare below 2.4 m, so only the trunk counts.
    radii = np.where(kinds == "pine", 0.2 * heights, 0.035 * heights + 0.05)
    spots = scatter(rng, area, radii.tolist(), GAP, taken)
    placed: list[Circle] = []
    for (x, y, r), kind, height in zip(spots, kinds, heights, strict=False):
        base = (x, y, float(ground.height_at(x, y)))
        if kind == "pine":
            mesh = _scaled_pine(base, float(height), jitter_color(rng, (40, 85, 45), 15))
        elif kind == "oak":
            mesh = broadleaf(base, float(height), jitter_color(rng, (70, 120, 45), 18))
        else:
            mesh = broadleaf(
                base,
                float(height) * 0.8,
                jitter_color(rng, (120, 160, 70), 15),
                bark=(225, 225, 215),
            )
        kit.add("tree", mesh, kind=str(kind), height=round(float(height), 2))
        placed.append((x, y, r))
    return placed


def _scaled_pine(
    base: tuple[float, float, float], height: float, color: tuple[int, int, int]
) -> Mesh:
    """Return a pine whose lowest cone is 0.2 * height wide (the footprint ``scatter`` kept)."""
    mesh = pine((0.0, 0.0, 0.0), height, color)
    verts = mesh.vertices.copy()
    verts[:, :2] *= 0.2 / 0.3  # pine() spreads 0.3 * height; narrow it to the footprint
    return Mesh(verts, mesh.faces, mesh.colors).moved(base)


def _scatter_floor(
    kit: WorldKit,
    rng: np.random.Generator,
    ground: Terrain,
    area: tuple[float, float, float, float],
    clutter: float,
    taken: list[Circle],
) -> None:
    """Add rocks, bushes and fallen logs in the gaps the trees left."""
    span = (area[2] - area[0]) * (area[3] - area[1])
    count = int(span * 0.02 * (0.3 + clutter))
    kinds = rng.choice(["rock", "bush", "log"], size=count, p=[0.35, 0.45, 0.2])
    sizes = rng.uniform(0.3, 1.0, count)
    radii = np.where(kinds == "log", 1.0 + 2.0 * sizes, sizes)  # a log's radius: half its length
    spots = scatter(rng, area, radii.tolist(), GAP, taken)
    for (x, y, r), kind in zip(spots, kinds, strict=False):
        yaw = float(rng.uniform(0.0, 180.0))
        if kind == "rock":
            z = float(ground.height_at(x, y))
            kit.add("rock", rock((x, y, z), r, jitter_color(rng, (125, 122, 115), 15), yaw))
        elif kind == "bush":
            z = float(ground.height_at(x, y))
            kit.add("bush", bush((x, y, z), r, jitter_color(rng, (55, 100, 40), 15)))
        else:
            dx, dy = r * np.cos(np.radians(yaw)), r * np.sin(np.radians(yaw))
            z = float(
                ground.height_at(np.array([x - dx, x, x + dx]), np.array([y - dy, y, y + dy])).min()
            )
            kit.add("log", log((x, y, z), 2 * r, float(rng.uniform(0.15, 0.3)), yaw))
