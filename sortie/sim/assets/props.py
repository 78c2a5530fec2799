"""Named colours, labelled quads, fences, street furniture and the rescue stretcher.

Colours come from one named palette so attributes (and the clues written from them) can say
"red" or "dark green" and mean the colour actually drawn. ``Footprints`` keeps placed props
apart so a walker always has a corridor between them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Color, Mesh, Vec3, box, cylinder, merge, quad
from sortie.sim.scene import SceneObject

PALETTE: dict[str, Color] = {
    "white": (236, 236, 232),
    "black": (28, 28, 30),
    "grey": (128, 128, 130),
    "silver": (182, 184, 188),
    "dark grey": (70, 70, 74),
    "red": (196, 32, 32),
    "dark red": (122, 24, 28),
    "orange": (232, 120, 24),
    "yellow": (232, 200, 40),
    "cream": (236, 226, 192),
    "beige": (208, 188, 148),
    "brown": (118, 74, 40),
    "green": (44, 146, 56),
    "dark green": (26, 84, 38),
    "sage green": (158, 184, 140),
    "blue": (36, 72, 184),
    "navy": (26, 36, 84),
    "light blue": (152, 192, 226),
    "purple": (112, 50, 142),
    "pink": (232, 152, 172),
    "teal": (28, 128, 128),
}
"""Every colour an asset may be described by, name -> RGB."""

GLASS: Color = (70, 90, 110)
PROUD = 0.015  # labels and painted quads sit this far in front of their surface (no z-fighting)
CORRIDOR = 1.3  # free gap kept between obstacles: a 0.6 m-wide walker plus some slack


def pick(rng: np.random.Generator, names: tuple[str, ...]) -> str:
    """Return one of ``names`` chosen by ``rng``."""
    return names[int(rng.integers(len(names)))]


def shade(color: Color, factor: float) -> Color:
    """Return ``color`` darkened (factor < 1) or lightened, clipped to 0..255."""
    r, g, b = (min(255, int(v * factor)) for v in color)
    return (r, g, b)


def facing_quad(
    center: Vec3,
    facing: float,
    width: float,
    height: float,
    texture: NDArray[np.uint8] | None = None,
    color: Color = (255, 255, 255),
) -> Mesh:
    """Return an upright quad centred on ``center`` whose front looks along yaw ``facing``.

    A textured quad reads left to right for someone standing in front of it.
    """
    c, s = math.cos(math.radians(facing)), math.sin(math.radians(facing))
    # Plain floats (float64, the same operations in the same order as numpy vectors would
    # take): a sign of a shop or a plate is four corners, and numpy's calls cost more.
    w, (mx, my, mz) = float(width), (float(v) for v in center)
    lx, ly, lz = s * w / 2, -c * w / 2, 0.0 * w / 2  # the viewer faces -facing
    ux, uy, uz = 0.0, 0.0, float(height) / 2
    corners = [
        (mx + lx + ux, my + ly + uy, mz + lz + uz),
        (mx - lx + ux, my - ly + uy, mz - lz + uz),
        (mx - lx - ux, my - ly - uy, mz - lz - uz),
        (mx + lx - ux, my + ly - uy, mz + lz - uz),
    ]
    return quad(corners, texture, color)


def local_point(
    origin: tuple[float, float], yaw: float, x: float, y: float, z: float = 0.0
) -> Vec3:
    """Return where local point ``(x, y, z)`` of a frame at ``origin`` turned by ``yaw`` lies."""
    c, s = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
    return (origin[0] + c * x - s * y, origin[1] + s * x + c * y, z)


@dataclass
class Footprints:
    """Ground rectangles already taken, so new obstacles keep a walkable gap from them."""

    rects: list[tuple[float, float, float, float]] = field(default_factory=list)

    def reserve(self, x0: float, y0: float, x1: float, y1: float) -> None:
        """Mark the rectangle ``[x0, x1] x [y0, y1]`` as taken."""
        self.rects.append((min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)))

    def fits(self, x0: float, y0: float, x1: float, y1: float, gap: float = CORRIDOR) -> bool:
        """Return whether the rectangle stays at least ``gap`` away from every taken one."""
        return all(
            x1 + gap <= a0 or a1 + gap <= x0 or y1 + gap <= b0 or b1 + gap <= y0
            for a0, b0, a1, b1 in self.rects
        )

    def place_disc(self, x: float, y: float, radius: float, gap: float = CORRIDOR) -> bool:
        """Reserve a disc's bounding square if it fits; return whether it did."""
        if not self.fits(x - radius, y - radius, x + radius, y + radius, gap):
            return False
        self.reserve(x - radius, y - radius, x + radius, y + radius)
        return True


def fence_meshes(
    start: tuple[float, float],
    end: tuple[float, float],
    height: float,
    color: Color,
    post_every: float = 2.5,
) -> list[Mesh]:
    """Return a board fence from ``start`` to ``end``: a solid panel, posts and a top rail."""
    (x0, y0), (x1, y1) = start, end
    length = math.hypot(x1 - x0, y1 - y0)
    yaw = math.degrees(math.atan2(y1 - y0, x1 - x0))
    post_color = shade(color, 0.75)
    panel = box((length, 0.05, height - 0.05), (length / 2, 0, (height - 0.05) / 2), color)
    rail = box((length, 0.1, 0.06), (length / 2, 0, height - 0.03), post_color)
    count = max(1, int(math.ceil(length / post_every)))
    posts = [
        box((0.1, 0.1, height + 0.1), (length * i / count, 0, (height + 0.1) / 2), post_color)
        for i in range(count + 1)
    ]
    return [merge([panel, rail, *posts]).moved((x0, y0, 0.0), yaw)]


def add_fence(
    kit: WorldKit,
    start: tuple[float, float],
    end: tuple[float, float],
    height: float = 1.0,
    color: str = "white",
    kind: str = "yard",
) -> SceneObject:
    """Add one straight fence segment (semantic ``fence``) of a palette colour."""
    meshes = fence_meshes(start, end, height, PALETTE[color])
    return kit.add("fence", meshes, color=color, height=round(height, 2), kind=kind)


def add_boundary(
    kit: WorldKit,
    bounds: tuple[float, float, float, float],
    height: float = 2.2,
    color: str = "brown",
) -> None:
    """Fence the inside edge of ``bounds`` so walkers cannot leave the world."""
    xmin, ymin, xmax, ymax = (bounds[0] + 0.1, bounds[1] + 0.1, bounds[2] - 0.1, bounds[3] - 0.1)
    corners = [(xmin, ymin), (xmax, ymin), (xmax, ymax), (xmin, ymax)]
    for start, end in zip(corners, corners[1:] + corners[:1], strict=True):
        add_fence(kit, start, end, height, color, kind="boundary")


def add_lamp_post(
    kit: WorldKit, position: tuple[float, float], facing: float, color: str = "dark grey"
) -> SceneObject:
    """Add a street lamp: a pole with an arm reaching along ``facing`` and a lamp head."""
    rgb = PALETTE[color]
    pole = cylinder(0.08, 4.6, (0, 0, 0), rgb, 6)
    base = cylinder(0.16, 0.5, (0, 0, 0), rgb, 6)
    arm = box((1.0, 0.08, 0.08), (0.5, 0, 4.5), rgb)
    head = box((0.5, 0.28, 0.14), (1.0, 0, 4.42), (250, 240, 190))
    mesh = merge([pole, base, arm, head]).moved((*position, 0.0), facing)
    return kit.add("lamp_post", mesh, color=color)


def add_bench(
    kit: WorldKit, position: tuple[float, float], facing: float, color: str = "brown"
) -> SceneObject:
    """Add a park bench whose sitter looks along ``facing``."""
    wood, iron = PALETTE[color], PALETTE["dark grey"]
    seat = box((0.45, 1.6, 0.06), (0, 0, 0.45), wood)
    back = box((0.05, 1.6, 0.4), (-0.22, 0, 0.72), wood)
    legs = [box((0.45, 0.06, 0.45), (0, side * 0.7, 0.225), iron) for side in (-1, 1)]
    mesh = merge([seat, back, *legs]).moved((*position, 0.0), facing)
    return kit.add("bench", mesh, color=color)


def add_trash_bin(
    kit: WorldKit, position: tuple[float, float], color: str = "green"
) -> SceneObject:
    """Add a round litter bin with a darker lid."""
    rgb = PALETTE[color]
    body = cylinder(0.28, 0.9, (*position, 0.0), rgb, 8)
    lid = cylinder(0.3, 0.06, (*position, 0.9), shade(rgb, 0.6), 8)
    return kit.add("trash_bin", merge([body, lid]), color=color)


def add_crate(
    kit: WorldKit,
    rng: np.random.Generator,
    position: tuple[float, float],
    yaw: float = 0.0,
    side: float | None = None,
) -> SceneObject:
    """Add a wooden crate with darker edge slats; ``side`` defaults to 0.5..0.9 m."""
    size = float(rng.uniform(0.5, 0.9)) if side is None else side
    wood, slat = (168, 124, 66), (118, 84, 42)
    body = box((size, size, size), (0, 0, size / 2), wood)
    bands = [box((size + 0.02, size + 0.02, 0.06), (0, 0, z), slat) for z in (0.05, size - 0.05)]
    mesh = merge([body, *bands]).moved((*position, 0.0), yaw)
    return kit.add("crate", mesh, material="wood", size=round(size, 2))


def add_stretcher(
    kit: WorldKit, position: tuple[float, float], yaw: float = 0.0, color: str = "orange"
) -> SceneObject:
    """Add a wheeled rescue stretcher (2 m long, along ``yaw``) with a mattress and pillow."""
    frame = PALETTE["silver"]
    mattress = box((1.95, 0.6, 0.12), (0, 0, 0.8), PALETTE[color])
    pillow = box((0.35, 0.45, 0.08), (0.72, 0, 0.9), PALETTE["white"])
    rails = [box((2.0, 0.04, 0.04), (0, side * 0.32, 0.78), frame) for side in (-1, 1)]
    legs = [
        box((0.05, 0.05, 0.72), (sx * 0.85, sy * 0.25, 0.38), frame)
        for sx in (-1, 1)
        for sy in (-1, 1)
    ]
    wheels = [
        box((0.12, 0.05, 0.12), (sx * 0.85, sy * 0.25, 0.06), PALETTE["black"])
        for sx in (-1, 1)
        for sy in (-1, 1)
    ]
    mesh = merge([mattress, pillow, *rails, *legs, *wheels]).moved((*position, 0.0), yaw)
    return kit.add("stretcher", mesh, color=color)
