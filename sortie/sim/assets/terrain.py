"""Uneven ground and what stands on it: a heightfield, trees, rocks, bushes, logs.

The heightfield is a regular grid split into two triangles per cell; ``Terrain.height_at``
interpolates on exactly those triangles, so anything placed with it stands on the drawn
surface. ``scatter`` places round footprints with a clear gap between them, which is how the
worlds keep walkable lanes between obstacles.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from sortie.sim.mesh import Color, Mesh, cone, cylinder, merge, pose_matrix, sphere

Circle = tuple[float, float, float]
"""A round footprint ``(x, y, radius)`` in metres."""


@dataclass(frozen=True, slots=True, eq=False)
class Terrain:
    """A heightfield: ``heights[i, j]`` is the ground at ``(x0 + j * step, y0 + i * step)``."""

    x0: float
    y0: float
    step: float
    heights: NDArray[np.float64]

    def height_at(self, x: float | NDArray, y: float | NDArray) -> NDArray[np.float64]:
        """Return the surface height under ``(x, y)``, on the same triangles as the mesh."""
        rows, cols = self.heights.shape
        u = np.clip((np.asarray(x, np.float64) - self.x0) / self.step, 0, cols - 1 - 1e-9)
        v = np.clip((np.asarray(y, np.float64) - self.y0) / self.step, 0, rows - 1 - 1e-9)
        j, i = np.floor(u).astype(int), np.floor(v).astype(int)
        u, v = u - j, v - i
        h = self.heights
        a, b, c, d = h[i, j], h[i, j + 1], h[i + 1, j + 1], h[i + 1, j]
        # Each cell is split along its a-c diagonal, as in ``mesh``.
        return np.where(u >= v, a + u * (b - a) + v * (c - b), a + v * (d - a) + u * (c - d))

    def max_slope(self) -> float:
        """Return the steepest triangle's slope in degrees."""
        h = self.heights
        dx, dy = np.diff(h, axis=1) / self.step, np.diff(h, axis=0) / self.step
        # Each triangle's gradient is one x-difference and one y-difference of its cell.
        g1 = np.hypot(dx[:-1], dy[:, 1:])  # triangle a-b-c
        g2 = np.hypot(dx[1:], dy[:, :-1])  # triangle a-c-d
        return math.degrees(math.atan(float(max(g1.max(), g2.max()))))

    def mesh(self, rng: np.random.Generator, color: Color) -> Mesh:
        """Return the surface as triangles, each face's colour jittered a little."""
        rows, cols = self.heights.shape
        gy, gx = np.mgrid[0:rows, 0:cols]
        xs, ys = self.x0 + gx.ravel() * self.step, self.y0 + gy.ravel() * self.step
        verts = np.column_stack([xs, ys, self.heights.ravel()])
        a = (gy[:-1, :-1] * cols + gx[:-1, :-1]).ravel()
        b, c, d = a + 1, a + cols + 1, a + cols
        faces = np.concatenate([np.column_stack([a, b, c]), np.column_stack([a, c, d])])
        jitter = rng.integers(-10, 11, (len(faces), 1))
        colors = np.clip(np.asarray(color) + jitter, 0, 255).astype(np.uint8)
        return Mesh(verts.astype(np.float32), faces.astype(np.int32), colors)


def rolling_terrain(
    rng: np.random.Generator,
    bounds: tuple[float, float, float, float],
    relief: float = 3.0,
    max_slope: float = 15.0,
    step: float = 1.0,
    flat: Sequence[Circle] = (),
) -> Terrain:
    """Return smooth random hills over ``bounds``, no steeper than ``max_slope`` degrees.

    Heights are smoothed noise scaled to ``relief`` metres from lowest to highest, then
    flattened to 0 inside each ``flat`` circle (clearings), then scaled down if any triangle
    is still steeper than ``max_slope``.
    """
    x0, y0, x1, y1 = bounds
    cols, rows = int(math.ceil((x1 - x0) / step)) + 1, int(math.ceil((y1 - y0) / step)) + 1
    # Imported here: scipy.ndimage is a fifth of sortie's import time, and a run worker whose
    # worlds have no terrain never needs it.
    from scipy.ndimage import gaussian_filter

    noise = gaussian_filter(rng.standard_normal((rows, cols)), sigma=6.0 / step, mode="wrap")
    heights = (noise - noise.min()) / max(float(np.ptp(noise)), 1e-9) * relief
    gy, gx = np.mgrid[0:rows, 0:cols]
    px, py = x0 + gx * step, y0 + gy * step
    for cx, cy, radius in flat:
        reach = np.clip((np.hypot(px - cx, py - cy) - radius) / (2 * radius), 0.0, 1.0)
        heights *= reach * reach * (3 - 2 * reach)  # smoothstep: 0 inside, 1 far away
    terrain = Terrain(x0, y0, step, heights)
    steepest = terrain.max_slope()
    if steepest > max_slope:
        scale = math.tan(math.radians(max_slope)) / math.tan(math.radians(steepest))
        terrain = Terrain(x0, y0, step, heights * scale)
    return terrain


def scatter(
    rng: np.random.Generator,
    area: tuple[float, float, float, float],
    radii: Sequence[float],
    gap: float,
    taken: Sequence[Circle] = (),
    tries: int = 24,
) -> list[Circle]:
    """Place circles of ``radii`` inside ``area``, each at least ``gap`` clear of all others.

    Circles that find no free spot in ``tries`` random draws are left out; ``taken`` circles
    (clearings, paths, buildings) are kept clear too but not returned. Each circle takes the
    first free draw: the first is tried alone, and only if it is not free the rest together
    (the same distances, compared the same way, as trying all of them at once).
    """
    x0, y0, x1, y1 = area
    given = np.asarray(list(taken), np.float64).reshape(-1, 3)
    keep = n = len(given)
    # Columns with room for every circle (no copy of the placed ones per circle placed).
    xs_all, ys_all, rs_all = np.empty((3, keep + len(radii)))
    xs_all[:n], ys_all[:n], rs_all[:n] = given.T
    for radius in radii:
        xs = rng.uniform(x0 + radius, x1 - radius, tries)
        ys = rng.uniform(y0 + radius, y1 - radius, tries)
        clear = rs_all[:n] + radius + gap
        if np.all(np.hypot(xs[0] - xs_all[:n], ys[0] - ys_all[:n]) >= clear):
            k = 0
        else:
            dist = np.hypot(xs[1:, None] - xs_all[:n], ys[1:, None] - ys_all[:n])
            free = np.all(dist >= clear, axis=1)
            if not free.any():
                continue
            k = 1 + int(np.argmax(free))
        xs_all[n], ys_all[n], rs_all[n] = xs[k], ys[k], radius
        n += 1
    return [
        (float(x), float(y), float(r))
        for x, y, r in zip(xs_all[keep:n], ys_all[keep:n], rs_all[keep:n], strict=True)
    ]


# --- what grows and lies on the ground ---------------------------------------------------

BARK: Color = (95, 70, 45)


def pine(base: tuple[float, float, float], height: float, color: Color) -> Mesh:
    """Return a conifer of ``height``: a trunk under three stacked cones (footprint 0.3 * h)."""
    x, y, z = base
    trunk = cylinder(0.04 * height, 0.4 * height, (x, y, z - 0.3), BARK, segments=6)
    tiers = [
        cone(
            0.3 * height * s,
            0.45 * height,
            (x, y, z + height * (0.15 + 0.22 * k)),
            color,
            segments=8,
        )
        for k, s in enumerate((1.0, 0.78, 0.55))
    ]
    return merge([trunk, *tiers])


def broadleaf(
    base: tuple[float, float, float], height: float, color: Color, bark: Color = BARK
) -> Mesh:
    """Return a leafy tree: a bare trunk to 2.4 m or more, under a round crown."""
    x, y, z = base
    crown = 0.3 * height
    trunk_top = max(2.4, height - 1.6 * crown)
    trunk = cylinder(0.035 * height, trunk_top + 0.6, (x, y, z - 0.3), bark, segments=6)
    leaves = sphere(crown, (x, y, z + trunk_top + crown * 0.8), color, rings=5, segments=8)
    return merge([trunk, leaves])


def rock(base: tuple[float, float, float], radius: float, color: Color, yaw: float) -> Mesh:
    """Return a boulder: a squashed, turned sphere half sunk into the ground."""
    x, y, z = base
    return sphere(radius, (0.0, 0.0, 0.0), color, rings=4, segments=7, squash=0.6).moved(
        (x, y, z + 0.1 * radius), yaw
    )


def bush(base: tuple[float, float, float], radius: float, color: Color) -> Mesh:
    """Return a low round shrub."""
    x, y, z = base
    return sphere(radius, (x, y, z + 0.35 * radius), color, rings=4, segments=8, squash=0.7)


def log(center: tuple[float, float, float], length: float, radius: float, yaw: float) -> Mesh:
    """Return a fallen trunk lying along ``yaw`` with its middle at ``center`` (on the ground)."""
    body = cylinder(radius, length, (0.0, 0.0, -length / 2), BARK, segments=8)
    x, y, z = center
    return body.transformed(pose_matrix((x, y, z + radius * 0.8), yaw, 90.0))
