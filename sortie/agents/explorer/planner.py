"""Shortest paths on the occupancy grid (scipy's Dijkstra), and frontiers to explore."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy import ndimage
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import dijkstra

Cell = tuple[int, int]
_STEPS = ((0, 1, 1.0), (1, 0, 1.0), (1, 1, math.sqrt(2)), (1, -1, math.sqrt(2)))


def grid_graph(cost: NDArray[np.float64]) -> coo_matrix:
    """Return the 8-connected graph of the cells with a finite cost (edge: mean cost x length)."""
    rows, cols = cost.shape
    index = np.arange(rows * cols).reshape(rows, cols)
    heads, tails, weights = [], [], []
    for dr, dc, length in _STEPS:
        a = (slice(0, rows - dr), slice(max(0, -dc), cols - max(0, dc)))
        b = (slice(dr, rows), slice(max(0, dc), cols - max(0, -dc)))
        both = np.isfinite(cost[a]) & np.isfinite(cost[b])
        heads.append(index[a][both])
        tails.append(index[b][both])
        weights.append(length * (cost[a][both] + cost[b][both]) / 2)
    return coo_matrix(
        (np.concatenate(weights), (np.concatenate(heads), np.concatenate(tails))),
        shape=(rows * cols, rows * cols),
    )


def distances_from(
    cost: NDArray[np.float64], start: Cell
) -> tuple[NDArray[np.float64], NDArray[np.int32]]:
    """Return the path cost from ``start`` to every cell, and each cell's predecessor."""
    graph = grid_graph(cost).tocsr()
    source = start[0] * cost.shape[1] + start[1]
    dist, pred = dijkstra(graph, directed=False, indices=source, return_predecessors=True)
    return dist.reshape(cost.shape), pred


def trace(pred: NDArray[np.int32], goal: Cell, width: int) -> list[Cell]:
    """Return the cells from the start to ``goal`` by following predecessors."""
    path, node = [], goal[0] * width + goal[1]
    while node >= 0:
        path.append((int(node // width), int(node % width)))
        node = int(pred[node])
    return path[::-1]


def frontiers(
    walkable: NDArray[np.bool_], known: NDArray[np.bool_], min_cells: int = 3
) -> NDArray[np.bool_]:
    """Return walkable cells next to unknown ones, in groups of at least ``min_cells``.

    Single unknown cells inside known ground (gaps between the far rows of a depth image) are
    closed first, so that they do not count as places to explore.
    """
    seen = ndimage.binary_closing(known, iterations=2) | known
    edge = walkable & ndimage.binary_dilation(~seen)
    labels, count = ndimage.label(edge, structure=np.ones((3, 3)))
    if count == 0:
        return edge
    sizes = np.bincount(labels.ravel())
    big = sizes >= min_cells
    big[0] = False
    return big[labels]
