"""Edges of the navigation graph: neighbour columns whose surfaces are a step apart."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import csr_matrix

from sortie.sim.navigation.clearance import STEPS
from sortie.sim.navigation.surfaces import Grid
from sortie.sim.shapes import WalkerShape


def link_neighbours(
    grid: Grid,
    columns: NDArray[np.int64],
    positions: NDArray[np.float64],
    blocked_moves: NDArray[np.bool_],
    shape: WalkerShape,
) -> csr_matrix:
    """Return the edges between neighbours a step apart whose probes at each other hit nothing."""
    slots = column_slots(grid, columns)
    nodes = np.arange(len(columns))
    rows, cols = [], []
    for d, (di, dj) in enumerate(STEPS[:4]):  # the other four are the same edges reversed
        there = grid.shifted(columns, di, dj)
        for level in range(slots.shape[1]):
            other = np.where(there >= 0, slots[there, level], -1)
            ok = other >= 0
            ok[ok] = np.abs(positions[ok, 2] - positions[other[ok], 2]) <= shape.step
            ok[ok] = ~blocked_moves[ok, d] & ~blocked_moves[other[ok], d + 4]
            rows.append(nodes[ok])
            cols.append(other[ok])
    a, b = np.concatenate(rows), np.concatenate(cols)
    length = np.linalg.norm(positions[a] - positions[b], axis=1)
    n = len(columns)
    return csr_matrix(
        (np.concatenate([length, length]), (np.concatenate([a, b]), np.concatenate([b, a]))),
        shape=(n, n),
    )


def column_slots(grid: Grid, columns: NDArray[np.int64]) -> NDArray[np.int64]:
    """Return (C, L): the ids of the nodes in each column (sorted by column), -1 padded."""
    counts = np.bincount(columns, minlength=grid.size)
    slots = np.full((grid.size, max(int(counts.max(initial=0)), 1)), -1, np.int64)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.arange(len(columns)) - first[columns]
    slots[columns, rank] = np.arange(len(columns))
    return slots
