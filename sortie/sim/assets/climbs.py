"""Ways between levels: flights of stairs, ramps, railings and turning stairwells.

Risers and slopes are chosen so that a walker climbs them: risers of at most 0.175 m (the
walker steps 0.35 m, the planner 0.25 m), 0.30 m treads, landings on long flights, ramps of
8 degrees with a flat landing every 12 m.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sortie.sim.assets.structures import WALL_THICKNESS, Rect
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Color, Mesh, box, merge, slab
from sortie.sim.scene import SceneObject

MAX_RISER = 0.175
"""Tallest riser built (the walker climbs 0.35 m; building codes ask for about 0.18 m)."""
TREAD = 0.30
RAILING_HEIGHT = 1.0
RAILING_COLOR: Color = (165, 180, 185)


@dataclass(frozen=True, slots=True)
class Run:
    """One straight piece of a stair or ramp in its local frame (x along the climb, y across).

    With ``steps`` > 0 it is a flight of equal steps whose last top is ``z1``, starting from a
    floor at ``z0``; with ``steps`` == 0 its top goes straight from ``z0`` to ``z1`` (a landing
    when they are equal, a ramp otherwise).
    """

    x0: float
    x1: float
    z0: float
    z1: float
    steps: int = 0

    def arrival(self) -> float:
        """Return the height of the floor this run leads onto (a flight's floor is a riser up)."""
        return self.z1 + (self.z1 - self.z0) / self.steps if self.steps else self.z1

    def tops(self) -> list[tuple[float, float, float]]:
        """Return ``(x0, x1, top)`` of each flat piece, or the run itself when it slopes."""
        if self.steps == 0:
            return [(self.x0, self.x1, self.z1)] if self.z0 == self.z1 else []
        tread = (self.x1 - self.x0) / self.steps
        riser = (self.z1 - self.z0) / self.steps
        return [
            (self.x0 + i * tread, self.x0 + (i + 1) * tread, self.z0 + (i + 1) * riser)
            for i in range(self.steps)
        ]


def riser_count(rise: float, max_riser: float = MAX_RISER) -> int:
    """Return the fewest equal risers, none taller than ``max_riser``, that climb ``rise``."""
    return max(1, math.ceil(rise / max_riser - 1e-9))


def stair_runs(z0: float, z1: float, max_flight: int = 12, landing: float = 1.5) -> list[Run]:
    """Return a straight stair from a floor at ``z0`` up to a floor at ``z1``.

    The stair has equal risers and ``TREAD`` treads, with a landing halfway when it needs
    more than ``max_flight`` risers. Its last riser reaches the upper floor at the far end.
    """
    count = riser_count(z1 - z0)
    riser = (z1 - z0) / count
    flights = [count] if count <= max_flight else [math.ceil(count / 2), count // 2]
    runs, x, z = [], 0.0, z0
    for i, risers in enumerate(flights):
        if risers > 1:
            runs.append(Run(x, x + (risers - 1) * TREAD, z, z + (risers - 1) * riser, risers - 1))
            x += (risers - 1) * TREAD
        z += risers * riser
        if i < len(flights) - 1:
            runs.append(Run(x, x + landing, z, z))
            x += landing
    return runs


def ramp_runs(
    z0: float, z1: float, slope: float = 8.0, max_run: float = 12.0, landing: float = 2.0
) -> list[Run]:
    """Return a straight ramp of ``slope`` degrees with flat landings every ``max_run`` metres."""
    length = (z1 - z0) / math.tan(math.radians(slope))
    count = max(1, math.ceil(length / max_run - 1e-9))
    piece, rise = length / count, (z1 - z0) / count
    runs, x, z = [], 0.0, z0
    for i in range(count):
        runs.append(Run(x, x + piece, z, z + rise))
        x, z = x + piece, z + rise
        if i < count - 1:
            runs.append(Run(x, x + landing, z, z))
            x += landing
    return runs


def climb_blocks(runs: Sequence[Run], width: float, base: float, color: Color) -> Mesh:
    """Return the solid body of stairs or a ramp in its local frame, standing on ``base``."""
    meshes = [
        slab(xa, -width / 2, xb, width / 2, base, top, color)
        for run in runs
        for xa, xb, top in run.tops()
    ]
    meshes += [
        _sloped_block(run, width, base, color)
        for run in runs
        if run.steps == 0 and run.z0 != run.z1
    ]
    return merge(meshes)


def _sloped_block(run: Run, width: float, base: float, color: Color) -> Mesh:
    """Return a block whose top slopes from ``run.z0`` at ``x0`` to ``run.z1`` at ``x1``."""
    block = slab(run.x0, -width / 2, run.x1, width / 2, base, max(run.z0, run.z1), color)
    verts = block.vertices.copy()
    top = verts[:, 2] > base + 1e-6
    verts[top, 2] = np.where(verts[top, 0] < (run.x0 + run.x1) / 2, run.z0, run.z1)
    return Mesh(verts, block.faces, block.colors)


def railing(
    start: tuple[float, float],
    end: tuple[float, float],
    z0: float,
    z1: float | None = None,
    height: float = RAILING_HEIGHT,
    color: Color = RAILING_COLOR,
) -> Mesh:
    """Return a solid balustrade whose foot runs from ``z0`` at ``start`` to ``z1`` at ``end``."""
    z1 = z0 if z1 is None else z1
    (xa, ya), (xb, yb) = start, end
    length = math.hypot(xb - xa, yb - ya)
    panel = box((length, 0.05, height), (length / 2, 0.0, height / 2), color)
    rail = box((length, 0.08, 0.06), (length / 2, 0.0, height), (70, 70, 75))
    shear = np.eye(4)
    shear[2, 0] = (z1 - z0) / max(length, 1e-6)  # z grows along the length: follows the slope
    yaw = math.degrees(math.atan2(yb - ya, xb - xa))
    return merge([panel, rail]).transformed(shear).moved((xa, ya, z0), yaw)


def climb_railings(
    runs: Sequence[Run], width: float, sides: tuple[bool, bool] = (True, True)
) -> Mesh:
    """Return railings along the right (y-) and left (y+) edges of a climb, in its frame."""
    meshes = []
    for side, wanted in zip((-1.0, 1.0), sides, strict=True):
        if not wanted:
            continue
        y = side * (width / 2 + 0.03)
        for run in runs:
            first = run.z0 + (run.z1 - run.z0) / run.steps if run.steps else run.z0
            meshes.append(railing((run.x0, y), (run.x1, y), first, run.z1))
    return merge(meshes)


def add_climb(
    kit: WorldKit,
    semantic: str,
    runs: Sequence[Run],
    start: tuple[float, float],
    yaw: float,
    width: float,
    base: float,
    color: Color,
    sides: tuple[bool, bool] = (True, True),
) -> SceneObject:
    """Add stairs or a ramp climbing along ``yaw`` from ``start``, with railings on ``sides``."""
    place = (start[0], start[1], 0.0)
    obj = kit.add(
        semantic,
        climb_blocks(runs, width, base, color).moved(place, yaw),
        rise=round(runs[-1].arrival() - runs[0].z0, 3),
    )
    if any(sides):
        kit.add("railing", climb_railings(runs, width, sides).moved(place, yaw))
    return obj


def climb_length(runs: Sequence[Run]) -> float:
    """Return the horizontal length of a climb."""
    return runs[-1].x1 - runs[0].x0


# --- a stairwell: two flights turning at a landing ---------------------------------------

NEWEL = 0.2
"""Thickness of the wall between the two flights of a stairwell."""


@dataclass(frozen=True, slots=True)
class Stairwell:
    """Where a built stairwell is, in world coordinates.

    Attributes:
        opening: the hole the upper floor must leave over the well.
        path: the walking line from the lower floor's foot of the stairs, along both flights
            and across the landing, to the upper floor.
        z0: height of the lower floor.
        z1: height of the upper floor.
    """

    opening: Rect
    path: tuple[tuple[float, float], ...]
    z0: float
    z1: float


def stairwell(
    kit: WorldKit,
    mouth: tuple[float, float],
    yaw: float,
    z0: float,
    z1: float,
    width: float = 1.3,
    color: Color = (175, 172, 165),
    wall_color: Color = (200, 196, 188),
) -> Stairwell:
    """Add stairs from ``z0`` to ``z1`` that climb away from ``mouth`` along ``yaw`` and turn back.

    The first flight starts at the mouth on the right-hand half, climbs to a landing, and
    the second flight returns along the left-hand half to arrive at the mouth one floor up.
    Walls close the sides and far end up to a railing's height above the upper floor; the
    upper floor must leave ``Stairwell.opening`` open.
    """
    count = riser_count(z1 - z0)
    riser, first = (z1 - z0) / count, math.ceil(count / 2)
    going = (first - 1) * TREAD
    landing = width + 0.1
    lane = NEWEL / 2 + width / 2  # |y| of each flight's centre line
    up = [Run(0.0, going, z0, z0 + (first - 1) * riser, first - 1)]
    z_landing = z0 + first * riser
    back = _return_flight(count - first, riser, going, z_landing, z1)
    blocks = [
        climb_blocks(up, width, z0, color).moved((0.0, -lane, 0.0)),
        slab(going, -lane - width / 2, going + landing, lane + width / 2, z0, z_landing, color),
        climb_blocks(back, width, z0, color).moved((going, lane, 0.0), 180.0),
    ]
    place = (mouth[0], mouth[1], 0.0)
    kit.add("stairs", merge(blocks).moved(place, yaw), rise=round(z1 - z0, 3))
    kit.add(
        "wall",
        merge(_well_walls(going, landing, lane, width, z0, z1, wall_color)).moved(place, yaw),
    )
    kit.add("railing", railing((0.0, -lane - width / 2), (0.0, -NEWEL / 2), z1).moved(place, yaw))
    return _well_record(mouth, yaw, going + landing, lane + width / 2, lane, z0, z1)


def _return_flight(
    risers: int, riser: float, going: float, z_landing: float, z1: float
) -> list[Run]:
    """Return the second flight in its own frame, padded to the first flight's length."""
    steps = risers - 1
    runs = [Run(0.0, steps * TREAD, z_landing, z1 - riser, steps)] if steps else []
    if going - steps * TREAD > 1e-6:
        runs.append(Run(steps * TREAD, going, z1, z1))  # the top step is the upper floor
    return runs


def _well_walls(
    going: float, landing: float, lane: float, width: float, z0: float, z1: float, color: Color
) -> list[Mesh]:
    """Return the newel between the flights and the walls around the well, in its frame."""
    top = z1 + RAILING_HEIGHT
    outer = lane + width / 2
    length = going + landing
    return [
        slab(0.0, -NEWEL / 2, going, NEWEL / 2, z0, top, color),
        slab(0.0, -outer - WALL_THICKNESS, length, -outer, z0, top, color),
        slab(0.0, outer, length, outer + WALL_THICKNESS, z0, top, color),
        slab(
            length,
            -outer - WALL_THICKNESS,
            length + WALL_THICKNESS,
            outer + WALL_THICKNESS,
            z0,
            top,
            color,
        ),
    ]


def _well_record(
    mouth: tuple[float, float],
    yaw: float,
    length: float,
    half: float,
    lane: float,
    z0: float,
    z1: float,
) -> Stairwell:
    """Return the world opening and walking path of a stairwell from its frame's numbers."""
    rad = math.radians(yaw)
    cos, sin = math.cos(rad), math.sin(rad)

    def world(x: float, y: float) -> tuple[float, float]:
        return (round(mouth[0] + x * cos - y * sin, 6), round(mouth[1] + x * sin + y * cos, 6))

    corners = [world(0.0, -half), world(length, half)]
    xs, ys = sorted(c[0] for c in corners), sorted(c[1] for c in corners)
    turn = length - 0.7
    path = (world(-1.0, -lane), world(turn, -lane), world(turn, lane), world(-1.0, lane))
    return Stairwell((xs[0], ys[0], xs[1], ys[1]), path, z0, z1)


def stairwell_size(rise: float, width: float = 1.3) -> tuple[float, float]:
    """Return the (length, breadth) of the opening a stairwell for ``rise`` needs."""
    going = (math.ceil(riser_count(rise) / 2) - 1) * TREAD
    return going + width + 0.1, 2 * width + NEWEL
