"""A 2.5D occupancy map built from depth: per cell, the lowest and highest surface seen.

Cells are ``cell`` metres square in the agent's own frame (origin where it started). Points
are kept only in a band around the feet (``below`` under them to ``above`` over them): the
ceiling, tree tops and other floors fall outside it. A cell whose points span more than a step
holds something the body cannot walk over (a wall, a table); a cell next to one whose surface is
more than a step higher or lower is an edge. Otherwise the cell is walkable at the height of its
highest point, which is how stairs and ramps stay walkable and the feet's height is tracked.

Other floors: when a cell is seen again at a height more than ``new_floor`` metres away from
what it held, the newer view wins (the body has changed floors and this is the floor it is on
now). Doors are left out of the map (they open when approached), and contacts mark the cell
ahead as blocked, because thin things a sparse depth sample can miss still stop the body.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy import ndimage

from sortie.agents.explorer.perception import Kind, Points

Window = tuple[slice, slice]
_NEIGHBOURS = ((0, 1), (1, 0), (1, 1), (1, -1))


class ElevationMap:
    """Lowest and highest surface per cell, contacts, and where the body has been."""

    def __init__(
        self,
        cell: float = 0.25,
        size: int = 1024,
        step: float = 0.35,
        below: float = 1.5,
        above: float = 1.9,
        new_floor: float = 1.5,
    ) -> None:
        """Create an empty map of ``size`` x ``size`` cells centred on the start."""
        self.cell, self.size, self.step = cell, size, step
        self.below, self.above, self.new_floor = below, above, new_floor
        self.clear()

    def clear(self) -> None:
        """Forget everything."""
        shape = (self.size, self.size)
        self.low = np.full(shape, np.inf, np.float32)
        self.high = np.full(shape, -np.inf, np.float32)
        self.blocked = np.zeros(shape, bool)
        self.visited = np.zeros(shape, bool)
        self.rows = (self.size, -1)  # bounding box of what is known: (first, last) row, col
        self.cols = (self.size, -1)

    # --- coordinates ------------------------------------------------------------------
    def index(self, x: float, y: float) -> tuple[int, int]:
        """Return the (row, col) of the cell holding point (x, y), clipped to the map."""
        half = self.size // 2
        row = min(max(int(math.floor(y / self.cell)) + half, 0), self.size - 1)
        col = min(max(int(math.floor(x / self.cell)) + half, 0), self.size - 1)
        return row, col

    def centre(self, row: int, col: int) -> tuple[float, float]:
        """Return the (x, y) centre of a cell."""
        half = self.size // 2
        return ((col - half + 0.5) * self.cell, (row - half + 0.5) * self.cell)

    # --- updates ----------------------------------------------------------------------
    def add(self, points: Points, feet: float) -> None:
        """Add one frame's points (doors left out) around feet height ``feet``."""
        half = self.size // 2
        rel = points.z - feet
        keep = (rel > -self.below) & (rel < self.above) & (points.kind != Kind.DOOR)
        rows = np.floor(points.y[keep] / self.cell).astype(np.int64) + half
        cols = np.floor(points.x[keep] / self.cell).astype(np.int64) + half
        inside = (rows >= 0) & (rows < self.size) & (cols >= 0) & (cols < self.size)
        flat = rows[inside] * self.size + cols[inside]
        if len(flat) == 0:
            return
        self._merge(flat, points.z[keep][inside])
        self._grow(rows[inside], cols[inside])

    def _merge(self, flat: NDArray[np.int64], z: NDArray[np.float32]) -> None:
        """Fold one frame's heights into the cells, the newer floor winning."""
        cells, where = np.unique(flat, return_inverse=True)
        low = np.full(len(cells), np.inf, np.float32)
        high = np.full(len(cells), -np.inf, np.float32)
        np.minimum.at(low, where, z)
        np.maximum.at(high, where, z)
        old_low, old_high = self.low.ravel()[cells], self.high.ravel()[cells]
        stale = (low > old_high + self.new_floor) | (high < old_low - self.new_floor)
        self.low.ravel()[cells] = np.where(stale, low, np.minimum(old_low, low))
        self.high.ravel()[cells] = np.where(stale, high, np.maximum(old_high, high))

    def _grow(self, rows: NDArray[np.int64], cols: NDArray[np.int64]) -> None:
        self.rows = (min(self.rows[0], int(rows.min())), max(self.rows[1], int(rows.max())))
        self.cols = (min(self.cols[0], int(cols.min())), max(self.cols[1], int(cols.max())))

    def visit(self, x: float, y: float, radius: float = 0.3) -> None:
        """Mark the cells under the body as walkable: it stands there."""
        r0, c0 = self.index(x - radius, y - radius)
        r1, c1 = self.index(x + radius, y + radius)
        self.visited[r0 : r1 + 1, c0 : c1 + 1] = True
        self.blocked[r0 : r1 + 1, c0 : c1 + 1] = False
        self._grow(np.array([r0, r1]), np.array([c0, c1]))

    def block(self, x: float, y: float) -> None:
        """Mark the cell holding (x, y) as blocked (the body touched something there)."""
        row, col = self.index(x, y)
        if not self.visited[row, col]:
            self.blocked[row, col] = True

    def ground(self, x: float, y: float) -> float | None:
        """Return the walkable height of the cell under (x, y), or None if not known."""
        row, col = self.index(x, y)
        low, high = self.low[row, col], self.high[row, col]
        if np.isfinite(high) and high - low <= self.step:
            return float(high)
        return None

    # --- reading ----------------------------------------------------------------------
    def window(self, margin: int = 8, around: tuple[int, int] | None = None) -> Window:
        """Return the slices covering what is known (and cell ``around``), plus a margin."""
        r0, r1 = self.rows
        c0, c1 = self.cols
        if around is not None:
            r0, r1 = min(r0, around[0]), max(r1, around[0])
            c0, c1 = min(c0, around[1]), max(c1, around[1])
        return (
            slice(max(r0 - margin, 0), min(r1 + margin + 1, self.size)),
            slice(max(c0 - margin, 0), min(c1 + margin + 1, self.size)),
        )

    def known(self, win: Window) -> NDArray[np.bool_]:
        """Return which cells of the window hold an observation or were walked on."""
        return np.isfinite(self.high[win]) | self.visited[win]

    def obstacles(self, win: Window) -> NDArray[np.bool_]:
        """Return the cells that hold something tall, border a step, or were touched."""
        low, high = self.low[win], self.high[win]
        tall = (high - low) > self.step
        surface = np.where(np.isfinite(high) & ~tall, high, np.nan)
        edge = np.zeros_like(tall)
        for dr, dc in _NEIGHBOURS:
            a, b = _shifted(surface, dr, dc)
            jump = np.abs(a - b) > self.step + 0.05
            _or_shifted(edge, jump, dr, dc)
        return (tall | edge | self.blocked[win]) & ~self.visited[win]

    def walkable(self, win: Window, clearance: int = 1) -> NDArray[np.bool_]:
        """Return the known cells at least ``clearance`` cells away from any obstacle."""
        blocked = self.obstacles(win)
        if clearance:
            blocked = ndimage.binary_dilation(blocked, iterations=clearance)
        return self.known(win) & ~(blocked & ~self.visited[win])


def _shifted(
    grid: NDArray[np.float32], dr: int, dc: int
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Return the overlapping parts of ``grid`` and ``grid`` moved by (dr, dc)."""
    rows, cols = grid.shape
    a = grid[0 : rows - dr, max(0, -dc) : cols - max(0, dc)]
    b = grid[dr:rows, max(0, dc) : cols - max(0, -dc)]
    return a, b


def _or_shifted(target: NDArray[np.bool_], flags: NDArray[np.bool_], dr: int, dc: int) -> None:
    """Mark both cells of every flagged neighbour pair in ``target``."""
    rows, cols = target.shape
    target[0 : rows - dr, max(0, -dc) : cols - max(0, dc)] |= flags
    target[dr:rows, max(0, dc) : cols - max(0, -dc)] |= flags
