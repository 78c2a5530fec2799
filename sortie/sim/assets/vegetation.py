"""Trees of several kinds, bushes and rocks, each well under 200 triangles.

Broadleaf, birch and palm canopies start above a walker's head, so only their trunks block
the way; a conifer's lowest cone reaches down to about a metre and blocks its whole spread.
"""

from __future__ import annotations

import numpy as np

from sortie.sim.assets.props import PALETTE, shade
from sortie.sim.assets.structures import jitter_color
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Color, Mesh, box, cone, cylinder, merge, pose_matrix, sphere
from sortie.sim.scene import SceneObject

TREE_KINDS = ("conifer", "broadleaf", "birch", "palm")
BARK: Color = (96, 66, 40)
LEAVES: dict[str, Color] = {
    "conifer": (30, 88, 44),
    "broadleaf": (58, 128, 48),
    "birch": (120, 168, 70),
    "palm": (70, 140, 50),
}


def tree_reach(kind: str, height: float) -> float:
    """Return the radius a tree blocks at walker height (trunk, or a conifer's lowest cone)."""
    return 0.3 * height if kind == "conifer" else 0.25


def _conifer(rng: np.random.Generator, height: float) -> list[Mesh]:
    leaves = jitter_color(rng, LEAVES["conifer"], 12)
    parts = [cylinder(0.16, height * 0.3, color=BARK, segments=6)]
    for i, (base, size) in enumerate(((0.15, 0.55), (0.38, 0.45), (0.6, 0.4))):
        radius = 0.3 * height * (1.0 - 0.25 * i)
        parts.append(cone(radius, size * height, (0, 0, base * height), leaves, 8))
    return parts


def _broadleaf(rng: np.random.Generator, height: float) -> list[Mesh]:
    leaves = jitter_color(rng, LEAVES["broadleaf"], 15)
    trunk_top = max(2.3, 0.45 * height)
    radius = (height - trunk_top) * 0.55
    parts = [cylinder(0.18, trunk_top + 0.3, color=BARK, segments=6, top_radius=0.12)]
    for dx, dy, dz, scale in ((0, 0, 0.75, 1.0), (0.45, 0.2, 0.45, 0.7), (-0.4, -0.3, 0.5, 0.7)):
        center = (dx * radius, dy * radius, trunk_top + dz * radius)
        if scale == 1.0:
            parts.append(sphere(radius, center, leaves, rings=5, segments=8, squash=0.8))
        else:  # the smaller side blobs get fewer triangles to stay under the budget
            parts.append(
                sphere(radius * scale, center, shade(leaves, 0.9), rings=4, segments=7, squash=0.8)
            )
    return parts


def _birch(rng: np.random.Generator, height: float) -> list[Mesh]:
    trunk_top = height * 0.7
    parts = [cylinder(0.12, trunk_top, color=(226, 222, 210), segments=6)]
    parts += [cylinder(0.125, 0.12, (0, 0, z), PALETTE["black"], 6) for z in (0.9, 1.7)]
    radius = max(0.9, height * 0.17)
    parts.append(
        sphere(
            radius,
            (0, 0, height - 1.3 * radius),
            jitter_color(rng, LEAVES["birch"]),
            rings=5,
            segments=8,
            squash=1.4,
        )
    )
    return parts


def _palm(rng: np.random.Generator, height: float) -> list[Mesh]:
    lean = float(rng.uniform(-0.4, 0.4))
    third = height / 3
    parts = [
        cylinder(
            0.2 - 0.03 * i,
            third,
            (lean * i * i / 4, 0, third * i),
            (150, 120, 80),
            6,
            top_radius=0.17 - 0.03 * i,
        )
        for i in range(3)
    ]
    top = (lean * 9 / 4 * 0.9, 0.0, height)
    frond = box((2.2, 0.4, 0.04), (1.1, 0, 0), LEAVES["palm"])
    parts += [frond.transformed(pose_matrix(top, 360.0 * i / 7, -25.0)) for i in range(7)]
    return parts


_BUILDERS = {"conifer": _conifer, "broadleaf": _broadleaf, "birch": _birch, "palm": _palm}
_HEIGHTS = {"conifer": (5.0, 9.0), "broadleaf": (5.0, 8.0), "birch": (6.0, 9.0), "palm": (6.0, 9.0)}


def add_tree(
    kit: WorldKit,
    rng: np.random.Generator,
    position: tuple[float, float],
    kind: str | None = None,
    height: float | None = None,
) -> SceneObject:
    """Add a tree of ``kind`` (default: a random one but palm) standing on ``position``."""
    kind = kind or str(rng.choice(TREE_KINDS[:3]))
    if kind not in _BUILDERS:
        raise ValueError(f"tree kind must be one of {', '.join(TREE_KINDS)}, got {kind!r}")
    low, high = _HEIGHTS[kind]
    height = float(rng.uniform(low, high)) if height is None else height
    mesh = merge(_BUILDERS[kind](rng, height)).moved((*position, 0.0), float(rng.uniform(0, 360)))
    return kit.add("tree", mesh, kind=kind, height=round(height, 1))


def add_bush(
    kit: WorldKit,
    rng: np.random.Generator,
    position: tuple[float, float],
    radius: float | None = None,
) -> SceneObject:
    """Add a rounded bush of one or two squashed spheres, ``radius`` 0.5..1.0 m by default."""
    size = float(rng.uniform(0.5, 1.0)) if radius is None else radius
    green = jitter_color(rng, (52, 112, 44), 15)
    blobs = [sphere(size, (0, 0, size * 0.5), green, rings=4, segments=8, squash=0.75)]
    if rng.random() < 0.5:
        blobs.append(
            sphere(
                size * 0.7,
                (size * 0.6, 0, size * 0.4),
                shade(green, 1.1),
                rings=4,
                segments=8,
                squash=0.75,
            )
        )
    mesh = merge(blobs).moved((*position, 0.0), float(rng.uniform(0, 360)))
    return kit.add("bush", mesh, color="green", size=round(size, 2))


def add_rock(
    kit: WorldKit,
    rng: np.random.Generator,
    position: tuple[float, float],
    radius: float | None = None,
) -> SceneObject:
    """Add a lumpy grey rock half sunk into the ground, ``radius`` 0.3..1.0 m by default."""
    size = float(rng.uniform(0.3, 1.0)) if radius is None else radius
    ball = sphere(
        size, (0, 0, 0), jitter_color(rng, (128, 124, 118), 12), rings=4, segments=7, squash=0.6
    )
    bumps = rng.uniform(0.8, 1.2, (len(ball.vertices), 1)).astype(np.float32)
    lumpy = Mesh(ball.vertices * bumps, ball.faces, ball.colors)
    mesh = lumpy.moved((position[0], position[1], size * 0.2), float(rng.uniform(0, 360)))
    return kit.add("rock", mesh, color="grey", size=round(size, 2))
