"""The rasteriser's chunks: a table's triangles in groups of ``CHUNK`` lying near one another.

The extension (``sortie/sim/_raster.c``) tests a chunk's bounds before its triangles: a chunk
out of view (its bounding sphere tells), or behind what nearer chunks drew (its bounding box),
is skipped whole, and chunks are drawn nearest first. The tighter the chunks, the more is
skipped. Chunks of the table's rows in their order grouped the end of one tree with the start
of the next, or a strip of ground eight cells long; grouped by place, a forest frame at 160×120
sets up a third fewer triangles. Which triangle comes first decides only how much work is
skipped, never a pixel's answer (the extension's module comment says why), so frames stay the
same bits.

A static table's triangles are grouped by median splits, once per world (about 30 ms for 32,000
triangles). The rows after it, the dynamic objects' (remade whenever one moves), keep their
order: their objects are small, and sorting them every step would cost more than it saves.

Triangles without area are left out: no ray hits them, and the extension would drop them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

CHUNK = 16
"""Triangles per chunk (the extension's ``CHUNK``)."""
FEW = 4
"""Chunks a group may hold before it is no longer split in two, but cut along its widest side."""


@dataclass(frozen=True, slots=True)
class Chunks:
    """A table's triangles by chunk, and each chunk's bounds.

    Attributes:
        members: (K * CHUNK,) int32, the triangle indices of each chunk in turn, -1 after a
            chunk's last (only the last chunk of a run is short).
        bounds: (K, 7) float64, each chunk's bounding box and the sphere around that box,
            each grown by a millionth (and a millionth of a metre) against rounding: the
            box's centre (3), the sphere's radius, the box's half sides (3).
    """

    members: NDArray[np.int32]
    bounds: NDArray[np.float64]

    def __len__(self) -> int:
        """Return how many chunks there are."""
        return len(self.bounds)

    def joined(self, other: Chunks) -> Chunks:
        """Return these chunks followed by ``other``'s."""
        return Chunks(
            np.concatenate([self.members, other.members]),
            np.concatenate([self.bounds, other.bounds]),
        )


def near_one_another(corners: NDArray[np.float32]) -> Chunks:
    """Return the triangles of ``corners`` (T, 3, 3) in chunks grouped by place."""
    wide = corners.astype(np.float64)
    kept = _with_area(wide)
    centres = wide[kept, 0] + wide[kept, 1] + wide[kept, 2]  # three times the centroid
    return _chunked(wide, kept[_by_place(centres)])


def in_order(corners: NDArray[np.float32], first: int = 0) -> Chunks:
    """Return the triangles ``corners[first:]`` in chunks as they come (indices of ``corners``)."""
    wide = corners[first:].astype(np.float64)
    return _chunked(wide, _with_area(wide), first)


def _with_area(wide: NDArray[np.float64]) -> NDArray[np.int64]:
    """Return the rows of ``wide`` (T, 3, 3) with area: the extension's normal is not zero.

    The normal is the extension's, from the same float64 operations in its order (float32
    corners' differences are exact in float64, and no product of them underflows to zero).
    """
    e1, e2 = wide[:, 1] - wide[:, 0], wide[:, 2] - wide[:, 0]
    normal = [
        e1[:, (i + 1) % 3] * e2[:, (i + 2) % 3] - e1[:, (i + 2) % 3] * e2[:, (i + 1) % 3]
        for i in range(3)
    ]
    return np.flatnonzero((normal[0] != 0) | (normal[1] != 0) | (normal[2] != 0))


def _chunked(wide: NDArray[np.float64], rows: NDArray[np.int64], first: int = 0) -> Chunks:
    """Return ``rows`` of ``wide`` (T, 3, 3) cut into chunks in their order, indices + ``first``."""
    if not len(rows):
        return Chunks(np.zeros(0, np.int32), np.zeros((0, 7)))
    pad = (-len(rows)) % CHUNK
    members = np.concatenate([rows + first, np.full(pad, -1)]).astype(np.int32)
    groups = wide[np.concatenate([rows, np.repeat(rows[-1:], pad)])].reshape(-1, CHUNK * 3, 3)
    low, high = groups.min(axis=1), groups.max(axis=1)  # a repeated last row changes no bound
    centre, grown = (low + high) / 2, (high - low) / 2 * (1 + 1e-9) + 1e-6
    radius = np.sqrt(np.square(high - low).sum(axis=1)) / 2 * (1 + 1e-9) + 1e-6
    return Chunks(members, np.ascontiguousarray(np.column_stack([centre, radius, grown])))


def _by_place(points: NDArray[np.float64]) -> NDArray[np.int64]:
    """Return an order of ``points`` (N, 3) whose runs of ``CHUNK`` lie close together.

    A group is split across its widest side, its first part a whole number of chunks, until it
    holds at most ``FEW`` chunks; those groups are then sorted along their widest side, all at
    once, and cut into chunks as they come. The sorts are stable and the values come from
    elementwise operations, which give the same bits whatever numpy's vector paths, so every
    machine makes the same chunks.
    """
    order = np.arange(len(points))
    groups, small = [(0, len(points))], []
    while groups:
        start, end = groups.pop()
        if end - start <= FEW * CHUNK:
            small.append(start)
            continue
        rows = order[start:end]
        key = points[rows, int(np.argmax(points[rows].max(axis=0) - points[rows].min(axis=0)))]
        half = CHUNK * -(-(end - start) // (2 * CHUNK))
        order[start:end] = rows[np.argsort(key, kind="stable")]
        groups += [(start, start + half), (start + half, end)]
    if not len(points):
        return order
    starts = np.array(sorted(small))  # the groups, in order, cover every row
    label = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(points))))
    span = np.maximum.reduceat(points[order], starts) - np.minimum.reduceat(points[order], starts)
    key = points[order, np.argmax(span, axis=1)[label]]
    return order[np.lexsort((key, label))]
