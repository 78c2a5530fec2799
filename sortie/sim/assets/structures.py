"""Structural pieces: floors with stairwells, walls, fences, doors, gates, stairs and ramps."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Color, Mesh, box, merge, pose_matrix, quad, slab
from sortie.sim.scene import Dynamics, SceneObject
from sortie.sim.textures import text_texture

WALL_THICKNESS = 0.2


def wall(
    start: tuple[float, float], end: tuple[float, float], z0: float, height: float,
    color: Color, openings: list[tuple[float, float, float]] | None = None,
    thickness: float = WALL_THICKNESS,
) -> list[Mesh]:
    """Return the boxes of a straight wall from ``start`` to ``end`` standing on ``z0``.

    ``openings`` are ``(offset along the wall, width, height)`` holes from the floor up
    (doorways); the wall above each opening is kept as a lintel.
    """
    (x0, y0), (x1, y1) = start, end
    length = math.hypot(x1 - x0, y1 - y0)
    yaw = math.degrees(math.atan2(y1 - y0, x1 - x0))
    pieces: list[tuple[float, float, float, float]] = []  # along0, along1, zlow, zhigh
    cursor = 0.0
    for offset, width, door_height in sorted(openings or []):
        pieces.append((cursor, offset - width / 2, 0.0, height))
        pieces.append((offset - width / 2, offset + width / 2, door_height, height))
        cursor = offset + width / 2
    pieces.append((cursor, length, 0.0, height))
    meshes = []
    for a0, a1, zl, zh in pieces:
        if a1 - a0 > 1e-3 and zh - zl > 1e-3:
            local = box((a1 - a0, thickness, zh - zl), ((a0 + a1) / 2, 0.0, z0 + (zl + zh) / 2),
                        color)  # fmt: skip
            meshes.append(local.moved((x0, y0, 0.0), yaw))
    return meshes


def sliding_door(
    kit: WorldKit, center: tuple[float, float, float], yaw: float, width: float = 1.0,
    height: float = 2.1, color: Color = (140, 90, 50), semantic: str = "door",
    starts_open: bool = False, thickness: float = 0.08, **attributes: str,
) -> SceneObject:
    """Add a sliding door (or gate) filling an opening; opening slides it along ``yaw``.

    ``center`` is the middle of the opening at floor height; the panel slides sideways by its
    own width, into the wall beside the opening.
    """
    cx, cy, cz = center
    panel = box((width, thickness, height), (0.0, 0.0, height / 2), color).moved(center, yaw)
    shift = width + 0.02
    rad = math.radians(yaw)
    slide = pose_matrix((shift * math.cos(rad), shift * math.sin(rad), 0.0))
    obj = kit.add(semantic, panel, dynamics=Dynamics.OPENABLE, open_transform=slide,
                  **attributes)  # fmt: skip
    if starts_open:
        obj = SceneObject(obj.name, obj.semantic, obj.parts, obj.attributes, obj.dynamics,
                          obj.open_transform, True)  # fmt: skip
        kit.objects[-1] = obj
    return obj


def floor_slab(x0: float, y0: float, x1: float, y1: float, z: float, color: Color,
               thickness: float = 0.1) -> Mesh:
    """Return a floor whose walkable top is at height ``z``."""
    return slab(x0, y0, x1, y1, z - thickness, z, color)


def jitter_color(rng: np.random.Generator, color: Color, amount: int = 20) -> Color:
    """Return ``color`` with each channel moved by up to ``amount``."""
    shifted = np.clip(np.asarray(color) + rng.integers(-amount, amount + 1, 3), 0, 255)
    return (int(shifted[0]), int(shifted[1]), int(shifted[2]))


# --- floors with holes, fences and gates -------------------------------------------------

Rect = tuple[float, float, float, float]
"""An axis-aligned rectangle ``(x0, y0, x1, y1)`` in metres."""


def slab_with_holes(outer: Rect, holes: Sequence[Rect], z: float, color: Color,
                    thickness: float = 0.2) -> list[Mesh]:
    """Return a floor over ``outer`` with its top at ``z``, leaving ``holes`` open (stairwells).

    The rectangle is cut along every hole edge into a grid; the cells outside all holes are
    joined row by row into as few boxes as that allows.
    """
    x0, y0, x1, y1 = outer
    xs = sorted({x0, x1, *(min(max(v, x0), x1) for h in holes for v in (h[0], h[2]))})
    ys = sorted({y0, y1, *(min(max(v, y0), y1) for h in holes for v in (h[1], h[3]))})
    meshes = []
    for ya, yb in itertools.pairwise(ys):
        row = [(xa, xb) for xa, xb in itertools.pairwise(xs)
               if not _inside_any(((xa + xb) / 2, (ya + yb) / 2), holes)]  # fmt: skip
        for start, end in _joined(row):
            meshes.append(slab(start, ya, end, yb, z - thickness, z, color))
    return meshes


def _inside_any(point: tuple[float, float], rects: Sequence[Rect]) -> bool:
    x, y = point
    return any(r[0] < x < r[2] and r[1] < y < r[3] for r in rects)


def _joined(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Return touching ``(start, end)`` spans merged, in order."""
    merged: list[tuple[float, float]] = []
    for start, end in spans:
        if merged and abs(merged[-1][1] - start) < 1e-9:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def fence(start: tuple[float, float], end: tuple[float, float], z0: float, height: float,
          color: Color, openings: list[tuple[float, float, float]] | None = None,
          post_spacing: float = 2.5) -> list[Mesh]:
    """Return a plank fence with posts from ``start`` to ``end``; ``openings`` as in ``wall``."""
    meshes = wall(start, end, z0, height, color, openings, thickness=0.06)
    (xa, ya), (xb, yb) = start, end
    length = math.hypot(xb - xa, yb - ya)
    post_color = (max(color[0] - 50, 0), max(color[1] - 50, 0), max(color[2] - 50, 0))
    for along in np.linspace(0.0, length, max(2, round(length / post_spacing) + 1)):
        if any(abs(along - off) < w / 2 + 0.1 for off, w, _ in openings or []):
            continue  # a post would stand in the gateway
        t = along / length
        center = (xa + t * (xb - xa), ya + t * (yb - ya), z0 + (height + 0.1) / 2)
        meshes.append(box((0.12, 0.12, height + 0.1), center, post_color))
    return meshes


def gate(kit: WorldKit, center: tuple[float, float, float], yaw: float, width: float = 2.0,
         height: float = 1.8, color: Color = (90, 95, 100), **attributes: str) -> SceneObject:
    """Add a closed sliding gate filling a fence opening of ``width`` at ``center``."""
    return sliding_door(kit, center, yaw, width, height, color, "gate", False, 0.05,
                        **attributes)


# --- stairs, ramps and railings ----------------------------------------------------------

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
        return [(self.x0 + i * tread, self.x0 + (i + 1) * tread, self.z0 + (i + 1) * riser)
                for i in range(self.steps)]  # fmt: skip


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
            runs.append(Run(x, x + (risers - 1) * TREAD, z, z + (risers - 1) * riser,
                            risers - 1))  # fmt: skip
            x += (risers - 1) * TREAD
        z += risers * riser
        if i < len(flights) - 1:
            runs.append(Run(x, x + landing, z, z))
            x += landing
    return runs


def ramp_runs(z0: float, z1: float, slope: float = 8.0, max_run: float = 12.0,
              landing: float = 2.0) -> list[Run]:
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
    meshes = [slab(xa, -width / 2, xb, width / 2, base, top, color)
              for run in runs for xa, xb, top in run.tops()]  # fmt: skip
    meshes += [_sloped_block(run, width, base, color) for run in runs
               if run.steps == 0 and run.z0 != run.z1]  # fmt: skip
    return merge(meshes)


def _sloped_block(run: Run, width: float, base: float, color: Color) -> Mesh:
    """Return a block whose top slopes from ``run.z0`` at ``x0`` to ``run.z1`` at ``x1``."""
    block = slab(run.x0, -width / 2, run.x1, width / 2, base, max(run.z0, run.z1), color)
    verts = block.vertices.copy()
    top = verts[:, 2] > base + 1e-6
    verts[top, 2] = np.where(verts[top, 0] < (run.x0 + run.x1) / 2, run.z0, run.z1)
    return Mesh(verts, block.faces, block.colors)


def railing(start: tuple[float, float], end: tuple[float, float], z0: float,
            z1: float | None = None, height: float = RAILING_HEIGHT,
            color: Color = RAILING_COLOR) -> Mesh:
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


def climb_railings(runs: Sequence[Run], width: float, sides: tuple[bool, bool] = (True, True)
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


def add_climb(kit: WorldKit, semantic: str, runs: Sequence[Run], start: tuple[float, float],
              yaw: float, width: float, base: float, color: Color,
              sides: tuple[bool, bool] = (True, True)) -> SceneObject:
    """Add stairs or a ramp climbing along ``yaw`` from ``start``, with railings on ``sides``."""
    place = (start[0], start[1], 0.0)
    obj = kit.add(semantic, climb_blocks(runs, width, base, color).moved(place, yaw),
                  rise=round(runs[-1].arrival() - runs[0].z0, 3))  # fmt: skip
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


def stairwell(kit: WorldKit, mouth: tuple[float, float], yaw: float, z0: float, z1: float,
              width: float = 1.3, color: Color = (175, 172, 165),
              wall_color: Color = (200, 196, 188)) -> Stairwell:
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
    blocks = [climb_blocks(up, width, z0, color).moved((0.0, -lane, 0.0)),
              slab(going, -lane - width / 2, going + landing, lane + width / 2, z0, z_landing,
                   color),
              climb_blocks(back, width, z0, color).moved((going, lane, 0.0), 180.0)]  # fmt: skip
    place = (mouth[0], mouth[1], 0.0)
    kit.add("stairs", merge(blocks).moved(place, yaw), rise=round(z1 - z0, 3))
    kit.add("wall", merge(_well_walls(going, landing, lane, width, z0, z1, wall_color))
            .moved(place, yaw))  # fmt: skip
    kit.add("railing", railing((0.0, -lane - width / 2), (0.0, -NEWEL / 2), z1).moved(place, yaw))
    return _well_record(mouth, yaw, going + landing, lane + width / 2, lane, z0, z1)


def _return_flight(risers: int, riser: float, going: float, z_landing: float, z1: float
                   ) -> list[Run]:
    """Return the second flight in its own frame, padded to the first flight's length."""
    steps = risers - 1
    runs = [Run(0.0, steps * TREAD, z_landing, z1 - riser, steps)] if steps else []
    if going - steps * TREAD > 1e-6:
        runs.append(Run(steps * TREAD, going, z1, z1))  # the top step is the upper floor
    return runs


def _well_walls(going: float, landing: float, lane: float, width: float, z0: float,
                z1: float, color: Color) -> list[Mesh]:
    """Return the newel between the flights and the walls around the well, in its frame."""
    top = z1 + RAILING_HEIGHT
    outer = lane + width / 2
    length = going + landing
    return [slab(0.0, -NEWEL / 2, going, NEWEL / 2, z0, top, color),
            slab(0.0, -outer - WALL_THICKNESS, length, -outer, z0, top, color),
            slab(0.0, outer, length, outer + WALL_THICKNESS, z0, top, color),
            slab(length, -outer - WALL_THICKNESS, length + WALL_THICKNESS,
                 outer + WALL_THICKNESS, z0, top, color)]  # fmt: skip


def _well_record(mouth: tuple[float, float], yaw: float, length: float, half: float,
                 lane: float, z0: float, z1: float) -> Stairwell:
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


# --- street furniture --------------------------------------------------------------------


def bench(center: tuple[float, float, float], yaw: float, color: Color = (130, 90, 55)
          ) -> Mesh:
    """Return a 1.6 m park bench standing on ``center``, its seat facing along ``yaw``."""
    seat = box((0.45, 1.6, 0.06), (0.0, 0.0, 0.45), color)
    back = box((0.06, 1.6, 0.4), (-0.22, 0.0, 0.75), color)
    legs = [box((0.4, 0.06, 0.45), (0.0, side * 0.7, 0.225), (60, 60, 65)) for side in (-1, 1)]
    return merge([seat, back, *legs]).moved(center, yaw)


def lamp_post(base: tuple[float, float, float], height: float = 4.0) -> Mesh:
    """Return a street lamp: a thin pole with a lamp head."""
    x, y, z = base
    pole = box((0.12, 0.12, height), (x, y, z + height / 2), (55, 60, 65))
    head = box((0.5, 0.3, 0.15), (x, y, z + height), (235, 230, 190))
    return merge([pole, head])


def sign_board(text: str, center: tuple[float, float, float], yaw: float, width: float = 2.0,
               height: float = 0.5, ink: Color = (245, 245, 245),
               paper: Color = (20, 60, 140)) -> list[Mesh]:
    """Return a two-sided sign reading ``text`` on both faces, facing ``yaw`` and its opposite.

    ``center`` is the middle of the board; each face is a separate textured part.
    """
    texture = text_texture(text, 256, max(16, int(256 * height / width)), ink, paper)
    board = box((0.06, width, height), (0.0, 0.0, 0.0), (60, 60, 65))
    hw, hh = width / 2, height / 2
    faces = [quad([(d, -side * hw, hh), (d, side * hw, hh), (d, side * hw, -hh),
                   (d, -side * hw, -hh)], texture)
             for d, side in ((0.031, 1.0), (-0.031, -1.0))]  # fmt: skip
    return [m.moved(center, yaw) for m in (board, *faces)]
