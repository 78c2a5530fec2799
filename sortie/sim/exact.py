"""Hits that are the same on every x86-64 CPU: exact distances, shared edges, coincident faces.

Embree picks its kernels at run time (SSE4.2, AVX, AVX2, AVX-512), and they round differently:
the float32 distance of a hit differs in its last bits from one CPU to another, and where two
triangles meet (an edge, or two faces in one plane, such as a box standing on a floor) the
triangle it reports can differ too. A threshold downstream (a probe's reach, a headroom, a
pixel count) then flips, and with it a navigation graph, a path or a generated episode.

So Embree only *finds* the triangle; what a hit is, is decided here, the same way everywhere:

- **Distance and barycentrics** are measured again from the triangle's corners in float64 with
  one fixed sequence of IEEE operations (``exact_hits``; ``sortie/sim/_packets.c`` does the same,
  operation for operation, and numpy never fuses a multiply and an add).
- **Coincident faces**: triangles that lie in one plane and overlap are each other's partners
  (``Faces``). A hit on one of them goes to the face the ray enters (facing it) before one it
  leaves, then to the lowest triangle index: whichever partner Embree reported, the answer is
  the same.
- **Edges**: a hit within ``EDGE_BAND`` of its triangle's edge (or just outside it), or of a
  partner's, is ambiguous; the caller casts that ray again from an origin nudged by about a
  millimetre (``NUDGES``) until it meets no edge, and measures the original ray on the
  triangle found (``RayCaster._remeasure``, and ``retry`` in ``_packets.c`` the same way:
  unless that lies behind the ray or more than ``REMEASURE_TOLERANCE`` from the nudged hit,
  when the nudged point is used).

What remains CPU-dependent is a ray that passes within float32 rounding (about a micrometre) of
a triangle's outline without meeting any face there; docs/simulator.md states the promise.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from types import ModuleType

import numpy as np
from numpy.typing import NDArray

from sortie.sim.compiled import PACKETS_SWITCH, optional_module

EDGE_BAND = 1e-4
"""Metres: a hit this close to an edge (of its triangle or of a coincident one) is ambiguous."""
NUDGES = (
    np.array([0.6e-3, 0.8e-3, 0.5e-3], np.float32),
    np.array([-0.7e-3, 0.3e-3, -0.6e-3], np.float32),
    np.array([0.2e-3, -0.9e-3, 0.4e-3], np.float32),
)
"""Offsets (about 1 mm, along no axis or diagonal) of an ambiguous ray's origin, tried in turn
until the nudged ray is not ambiguous; after the last one its hit stands."""
BOX_MARGIN = 1e-3
"""Metres: a partner whose box, grown by this, misses the hit point is not measured (a cheap
first cut; the exact test decides the rest)."""
REMEASURE_TOLERANCE = 0.01
"""Metres: how far along the ray the un-nudged ray's hit on the nudged one's triangle may lie
from the nudged hit point and still be used (see ``RayCaster._remeasure``)."""
PLANE_DECIMALS = 4
"""Planes are compared at 0.1 mm (offset) and 1e-4 (normal): faces that close are coincident."""

Floats = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Partners:
    """For each triangle, a list of other triangles (compressed rows: ``start``, ``index``)."""

    start: NDArray[np.int64]
    index: NDArray[np.int64]

    @classmethod
    def none(cls, count: int) -> Partners:
        """Return empty lists for ``count`` triangles."""
        return cls(np.zeros(count + 1, np.int64), np.zeros(0, np.int64))

    @classmethod
    def of_pairs(cls, count: int, owner: NDArray[np.int64], other: NDArray[np.int64]) -> Partners:
        """Return the lists holding ``other[k]`` for ``owner[k]``, in triangle order.

        Each list in increasing order: a lexsort by owner, then other, or the same lists
        counted and sorted in the packet extension (``partner_rows``) when it is built.
        """
        compiled = _compiled()
        if compiled is not None:
            pairs = (np.ascontiguousarray(x, np.int64) for x in (owner, other))
            start, index = compiled.partner_rows(count, *pairs)
            return cls(np.frombuffer(start, np.int64), np.frombuffer(index, np.int64))
        order = np.lexsort((other, owner))
        start = np.zeros(count + 1, np.int64)
        np.cumsum(np.bincount(owner, minlength=count), out=start[1:])
        return cls(start, other[order])

    def counts(self, triangle: NDArray[np.int64]) -> NDArray[np.int64]:
        """Return how many partners each of ``triangle`` has."""
        return self.start[triangle + 1] - self.start[triangle]

    def pairs(
        self, rows: NDArray[np.int64], triangle: NDArray[np.int64]
    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Return (row, partner) for every partner of ``triangle[i]``, row ``rows[i]``."""
        counts = self.counts(triangle)
        owner = np.repeat(rows, counts)
        first = np.repeat(self.start[triangle] - np.cumsum(counts) + counts, counts)
        return owner, self.index[first + np.arange(len(owner))]

    def shifted(self, offset: int) -> Partners:
        """Return these lists with every triangle index raised by ``offset``."""
        return Partners(self.start, self.index + offset)

    def followed_by(self, other: Partners) -> Partners:
        """Return these lists, then ``other``'s (whose indices are already shifted)."""
        start = np.concatenate([self.start[:-1], other.start + self.start[-1]])
        return Partners(start, np.concatenate([self.index, other.index]))


@dataclass(frozen=True, slots=True)
class Faces:
    """What deciding a hit exactly needs of each triangle.

    Attributes:
        normal: (T, 3) unit normals in float64 (zero for a degenerate triangle).
        reach: (T, 3) metres from the edge where ``u``, ``v``, ``1 - u - v`` is 0 (a-c, a-b,
            b-c) per unit of that barycentric: the triangle's height over that edge.
        same: coincident partners facing the same way, with a lower index.
        opposite: coincident partners facing the other way.
        low: (T, 3) the corner of each triangle's box nearest -inf, grown by ``BOX_MARGIN``.
        high: (T, 3) the opposite corner, grown likewise.
    """

    normal: Floats
    reach: Floats
    same: Partners
    opposite: Partners
    low: Floats
    high: Floats

    @classmethod
    def of(cls, corners: NDArray[np.float32]) -> Faces:
        """Return the faces of (T, 3, 3) triangles, partners found among them."""
        a, b, c = (corners[:, i].astype(np.float64) for i in range(3))
        cross = np.column_stack(_cross(b - a, c - a))
        twice_area = np.sqrt(np.sum(np.square(cross), axis=1))
        with np.errstate(divide="ignore", invalid="ignore"):
            normal = np.where(twice_area[:, None] > 1e-12, cross / twice_area[:, None], 0.0)
            reach = np.column_stack(
                [
                    twice_area / np.maximum(np.sqrt(np.sum(np.square(q - p), axis=1)), 1e-12)
                    for p, q in ((a, c), (a, b), (b, c))
                ]
            )
        lowest, highest = _corner_bounds(corners)
        same, opposite = _coincident(normal, a, lowest, highest)
        return cls(normal, reach, same, opposite, lowest - BOX_MARGIN, highest + BOX_MARGIN)

    def followed_by(self, other: Faces) -> Faces:
        """Return these faces, then ``other``'s (no partners across the two)."""
        shift = len(self.normal)
        return Faces(
            np.concatenate([self.normal, other.normal]),
            np.concatenate([self.reach, other.reach]),
            self.same.followed_by(other.same.shifted(shift)),
            self.opposite.followed_by(other.opposite.shifted(shift)),
            np.concatenate([self.low, other.low]),
            np.concatenate([self.high, other.high]),
        )

    def edge_gap(self, triangle: NDArray[np.int64], u: Floats, v: Floats) -> Floats:
        """Return how far inside its triangle each hit lies, in metres (negative: outside)."""
        reach = self.reach[triangle]
        w = 1.0 - u - v
        return np.minimum(np.minimum(u * reach[:, 0], v * reach[:, 1]), w * reach[:, 2])


def exact_hits(
    corners: NDArray[np.float32],
    origins: NDArray[np.float32],
    directions: NDArray[np.float32],
    triangle: NDArray[np.int64],
) -> tuple[Floats, Floats, Floats]:
    """Return where each ray meets its ``triangle`` (-1: none, inf): ``t``, ``u``, ``v``.

    Moeller-Trumbore in float64 from the float32 inputs, in the order ``_packets.c`` uses.
    """
    hit = triangle >= 0
    a, b, c = (corners[np.maximum(triangle, 0), i].astype(np.float64) for i in range(3))
    o, d = origins.astype(np.float64), directions.astype(np.float64)
    e1, e2, s = b - a, c - a, o - a
    px, py, pz = _cross(d, e2)
    det = e1[:, 0] * px + e1[:, 1] * py + e1[:, 2] * pz
    qx, qy, qz = _cross(s, e1)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = (s[:, 0] * px + s[:, 1] * py + s[:, 2] * pz) / det
        v = (d[:, 0] * qx + d[:, 1] * qy + d[:, 2] * qz) / det
        t = (e2[:, 0] * qx + e2[:, 1] * qy + e2[:, 2] * qz) / det
    return np.where(hit, t, np.inf), np.where(hit, u, 0.0), np.where(hit, v, 0.0)


def settle(
    faces: Faces,
    corners: NDArray[np.float32],
    origins: NDArray[np.float32],
    directions: NDArray[np.float32],
    hits: tuple[NDArray[np.float32], NDArray[np.int32], NDArray[np.float32], NDArray[np.float32]],
) -> NDArray[np.bool_]:
    """Give each hit on coincident faces to its winner (in place); return the ambiguous rays.

    ``origins`` has a row per ray. ``hits`` is ``(t, triangle, u, v)``. A ray is ambiguous
    when its hit, or a coincident face, has an edge within ``EDGE_BAND`` of the hit point.
    """
    t, triangle, u, v = hits
    tri = triangle.astype(np.int64)
    found = tri >= 0
    ambiguous = np.zeros(len(tri), bool)
    gap = faces.edge_gap(tri[found], u[found].astype(np.float64), v[found].astype(np.float64))
    ambiguous[found] = gap <= EDGE_BAND  # near an edge, or (by Embree's rounding) outside
    rows = np.flatnonzero(found)
    if not rows.size or not (len(faces.same.index) or len(faces.opposite.index)):
        return ambiguous
    _give_to_winners(faces, corners, origins, directions, hits, rows, ambiguous)
    return ambiguous


def _give_to_winners(
    faces: Faces,
    corners: NDArray[np.float32],
    origins: NDArray[np.float32],
    directions: NDArray[np.float32],
    hits: tuple[NDArray[np.float32], NDArray[np.int32], NDArray[np.float32], NDArray[np.float32]],
    rows: NDArray[np.int64],
    ambiguous: NDArray[np.bool_],
) -> None:
    t, triangle, u, v = hits
    tri = triangle[rows].astype(np.int64)
    facing = _facing(faces, tri, directions[rows])
    owner, other = faces.same.pairs(rows, tri)
    back = ~facing
    owner2, other2 = faces.opposite.pairs(rows[back], tri[back])
    owner, other = np.concatenate([owner, owner2]), np.concatenate([other, other2])
    ways = directions[owner].astype(np.float64)
    point = origins[owner].astype(np.float64) + t[owner].astype(np.float64)[:, None] * ways
    near = np.all((faces.low[other] <= point) & (point <= faces.high[other]), axis=1)
    owner, other = owner[near], other[near]
    if not owner.size:
        return
    pt, pu, pv = exact_hits(corners, origins[owner], directions[owner], other)
    gap = faces.edge_gap(other, pu, pv)
    ambiguous[owner[np.abs(gap) <= EDGE_BAND]] = True
    inside = gap > EDGE_BAND
    owner, other, pt, pu, pv = owner[inside], other[inside], pt[inside], pu[inside], pv[inside]
    # Winner: the face the ray enters before one it leaves, then the lowest index.
    rank = np.where(_facing(faces, other, directions[owner]), 0, 1) * len(faces.normal) + other
    own_rank = np.where(facing, 0, 1) * len(faces.normal) + tri
    best = np.full(len(triangle), np.iinfo(np.int64).max)
    best[rows] = own_rank
    np.minimum.at(best, owner, rank)
    wins = rank == best[owner]
    owner, other = owner[wins], other[wins]
    t[owner], triangle[owner] = pt[wins].astype(np.float32), other.astype(np.int32)
    u[owner], v[owner] = pu[wins].astype(np.float32), pv[wins].astype(np.float32)


def _facing(faces: Faces, triangle: NDArray[np.int64], directions: NDArray) -> NDArray[np.bool_]:
    """Return whether each ray meets the front of its triangle (enters the solid behind it)."""
    n, d = faces.normal[triangle], directions.astype(np.float64)
    return n[:, 0] * d[:, 0] + n[:, 1] * d[:, 1] + n[:, 2] * d[:, 2] < 0


def _corner_bounds(corners: NDArray[np.float32]) -> tuple[Floats, Floats]:
    """Return each triangle's lowest and highest corner coordinates, (T, 3) each, in float64.

    Two ``np.minimum`` calls instead of ``min(axis=1)``, whose strided reduction costs ten
    times as much; they may differ only in the sign of a zero, which every use then adds a
    margin to (``-0.0 - m`` is ``0.0 - m``).
    """
    first, second, third = corners[:, 0], corners[:, 1], corners[:, 2]
    lowest = np.minimum(np.minimum(first, second), third).astype(np.float64)
    highest = np.maximum(np.maximum(first, second), third).astype(np.float64)
    return lowest, highest


def _coincident(
    normal: Floats, a: Floats, lowest: Floats, highest: Floats
) -> tuple[Partners, Partners]:
    """Return the partners of each triangle: same plane, overlapping boxes; same way, other way.

    ``a`` is each triangle's first corner; ``lowest`` and ``highest`` its box (``_corner_bounds``).
    """
    count = len(normal)
    first, second = _overlapping_in_plane(normal, a, lowest, highest)
    same_way = np.sum(normal[first] * normal[second], axis=1) > 0
    f, s = first[same_way], second[same_way]
    low, high = np.minimum(f, s), np.maximum(f, s)
    same = Partners.of_pairs(count, high, low)  # each keeps the lower-index one
    f, s = first[~same_way], second[~same_way]
    opposite = Partners.of_pairs(count, np.concatenate([f, s]), np.concatenate([s, f]))
    return same, opposite


def _overlapping_in_plane(
    normal: Floats, a: Floats, lowest: Floats, highest: Floats
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Return the pairs (i < j) of triangles in one plane whose boxes overlap.

    Sorted by plane, then by where they start along x, each triangle's candidates are the run
    of later ones in its plane that start before it ends.
    """
    flat = np.any(normal != 0, axis=1)
    lead = np.argmax(np.abs(normal) > 1e-6, axis=1)
    sign = np.where(np.take_along_axis(normal, lead[:, None], axis=1)[:, 0] < 0, -1.0, 1.0)
    plane = np.column_stack([normal * sign[:, None], np.sum(normal * a, axis=1) * sign])
    low, high = lowest - EDGE_BAND, highest + EDGE_BAND
    order, label = _plane_order(plane, flat, low[:, 0])
    low, high = low[order], high[order]  # from here on, in sorted order
    compiled = _compiled()
    if compiled is None:
        i, j = _sorted_pairs(label, low, high)
    else:  # the same pairs in the same order, without the candidates' arrays
        found = compiled.plane_pairs(*(np.ascontiguousarray(a) for a in (label, low, high)))
        pairs = np.frombuffer(found, np.int64).reshape(-1, 2)
        i, j = pairs[:, 0], pairs[:, 1]
    first, second = order[i], order[j]
    return np.minimum(first, second), np.maximum(first, second)


def _plane_order(
    plane: Floats, flat: NDArray[np.bool_], low_x: Floats
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Return the rows sorted by plane, then by ``low_x``, and each sorted row's plane label.

    A plane's label is its rank among the distinct planes (normal, then offset, rounded to
    ``PLANE_DECIMALS``); a row that is no plane (``flat`` False) comes first, with a label of
    its own, ``-1 - row``. The rounded planes are compared as the integers ``rint(plane *
    10**PLANE_DECIMALS)`` (what ``np.round`` divides back down, an order-keeping one-to-one
    step), the normal packed into one: a lexsort of three keys instead of one of four for the
    labels and another of two for the order, the same order and labels (``_plane_order_of_keys``
    is the plain form, for planes too far out for the integers).
    """
    rows = np.flatnonzero(flat)
    steps = np.rint(plane[rows] * 10.0**PLANE_DECIMALS)
    if len(rows) == 0 or not np.abs(steps).max() < 2.0**40:
        return _plane_order_of_keys(plane, flat, low_x)
    steps = steps.astype(np.int64)
    way = steps[:, :3] - steps[:, :3].min(axis=0)
    span = way.max(axis=0) + 1  # each at most 20,001: a unit normal's components
    way = (way[:, 0] * span[1] + way[:, 1]) * span[2] + way[:, 2]
    offset = steps[:, 3]
    sort = np.lexsort((low_x[rows], offset, way))
    way, offset = way[sort], offset[sort]
    new = np.ones(len(rows), bool)
    new[1:] = (way[1:] != way[:-1]) | (offset[1:] != offset[:-1])
    others = np.flatnonzero(~flat)[::-1]  # labels -1 - row: the last row first
    order = np.concatenate([others, rows[sort]])
    return order, np.concatenate([-1 - others, np.cumsum(new) - 1])


def _plane_order_of_keys(
    plane: Floats, flat: NDArray[np.bool_], low_x: Floats
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Return ``_plane_order``'s order and labels from the rounded planes themselves."""
    keys = np.round(plane, PLANE_DECIMALS)
    keys[~flat] = np.nan
    label = np.where(flat, _row_labels(keys), -1 - np.arange(len(plane)))
    order = np.lexsort((low_x, label))
    return order, label[order]


def _sorted_pairs(
    label: NDArray[np.int64], low: Floats, high: Floats
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Return the pairs (i < j) of rows of one label whose boxes overlap, by i then j.

    The rows are sorted by label, then by low x: each row's candidates are the run of later
    ones of its label that start before it ends along x. ``plane_pairs`` in ``_packets.c``
    walks the same runs.
    """
    end = _ends(label, low[:, 0], high[:, 0])
    counts = end - np.arange(len(label)) - 1
    i = np.repeat(np.arange(len(label)), counts)
    j = np.arange(len(i)) + np.repeat(
        np.arange(1, len(label) + 1) - np.cumsum(counts) + counts, counts
    )
    return _boxes_overlap(i, j, low, high)


@cache
def _compiled() -> ModuleType | None:
    """Return the packet extension (its ``plane_pairs`` needs no Embree), or None.

    None when it is not built or is switched off (``SORTIE_PACKETS=0``): the numpy walk
    then finds the same pairs.
    """
    return optional_module("sortie.sim._packets", PACKETS_SWITCH)


def _boxes_overlap(
    first: NDArray[np.int64], second: NDArray[np.int64], low: Floats, high: Floats
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Return the pairs whose boxes (``low``, ``high``: (T, 3)) overlap on every axis, in order.

    One axis at a time, each on the pairs the axes before it kept: a large scene has hundreds
    of thousands of candidates, most of them on one wide floor or ground plane, where y rules
    out most (the sort by x keeps only pairs that start before the other ends along x).
    """
    for axis in (1, 2, 0):
        lo, hi = np.ascontiguousarray(low[:, axis]), np.ascontiguousarray(high[:, axis])
        keep = (lo[first] <= hi[second]) & (lo[second] <= hi[first])
        first, second = first[keep], second[keep]
    return first, second


def _row_labels(keys: Floats) -> NDArray[np.int64]:
    """Return each row's rank among the distinct rows, sorted column by column.

    The labels ``np.unique(keys, axis=0, return_inverse=True)`` gives, from one ``lexsort``
    instead of a sort of the rows as records (a third of a large scene's table build).
    """
    order = np.lexsort(keys.T[::-1])
    ranked = keys[order]
    new = np.ones(len(keys), bool)
    new[1:] = np.any(ranked[1:] != ranked[:-1], axis=1)
    label = np.empty(len(keys), np.int64)
    label[order] = np.cumsum(new) - 1
    return label


def _ends(label: NDArray[np.int64], low: Floats, high: Floats) -> NDArray[np.int64]:
    """Return, per sorted triangle, where its run of candidates ends.

    The candidates are the later triangles of its label that start before it ends along x
    (the sort is by label, then by low x).
    """
    position = np.arange(len(label))
    # Search a combined key: label first, then x; labels are integers, x is bounded.
    span = float(np.max(np.abs(np.concatenate([low, high])), initial=1.0)) * 2 + 1
    key = label * span + low
    return np.maximum(np.searchsorted(key, label * span + high, side="right"), position + 1)


def _cross(p: Floats, q: Floats) -> tuple[Floats, Floats, Floats]:
    """Return the components of ``p x q``, each as ``a * b - c * d`` (the order the C uses)."""
    return (
        p[:, 1] * q[:, 2] - p[:, 2] * q[:, 1],
        p[:, 2] * q[:, 0] - p[:, 0] * q[:, 2],
        p[:, 0] * q[:, 1] - p[:, 1] * q[:, 0],
    )
