"""Room for the walker's body: horizontal probe rays along the grid lines.

Why probes along the grid lines, not an obstacle raster: a raster samples geometry at column
centres, and a 0.2 m wall or a 0.1 m pole fits between two centres 0.25 m apart and is never
seen. A ray finds any face it crosses however thin the solid. Each surface casts rays toward
its 8 neighbour centres (out to at least the walker's radius) at three heights of its body:
just above the step height, the middle, and just under the head. Together the rays of all
surfaces trace every grid line and diagonal, and a triangle of that mesh (hypotenuse ``cell``,
legs ``cell / sqrt(2)``) holds no circle of radius over ``0.21 * cell`` (0.052 m at 0.25 m):
every wall and every pole of radius 0.1 m is crossed by some probe. Where a probe hits, the point
is on the obstacle's surface; every surface whose body (radius, step to height) holds such a
point is blocked. The nearest point of an obstacle may fall between probes, so a surface
closer than the radius can survive by a few centimetres at worst (a wall turned 22.5 degrees
off the grid: 2 cm). Horizontal features (table tops, overhangs) are checked from the column
hits instead, in ``surfaces.crowded``.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np
from numpy.typing import NDArray

from sortie.sim.navigation import kernels
from sortie.sim.raycast import RayCaster
from sortie.sim.shapes import WalkerShape

STEPS = ((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))
"""Grid offsets to the 8 neighbours; ``STEPS[(d + 4) % 8]`` is the opposite of ``STEPS[d]``."""
PROBE_MARGIN = 0.02
"""How far inside the body's band (step to height) the lowest and highest probes run."""
CHUNK = 50_000
"""Surfaces probed per batch, to bound memory (24 rays each)."""


@dataclass(frozen=True, slots=True)
class Probes:
    """What the horizontal probes found.

    Attributes:
        points: (H, 3) where probes hit geometry.
        blocked_moves: (N, 8) whether the probe toward each neighbour centre hit before it.
    """

    points: NDArray[np.float64]
    blocked_moves: NDArray[np.bool_]


def probe_heights(shape: WalkerShape) -> NDArray[np.float64]:
    """Return the heights above a surface at which probes run."""
    return np.array(
        [shape.step + PROBE_MARGIN, (shape.step + shape.height) / 2, shape.height - PROBE_MARGIN]
    )


def probe(
    caster: RayCaster, positions: NDArray[np.float64], cell: float, shape: WalkerShape
) -> Probes:
    """Cast the horizontal probes of every surface at ``positions`` (N, 3)."""
    parts = [
        _probe_chunk(caster, positions[i : i + CHUNK], cell, shape)
        for i in range(0, len(positions), CHUNK)
    ]
    if not parts:
        return Probes(np.zeros((0, 3)), np.zeros((0, 8), bool))
    return Probes(
        np.concatenate([p.points for p in parts]), np.concatenate([p.blocked_moves for p in parts])
    )


def _probe_chunk(
    caster: RayCaster, positions: NDArray[np.float64], cell: float, shape: WalkerShape
) -> Probes:
    offsets = np.array(STEPS, np.float64)
    reach = np.hypot(offsets[:, 0], offsets[:, 1]) * cell
    unit = offsets / np.hypot(offsets[:, :1], offsets[:, 1:])
    heights = probe_heights(shape)
    module = kernels.extension()
    if module is not None:
        return _compiled_chunk(module, caster, positions, (unit, heights, reach), shape)
    n, k = len(positions), len(heights)
    # float32 throughout: the ray engine takes float32, and copies would dominate the time.
    origins = np.empty((n, 8, k, 3), np.float32)
    origins[...] = positions[:, None, None, :]
    origins[..., 2] += heights.astype(np.float32)
    directions = np.zeros((n, 8, k, 3), np.float32)
    directions[..., :2] = unit[None, :, None, :]
    tmax = np.empty((n, 8, k), np.float32)
    tmax[...] = np.maximum(reach, shape.radius)[None, :, None]
    hits = caster.cast(origins.reshape(-1, 3), directions.reshape(-1, 3), tmax.reshape(-1))
    t = hits.t.reshape(n, 8, k)
    found = np.isfinite(t)
    points = (origins[found] + directions[found] * t[found][:, None]).astype(np.float64)
    blocked_moves = np.any(t < reach[None, :, None], axis=2)
    return Probes(points, np.asarray(blocked_moves, bool))


def _compiled_chunk(
    module: ModuleType,
    caster: RayCaster,
    positions: NDArray[np.float64],
    rays: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]],
    shape: WalkerShape,
) -> Probes:
    """Return ``_probe_chunk``'s answer with its rays made and read by the extension."""
    unit, heights, reach = rays
    n, k = len(positions), len(heights)
    origins = np.empty((n * 8 * k, 3), np.float32)
    directions = np.empty((n * 8 * k, 3), np.float32)
    tmax = np.empty(n * 8 * k, np.float32)
    limit, at = np.maximum(reach, shape.radius), np.ascontiguousarray(positions)
    module.probe_rays(at, unit, heights, limit, origins, directions, tmax)
    t = np.ascontiguousarray(caster.cast_prepared(origins, directions, tmax).t, np.float32)
    points = np.empty((int(np.count_nonzero(np.isfinite(t))), 3))
    blocked_moves = np.zeros((n, 8), bool)
    module.probe_read(origins, directions, t, reach, k, points, blocked_moves)
    return Probes(points, blocked_moves)


def near_hits(
    positions: NDArray[np.float64], points: NDArray[np.float64], shape: WalkerShape
) -> NDArray[np.bool_]:
    """Return which surfaces have a probe hit inside their body (radius, step to height)."""
    blocked = np.zeros(len(positions), bool)
    if not len(points) or not len(positions):
        return blocked
    # Scale z so the body's band is as wide as its radius: a Chebyshev ball then bounds the
    # body, and an exact horizontal distance test trims its corners.
    half_band = (shape.height - shape.step) / 2
    scale = shape.radius / half_band
    module = kernels.extension()
    if module is not None:  # the same test, hit by hit against the surfaces around it
        points = np.ascontiguousarray(points, np.float64)
        at = np.ascontiguousarray(positions, np.float64)
        module.near_hits(at, points, shape.radius, shape.step + half_band, scale, blocked)
        return blocked
    body = positions + np.array([0.0, 0.0, shape.step + half_band])
    from scipy.spatial import cKDTree  # here: 0.2 s to import, for numpy's form alone

    body_tree = cKDTree(body * np.array([1.0, 1.0, scale]))
    point_tree = cKDTree(points * np.array([1.0, 1.0, scale]))
    pairs = body_tree.sparse_distance_matrix(
        point_tree, shape.radius, p=np.inf, output_type="ndarray"
    )
    rows, cols = pairs["i"], pairs["j"]
    gap = positions[rows, :2] - points[cols, :2]
    inside = np.einsum("ij,ij->i", gap, gap) < shape.radius**2
    blocked[rows[inside]] = True
    return blocked
