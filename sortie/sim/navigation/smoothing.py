"""String pulling: straighten a grid path so a follower does not zigzag, keeping clearance.

A straight stretch is accepted when every point along it lies in a grid square whose corner
columns all hold a usable node at about the stretch's height. Those nodes have the walker's
clearance, so the stretch keeps nearly all of it (at least ``sqrt(r^2 - (cell / 2)^2)``, as
good as the grid path's own edges), never crosses a thin wall or a closed door, and never
jumps between floors or over a drop. The extension (``kernels``) tests the samples with the
same operations as numpy, so either gives the same routes.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import numpy as np
from numpy.typing import NDArray

from sortie.sim.navigation import kernels
from sortie.sim.navigation.surfaces import Grid

SAMPLES_PER_CELL = 4
SNAP = 1e-6
"""Fractional grid coordinates this close to a whole number lie on a grid line."""
BLOCK = 8
"""Stretches ``pull_string`` tests in one call: fewer numpy calls, little work past a failure."""


@dataclass(frozen=True, slots=True)
class Corridor:
    """Tells whether a straight stretch between two points runs over usable nodes only.

    Attributes:
        grid: the graph's columns.
        slots: (C, L) node ids in each column, -1 where none.
        z: (N,) node heights, contiguous.
        usable: (N,) nodes not blocked by closed doors.
        step: largest height difference between a stretch and the nodes under it.
    """

    grid: Grid
    slots: NDArray[np.int64]
    z: NDArray[np.float64]
    usable: NDArray[np.bool_]
    step: float

    def clear_each(
        self, start: NDArray[np.float64], ends: NDArray[np.float64]
    ) -> NDArray[np.bool_]:
        """Return, for each row of ``ends``, whether the stretch to it keeps over usable nodes.

        Each stretch is sampled ``SAMPLES_PER_CELL`` times a cell and every sample's four grid
        corners need a usable node near its height. All the stretches are tested in one pass,
        with the operations one stretch alone would get, element by element (numpy's
        element-wise arithmetic does not depend on the array around it), so an answer does not
        depend on the stretches beside it (tests/sim/test_navigation.py checks it against one
        stretch at a time).
        """
        deltas = ends - start
        counts = [
            max(2, math.ceil(math.hypot(*d[:2]) * SAMPLES_PER_CELL / self.grid.cell) + 1)
            for d in deltas
        ]
        module = kernels.extension()
        if module is not None:
            return self._compiled(module, start, ends, counts)
        owner = np.repeat(np.arange(len(ends)), counts)
        steps = np.concatenate([_steps(count) for count in counts])
        points = start + steps[:, None] * deltas[owner]
        fi = (points[:, 0] - self.grid.x0) / self.grid.cell
        fj = (points[:, 1] - self.grid.y0) / self.grid.cell
        (i0, i1), (j0, j1) = _corner_indices(fi), _corner_indices(fj)
        held = np.ones(len(points), bool)
        for i, j in ((i0, j0), (i0, j1), (i1, j0), (i1, j1)):
            held &= self._held(i, j, points[:, 2])
        return np.logical_and.reduceat(held, np.cumsum([0, *counts[:-1]]))

    def _compiled(
        self,
        module: ModuleType,
        start: NDArray[np.float64],
        ends: NDArray[np.float64],
        counts: list[int],
    ) -> NDArray[np.bool_]:
        """Return ``clear_each``'s answer from the extension: the same samples and tests."""
        clear = np.empty(len(ends), bool)
        grid = self.grid
        module.stretches_clear(
            np.ascontiguousarray(start, np.float64),
            np.ascontiguousarray(ends, np.float64),
            np.array(counts, np.int64),
            self.slots,
            self.z,
            self.usable,
            grid.x0,
            grid.y0,
            grid.cell,
            grid.nx,
            grid.ny,
            self.step,
            clear,
        )
        return clear

    def _held(
        self, i: NDArray[np.int64], j: NDArray[np.int64], z: NDArray[np.float64]
    ) -> NDArray[np.bool_]:
        """Return, per sample, whether corner (i, j) is in the grid with a usable node near z."""
        inside = (i >= 0) & (i < self.grid.nx) & (j >= 0) & (j < self.grid.ny)
        ids = self.slots[np.where(inside, j * self.grid.nx + i, 0)]
        near = np.abs(self.z[ids] - z[:, None]) <= self.step
        return inside & ((ids >= 0) & self.usable[ids] & near).any(axis=1)


@functools.lru_cache(maxsize=512)
def _steps(count: int) -> NDArray[np.float64]:
    """Return ``np.linspace(0, 1, count)`` (the same few counts come back all the time)."""
    steps = np.linspace(0.0, 1.0, count)
    steps.flags.writeable = False
    return steps


def _corner_indices(f: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Return the grid indices below and above each coordinate (the same one on a line)."""
    whole = np.round(f)
    on_line = np.abs(f - whole) < SNAP
    below = np.where(on_line, whole, np.floor(f)).astype(np.int64)
    above = np.where(on_line, whole, np.floor(f) + 1).astype(np.int64)
    return below, above


ClearEach = Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.bool_]]
"""``Corridor.clear_each``: for a start and rows of ends, whether each stretch is clear."""


def pull_string(points: NDArray[np.float64], clear_each: ClearEach) -> NDArray[np.float64]:
    """Return the points kept when each straight stretch runs as far as ``clear_each`` allows.

    From each kept point the stretch goes on to the next point while it stays clear; the
    stretches to the next ``BLOCK`` points are tested together.
    """
    kept, i, n = [0], 0, len(points)
    while i < n - 1:
        j = i + 1
        while j + 1 < n:
            ends = points[j + 1 : j + 1 + BLOCK]
            clear = clear_each(points[i], ends)
            blocked = np.flatnonzero(~clear)
            j += int(blocked[0]) if blocked.size else len(ends)
            if blocked.size:
                break
        kept.append(j)
        i = j
    return points[kept]


def straighten(points: NDArray[np.float64], clear: ClearEach) -> NDArray[np.float64]:
    """Return the shorter of the strings pulled from either end.

    One greedy pass leaves slack where the grid path bends away and back; pulling from the
    other end bends at other corners, and the shorter of the two is usually within a few
    centimetres of the best any-angle path along the same grid path.
    """
    forward = pull_string(points, clear)
    backward = pull_string(points[::-1], clear)[::-1]
    return forward if _length(forward) <= _length(backward) else backward


def _length(points: NDArray[np.float64]) -> float:
    return float(np.linalg.norm(np.diff(points, axis=0), axis=1).sum())
