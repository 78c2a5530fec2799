"""Structural pieces: floors with holes, walls, fences, doors, gates and street furniture."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Color, Mesh, box, merge, pose_matrix, quad, slab
from sortie.sim.scene import Dynamics, SceneObject
from sortie.sim.textures import text_texture

WALL_THICKNESS = 0.2


def wall(
    start: tuple[float, float],
    end: tuple[float, float],
    z0: float,
    height: float,
    color: Color,
    openings: list[tuple[float, float, float]] | None = None,
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
            local = box(
                (a1 - a0, thickness, zh - zl), ((a0 + a1) / 2, 0.0, z0 + (zl + zh) / 2), color
            )
            meshes.append(local.moved((x0, y0, 0.0), yaw))
    return meshes


def sliding_door(
    kit: WorldKit,
    center: tuple[float, float, float],
    yaw: float,
    width: float = 1.0,
    height: float = 2.1,
    color: Color = (140, 90, 50),
    semantic: str = "door",
    starts_open: bool = False,
    thickness: float = 0.08,
    **attributes: str,
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
    obj = kit.add(semantic, panel, dynamics=Dynamics.OPENABLE, open_transform=slide, **attributes)
    if starts_open:
        obj = SceneObject(
            obj.name,
            obj.semantic,
            obj.parts,
            obj.attributes,
            obj.dynamics,
            obj.open_transform,
            True,
        )
        kit.objects[-1] = obj
    return obj


def floor_slab(
    x0: float, y0: float, x1: float, y1: float, z: float, color: Color, thickness: float = 0.1
) -> Mesh:
    """Return a floor whose walkable top is at height ``z``."""
    return slab(x0, y0, x1, y1, z - thickness, z, color)


def jitter_color(rng: np.random.Generator, color: Color, amount: int = 20) -> Color:
    """Return ``color`` with each channel moved by up to ``amount``."""
    moves = rng.integers(-amount, amount + 1, 3)
    if all(type(c) is int for c in color):  # the usual case: plain ints, without numpy's clip
        r, g, b = (min(255, max(0, c + int(m))) for c, m in zip(color, moves, strict=True))
        return (r, g, b)
    shifted = np.clip(np.asarray(color) + moves, 0, 255)
    return (int(shifted[0]), int(shifted[1]), int(shifted[2]))


# --- floors with holes, fences and gates -------------------------------------------------

Rect = tuple[float, float, float, float]
"""An axis-aligned rectangle ``(x0, y0, x1, y1)`` in metres."""


def slab_with_holes(
    outer: Rect, holes: Sequence[Rect], z: float, color: Color, thickness: float = 0.2
) -> list[Mesh]:
    """Return a floor over ``outer`` with its top at ``z``, leaving ``holes`` open (stairwells).

    The rectangle is cut along every hole edge into a grid; the cells outside all holes are
    joined row by row into as few boxes as that allows.
    """
    x0, y0, x1, y1 = outer
    xs = sorted({x0, x1, *(min(max(v, x0), x1) for h in holes for v in (h[0], h[2]))})
    ys = sorted({y0, y1, *(min(max(v, y0), y1) for h in holes for v in (h[1], h[3]))})
    meshes = []
    for ya, yb in itertools.pairwise(ys):
        row = [
            (xa, xb)
            for xa, xb in itertools.pairwise(xs)
            if not _inside_any(((xa + xb) / 2, (ya + yb) / 2), holes)
        ]
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


def fence(
    start: tuple[float, float],
    end: tuple[float, float],
    z0: float,
    height: float,
    color: Color,
    openings: list[tuple[float, float, float]] | None = None,
    post_spacing: float = 2.5,
) -> list[Mesh]:
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


def gate(
    kit: WorldKit,
    center: tuple[float, float, float],
    yaw: float,
    width: float = 2.0,
    height: float = 1.8,
    color: Color = (90, 95, 100),
    **attributes: str,
) -> SceneObject:
    """Add a closed sliding gate filling a fence opening of ``width`` at ``center``."""
    return sliding_door(kit, center, yaw, width, height, color, "gate", False, 0.05, **attributes)


# --- street furniture --------------------------------------------------------------------


def bench(center: tuple[float, float, float], yaw: float, color: Color = (130, 90, 55)) -> Mesh:
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


def sign_board(
    text: str,
    center: tuple[float, float, float],
    yaw: float,
    width: float = 2.0,
    height: float = 0.5,
    ink: Color = (245, 245, 245),
    paper: Color = (20, 60, 140),
) -> list[Mesh]:
    """Return a two-sided sign reading ``text`` on both faces, facing ``yaw`` and its opposite.

    ``center`` is the middle of the board; each face is a separate textured part.
    """
    texture = text_texture(text, 256, max(16, int(256 * height / width)), ink, paper)
    board = box((0.06, width, height), (0.0, 0.0, 0.0), (60, 60, 65))
    hw, hh = width / 2, height / 2
    faces = [
        quad(
            [(d, -side * hw, hh), (d, side * hw, hh), (d, side * hw, -hh), (d, -side * hw, -hh)],
            texture,
        )
        for d, side in ((0.031, 1.0), (-0.031, -1.0))
    ]
    return [m.moved(center, yaw) for m in (board, *faces)]
