"""Walkable surfaces: a horizontal grid of columns, each peeled from the top by down rays.

Every column is cast straight down, then again from just below each hit, until the rays
leave the scene; this finds every surface in the column, floors above floors included.
Going down, a face that points up enters a solid and one that points down leaves it (meshes
are wound counter-clockwise seen from outside), so a surface stands in free space when the
hit above it points down or there is none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from sortie.sim.navigation import kernels
from sortie.sim.raycast import RayCaster
from sortie.sim.shapes import WalkerShape

PEEL_GAP = 1e-3
"""How far below a hit the next down ray starts: skips the face just hit (and coincident ones)."""
MAX_LAYERS = 64


@dataclass(frozen=True, slots=True)
class Grid:
    """Columns at the centres ``(x0 + i * cell, y0 + j * cell)``; column ``j * nx + i``."""

    x0: float
    y0: float
    cell: float
    nx: int
    ny: int

    @classmethod
    def over(cls, bounds: tuple[float, float, float, float], cell: float) -> Grid:
        """Return the grid of ``cell``-sized squares centred in ``(xmin, ymin, xmax, ymax)``."""
        xmin, ymin, xmax, ymax = bounds
        nx = max(1, int(math.floor((xmax - xmin) / cell + 1e-9)))
        ny = max(1, int(math.floor((ymax - ymin) / cell + 1e-9)))
        x0 = (xmin + xmax) / 2 - (nx - 1) * cell / 2
        y0 = (ymin + ymax) / 2 - (ny - 1) * cell / 2
        return cls(x0, y0, cell, nx, ny)

    @property
    def size(self) -> int:
        """Return the number of columns."""
        return self.nx * self.ny

    def centres(self, columns: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
        """Return the (x, y) centres of ``columns`` (all of them by default), (C, 2)."""
        if columns is None:
            columns = np.arange(self.size)
        i, j = columns % self.nx, columns // self.nx
        return np.column_stack([self.x0 + i * self.cell, self.y0 + j * self.cell])

    def shifted(self, columns: NDArray[np.int64], di: int, dj: int) -> NDArray[np.int64]:
        """Return the columns ``(di, dj)`` away from ``columns``, -1 where off the grid."""
        i, j = columns % self.nx + di, columns // self.nx + dj
        inside = (i >= 0) & (i < self.nx) & (j >= 0) & (j < self.ny)
        return np.where(inside, j * self.nx + i, -1)

    def cell_index(self, xy: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Return the (i, j) of the column centre at or left of/below each point (may be off)."""
        i = np.floor((xy[..., 0] - self.x0) / self.cell).astype(np.int64)
        j = np.floor((xy[..., 1] - self.y0) / self.cell).astype(np.int64)
        return i, j


@dataclass(frozen=True, slots=True)
class ColumnHits:
    """Every surface met by each column's down rays, from the top down.

    Attributes:
        z: (C, K) heights of the hits, descending, NaN after a column's last hit.
        up: (C, K) whether the face points up (a solid starts below it).
        flat: (C, K) whether the face is within the walker's steepest slope of level.
        semantic: (C, K) semantic class id of the object hit (0 after the last hit).
    """

    z: NDArray[np.float64]
    up: NDArray[np.bool_]
    flat: NDArray[np.bool_]
    semantic: NDArray[np.int32]

    def count_above(
        self, columns: NDArray[np.int64], height: NDArray[np.float64]
    ) -> NDArray[np.int64]:
        """Return how many hits of each column lie above ``height`` (0 for column -1)."""
        above = self.z[columns] > height[:, None]  # NaN compares False
        return np.where(columns >= 0, above.sum(axis=1), 0)

    def inside_solid(
        self, columns: NDArray[np.int64], height: NDArray[np.float64]
    ) -> NDArray[np.bool_]:
        """Return whether each column's point at ``height`` lies inside a solid."""
        count = self.count_above(columns, height)
        last = self.up[np.maximum(columns, 0), np.maximum(count - 1, 0)]
        return (count > 0) & last


Layer = tuple[NDArray[np.float64], NDArray[np.bool_], NDArray[np.bool_], NDArray[np.int32]]
"""One round of down rays: height, points up, flat enough, semantic class; one per column."""


def peel_columns(caster: RayCaster, grid: Grid, shape: WalkerShape) -> ColumnHits:
    """Cast every column down repeatedly until it leaves the scene; return all its hits."""
    corners = caster.table.corners
    top = float(corners[..., 2].max()) + 1.0 if len(corners) else 1.0
    xy = grid.centres()
    active = np.arange(grid.size)
    start = np.full(grid.size, top)
    min_up = math.cos(math.radians(shape.max_slope))
    layers: list[Layer] = []
    while active.size and len(layers) < MAX_LAYERS:
        layers.append(_cast_layer(caster, xy, active, start, min_up))
        z = layers[-1][0]
        active = active[np.isfinite(z[active])]
        start[active] = z[active] - PEEL_GAP
    if not layers:
        return ColumnHits(
            np.zeros((grid.size, 0)),
            np.zeros((grid.size, 0), bool),
            np.zeros((grid.size, 0), bool),
            np.zeros((grid.size, 0), np.int32),
        )
    return ColumnHits(
        np.column_stack([layer[0] for layer in layers]),
        np.column_stack([layer[1] for layer in layers]),
        np.column_stack([layer[2] for layer in layers]),
        np.column_stack([layer[3] for layer in layers]),
    )


def _cast_layer(
    caster: RayCaster,
    xy: NDArray[np.float64],
    active: NDArray[np.int64],
    start: NDArray[np.float64],
    min_up: float,
) -> Layer:
    """Cast the ``active`` columns down from ``start``; return the next hit of each column."""
    size = len(xy)
    origins = np.column_stack([xy[active], start[active]])
    down = np.tile(np.array([0.0, 0.0, -1.0]), (active.size, 1))
    hits = caster.cast(origins, down)
    hit = np.isfinite(hits.t)
    nz = caster.table.normal[hits.triangle][:, 2]
    z = np.full(size, np.nan)
    z[active[hit]] = start[active[hit]] - hits.t[hit].astype(np.float64)
    up, flat = np.zeros(size, bool), np.zeros(size, bool)
    up[active], flat[active] = nz > 0, nz >= min_up
    semantic = np.zeros(size, np.int32)
    semantic[active] = caster.scene.class_ids[caster.table.object_id[hits.triangle]]
    return z, up, flat, semantic


def standing_surfaces(
    hits: ColumnHits, shape: WalkerShape
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int32]]:
    """Return column, height and semantic class of each level-enough surface with headroom.

    Surfaces come sorted by column, then from the top down, so the order is deterministic.
    """
    columns = hits.z.shape[0]
    above_z = np.column_stack([np.full(columns, np.inf), hits.z[:, :-1]])
    above_up = np.column_stack([np.zeros(columns, bool), hits.up[:, :-1]])
    headroom = above_z - hits.z
    ok = hits.flat & ~above_up & (headroom >= shape.height)  # NaN headroom compares False
    col, layer = np.nonzero(ok)
    return col.astype(np.int64), hits.z[col, layer], hits.semantic[col, layer]


def crowded(
    hits: ColumnHits,
    grid: Grid,
    columns: NDArray[np.int64],
    z: NDArray[np.float64],
    shape: WalkerShape,
) -> NDArray[np.bool_]:
    """Return which surfaces have a solid in the walker's body, seen from nearby columns.

    Checks the columns whose centres lie within the walker's radius for any hit, or any
    solid, between step height and full height above each surface: this catches table
    tops, overhangs, low ceilings and bulky objects. Thin walls and poles can stand between
    column centres; the horizontal probes in ``clearance`` catch those.
    """
    low, high = z + shape.step, z + shape.height
    # A solid may lie up to half a cell beyond the nearest column centre that sees it, so
    # columns within radius + half a cell count: otherwise a table top or a stretcher
    # between column centres can come 0.1 m inside the body.
    limit = shape.radius + grid.cell / 2
    reach = int(limit // grid.cell)
    offsets = [
        (di, dj)
        for di in range(-reach, reach + 1)
        for dj in range(-reach, reach + 1)
        if math.hypot(di, dj) * grid.cell <= limit
    ]
    blocked = np.zeros(len(columns), bool)
    module = kernels.extension()
    if module is not None:
        z, up = np.ascontiguousarray(hits.z), np.ascontiguousarray(hits.up)
        at = np.ascontiguousarray(columns, np.int64)
        module.crowded(z, up, grid.nx, grid.ny, at, low, high, np.array(offsets, np.int64), blocked)
        return blocked
    for di, dj in offsets:
        blocked |= _crowding(hits, grid.shifted(columns, di, dj), low, high)
    return blocked


def _crowding(
    hits: ColumnHits,
    near: NDArray[np.int64],
    low: NDArray[np.float64],
    high: NDArray[np.float64],
) -> NDArray[np.bool_]:
    """Return whether column ``near`` (-1: off the grid) has a hit or a solid in (low, high].

    The same test as ``count_above`` and ``inside_solid`` together, with each column's hits
    gathered once instead of three times (this loop is a fifth of a graph build).
    """
    inside = np.maximum(near, 0)
    z = hits.z[inside]
    above_high = np.where(near >= 0, (z > high[:, None]).sum(axis=1), 0)
    above_low = np.where(near >= 0, (z > low[:, None]).sum(axis=1), 0)
    last_up = hits.up[inside, np.maximum(above_high - 1, 0)]
    return (above_low > above_high) | ((above_high > 0) & last_up)
