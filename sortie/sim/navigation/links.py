"""Edges of the navigation graph: neighbour columns whose surfaces are a step apart."""

from __future__ import annotations

from types import ModuleType

import numpy as np
from numpy.typing import NDArray

from sortie.sim.navigation import kernels
from sortie.sim.navigation.clearance import STEPS
from sortie.sim.navigation.edges import Edges
from sortie.sim.navigation.surfaces import Grid
from sortie.sim.shapes import WalkerShape


def link_neighbours(
    grid: Grid,
    columns: NDArray[np.int64],
    positions: NDArray[np.float64],
    blocked_moves: NDArray[np.bool_],
    shape: WalkerShape,
) -> Edges:
    """Return the edges between neighbours a step apart whose probes at each other hit nothing."""
    slots = column_slots(grid, columns)
    module = kernels.extension()
    if module is None:
        a, b = _pairs(grid, columns, positions, blocked_moves, slots, shape)
        return _matrix(a, b, positions)
    arrays = (columns, positions[:, 2], blocked_moves, slots)
    a, b = _compiled_pairs(module, grid, arrays, shape.step)
    return _compiled_matrix(module, a, b, positions)


def _matrix(a: NDArray[np.int64], b: NDArray[np.int64], positions: NDArray[np.float64]) -> Edges:
    """Return the symmetric edges ``a[k]``-``b[k]``, weighted by their length, as scipy would."""
    from scipy.sparse import csr_matrix  # numpy's form: the extension makes the rows itself

    length = np.linalg.norm(positions[a] - positions[b], axis=1)
    n = len(positions)
    return Edges.of(
        csr_matrix(
            (np.concatenate([length, length]), (np.concatenate([a, b]), np.concatenate([b, a]))),
            shape=(n, n),
        )
    )


def _pairs(
    grid: Grid,
    columns: NDArray[np.int64],
    positions: NDArray[np.float64],
    blocked_moves: NDArray[np.bool_],
    slots: NDArray[np.int64],
    shape: WalkerShape,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Return the linked nodes (a, b), b in the column one of the first four STEPS from a's."""
    rows, cols = [], []
    for d, (di, dj) in enumerate(STEPS[:4]):  # the other four are the same edges reversed
        there = grid.shifted(columns, di, dj)
        # Every node of the neighbour column at once; the order of the pairs does not matter,
        # since the sparse matrix sorts each row's columns.
        others = np.where(there[:, None] >= 0, slots[np.maximum(there, 0)], -1)
        a, level = np.nonzero(others >= 0)
        b = others[a, level]
        ok = np.abs(positions[a, 2] - positions[b, 2]) <= shape.step
        ok &= ~blocked_moves[a, d] & ~blocked_moves[b, d + 4]
        rows.append(a[ok])
        cols.append(b[ok])
    return np.concatenate(rows), np.concatenate(cols)


def _compiled_pairs(
    module: ModuleType, grid: Grid, arrays: tuple[NDArray, ...], step: float
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Return ``_pairs``'s answer, in its order, from the extension.

    ``arrays`` are the nodes' columns and heights, their blocked moves and the column slots.
    """
    columns, heights, blocked_moves, slots = (np.ascontiguousarray(x) for x in arrays)
    room = len(columns) * 4 * slots.shape[1]
    a, b = np.empty(room, np.int64), np.empty(room, np.int64)
    count = module.link_pairs(columns, heights, blocked_moves, slots, grid.nx, grid.ny, step, a, b)
    return a[:count], b[:count]


def column_slots(grid: Grid, columns: NDArray[np.int64]) -> NDArray[np.int64]:
    """Return (C, L): the ids of the nodes in each column (sorted by column), -1 padded."""
    counts = np.bincount(columns, minlength=grid.size)
    slots = np.full((grid.size, max(int(counts.max(initial=0)), 1)), -1, np.int64)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.arange(len(columns)) - first[columns]
    slots[columns, rank] = np.arange(len(columns))
    return slots


def _compiled_matrix(
    module: ModuleType, a: NDArray[np.int64], b: NDArray[np.int64], positions: NDArray[np.float64]
) -> Edges:
    """Return ``_matrix``'s answer, the same arrays, from the extension (5x cheaper in suburb).

    scipy would sum a repeated pair; the extension does not, so then scipy makes the rows.
    """
    n = len(positions)
    indptr, indices = np.empty(n + 1, np.int32), np.empty(2 * len(a), np.int32)
    lengths = np.empty(2 * len(a), np.float64)
    if module.edge_rows(a, b, np.ascontiguousarray(positions), indptr, indices, lengths):
        return _matrix(a, b, positions)
    return Edges(indptr, indices, lengths)
