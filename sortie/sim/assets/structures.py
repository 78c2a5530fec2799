"""Structural pieces: floors, walls with openings, ceilings, sliding doors and gates."""

from __future__ import annotations

import math

import numpy as np

from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Color, Mesh, box, pose_matrix, slab
from sortie.sim.scene import Dynamics, SceneObject

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
