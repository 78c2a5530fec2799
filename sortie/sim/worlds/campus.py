"""``campus``: buildings and courtyards on a grid, joined only through doors and gates.

Every pair of neighbouring areas is separated by a wall (if either is a building) or a fence;
a random spanning tree of those boundaries, plus a few extra ones, get one opening each,
filled by a closed sliding door (walls) or sliding gate (fences). The outer boundary has no
opening, so closing a door cuts every path through it: the rescue L4 world.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from sortie.sim.assets.furniture import furnish
from sortie.sim.assets.structures import (
    Rect,
    bench,
    fence,
    floor_slab,
    gate,
    jitter_color,
    lamp_post,
    slab_with_holes,
    sliding_door,
    wall,
)
from sortie.sim.assets.terrain import Circle, broadleaf, bush, scatter
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import slab
from sortie.sim.scene import Scene
from sortie.sim.worlds.base import CLUTTER, LIGHTING, Param, ParamValue, world

WALL_HEIGHT = 3.5
CEILING = 3.6
"""Underside of the ceilings; the gap above the walls lets the top-down map cut between them."""
FENCE_HEIGHT = 2.0
DOOR = (1.0, 2.1)  # width, height of a door opening
GATE = (2.0, 1.9)
KEEP_CLEAR = 1.8
"""Radius kept free of props on both sides of every door and gate."""


@dataclass(frozen=True, slots=True)
class Boundary:
    """The straight edge between two neighbouring areas (``b`` is -1 on the outer edge)."""

    a: int
    b: int
    start: tuple[float, float]
    end: tuple[float, float]


@world(
    "campus",
    "buildings and courtyards joined only through closed doors and gates (rescue L4)",
    (Param("size", 48.0, "side of the square campus in metres", 30.0, 80.0), CLUTTER, LIGHTING),
)
def build(kit: WorldKit, rng: np.random.Generator, params: Mapping[str, ParamValue]) -> Scene:
    """Build a grid of areas of about 16 m, each a building or a courtyard, of side ``size``."""
    size = float(params["size"])
    cells = max(2, round(size / 16))
    step, half = size / cells, size / 2
    rects = [
        (-half + c * step, -half + r * step, -half + (c + 1) * step, -half + (r + 1) * step)
        for r in range(cells)
        for c in range(cells)
    ]
    indoor = _choose_buildings(rng, len(rects))
    edges = _boundaries(cells, rects)
    linked = _linked(rng, len(rects), edges)
    clear = _build_boundaries(kit, rng, edges, linked, indoor)
    clutter = float(params["clutter"])
    for i, rect in enumerate(rects):
        keep = [c for c in clear if _near(rect, c)]
        if indoor[i]:
            _building(kit, rng, i, rect, clutter, keep)
        else:
            _courtyard(kit, rng, i, rect, clutter, keep)
    outside = (-half - 10, -half - 10, half + 10, half + 10)
    kit.add("grass", slab_with_holes(outside, [(-half, -half, half, half)], 0.0, (95, 130, 70)))
    cut = (WALL_HEIGHT + CEILING) / 2
    return kit.scene((-half, -half, half, half), str(params["lighting"]), topdown_cut=cut)


def _choose_buildings(rng: np.random.Generator, count: int) -> list[bool]:
    """Return which areas are buildings: about half, never the first (a courtyard to start in)."""
    indoor = [False] + [bool(v) for v in rng.random(count - 1) < 0.5]
    if not any(indoor):
        indoor[int(rng.integers(1, count))] = True
    return indoor


def _boundaries(cells: int, rects: list[Rect]) -> list[Boundary]:
    """Return every area's edges: shared ones once, outer ones with ``b`` = -1."""
    edges = []
    for i, (x0, y0, x1, y1) in enumerate(rects):
        row, col = divmod(i, cells)
        east = i + 1 if col + 1 < cells else -1
        north = i + cells if row + 1 < cells else -1
        edges.append(Boundary(i, east, (x1, y0), (x1, y1)))
        edges.append(Boundary(i, north, (x0, y1), (x1, y1)))
        if col == 0:
            edges.append(Boundary(i, -1, (x0, y0), (x0, y1)))
        if row == 0:
            edges.append(Boundary(i, -1, (x0, y0), (x1, y0)))
    return edges


def _linked(rng: np.random.Generator, count: int, edges: list[Boundary]) -> set[int]:
    """Return the indices of the inner boundaries that get a door: a spanning tree plus some."""
    group = list(range(count))

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    inner = [k for k, edge in enumerate(edges) if edge.b >= 0]
    linked = set()
    for k in rng.permutation(inner):
        edge = edges[int(k)]
        ra, rb = root(edge.a), root(edge.b)
        if ra != rb or rng.random() < 0.25:
            group[ra] = rb
            linked.add(int(k))
    return linked


def _build_boundaries(
    kit: WorldKit,
    rng: np.random.Generator,
    edges: list[Boundary],
    linked: set[int],
    indoor: list[bool],
) -> list[Circle]:
    """Add walls and fences, with a door or gate in each linked boundary; return door zones."""
    wall_color = jitter_color(rng, (205, 195, 180))
    fence_color = jitter_color(rng, (150, 115, 75))
    clear: list[Circle] = []
    for k, edge in enumerate(edges):
        solid = indoor[edge.a] or (edge.b >= 0 and indoor[edge.b])
        (xa, ya), (xb, yb) = edge.start, edge.end
        length = float(np.hypot(xb - xa, yb - ya))
        yaw = float(np.degrees(math.atan2(yb - ya, xb - xa)))
        width, height = DOOR if solid else GATE
        # Keep the opening, and the wall it slides into, away from the corners.
        offset = float(rng.uniform(2.0, length - 2.0 - width)) if k in linked else None
        openings = [(offset, width, height)] if offset is not None else None
        if solid:
            kit.add("wall", wall(edge.start, edge.end, 0.0, WALL_HEIGHT, wall_color, openings))
        else:
            kit.add("fence", fence(edge.start, edge.end, 0.0, FENCE_HEIGHT, fence_color, openings))
        if offset is not None:
            t = offset / length
            center = (xa + t * (xb - xa), ya + t * (yb - ya), 0.0)
            if solid:
                sliding_door(kit, center, yaw, width, height)
            else:
                gate(kit, center, yaw, width, height)
            clear.append((center[0], center[1], KEEP_CLEAR))
    return clear


def _near(rect: Rect, circle: Circle) -> bool:
    x, y, r = circle
    return rect[0] - r <= x <= rect[2] + r and rect[1] - r <= y <= rect[3] + r


def _building(
    kit: WorldKit,
    rng: np.random.Generator,
    index: int,
    rect: Rect,
    clutter: float,
    clear: list[Circle],
) -> None:
    """Add a building's floor, ceiling and furniture."""
    x0, y0, x1, y1 = rect
    kit.add(
        "floor",
        floor_slab(x0, y0, x1, y1, 0.0, jitter_color(rng, (165, 150, 125), 10)),
        area=index,
        kind="building",
    )
    kit.add("ceiling", slab(x0, y0, x1, y1, CEILING, CEILING + 0.2, (225, 225, 220)))
    count = int(round((x1 - x0) * (y1 - y0) * 0.03 * (0.3 + clutter)))
    furnish(
        kit,
        rng,
        (x0 + 0.8, y0 + 0.8, x1 - 0.8, y1 - 0.8),
        0.0,
        count,
        ("table", "shelf", "crate", "pillar"),
        clear,
        ceiling=CEILING,
    )


def _courtyard(
    kit: WorldKit,
    rng: np.random.Generator,
    index: int,
    rect: Rect,
    clutter: float,
    clear: list[Circle],
) -> None:
    """Add a courtyard: paving around a lawn, with trees, bushes, benches and lamps."""
    x0, y0, x1, y1 = rect
    lawn = (x0 + 2.5, y0 + 2.5, x1 - 2.5, y1 - 2.5)
    kit.add(
        "sidewalk",
        slab_with_holes(rect, [lawn], 0.0, jitter_color(rng, (175, 170, 160))),
        area=index,
        kind="courtyard",
    )
    kit.add("grass", floor_slab(*lawn, 0.0, jitter_color(rng, (90, 140, 65))), area=index)
    inner = (x0 + 0.8, y0 + 0.8, x1 - 0.8, y1 - 0.8)
    count = int(round((x1 - x0) * (y1 - y0) * 0.025 * (0.3 + clutter)))
    kinds = rng.choice(["tree", "bush", "bench", "lamp_post"], size=count, p=[0.35, 0.3, 0.2, 0.15])
    radii = {"tree": 0.3, "bush": 0.7, "bench": 0.85, "lamp_post": 0.2}
    spots = scatter(rng, inner, [radii[str(k)] for k in kinds], 1.2, clear)
    for (x, y, r), kind in zip(spots, kinds, strict=False):
        if kind == "tree":
            height = float(rng.uniform(6.0, 9.0))
            kit.add(
                "tree",
                broadleaf((x, y, 0.0), height, jitter_color(rng, (70, 125, 50), 18)),
                kind="oak",
            )
        elif kind == "bush":
            kit.add("bush", bush((x, y, 0.0), r, jitter_color(rng, (55, 110, 45), 15)))
        elif kind == "bench":
            kit.add("bench", bench((x, y, 0.0), float(rng.choice([0.0, 90.0, 180.0, 270.0]))))
        else:
            kit.add("lamp_post", lamp_post((x, y, 0.0)))
