"""Triangle meshes and the primitive shapes that every asset is built from.

A ``Mesh`` holds triangles with one colour per face and, optionally, one texture that its
faces sample through per-corner UV coordinates (0..1, v down). Assets combine meshes; the
renderer packs all textures into one atlas.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from sortie.sim.linear import product

Color = tuple[int, int, int]
Vec3 = tuple[float, float, float]


@dataclass(frozen=True, slots=True, eq=False)
class Mesh:
    """Triangles in world or local coordinates with per-face colours and an optional texture.

    Attributes:
        vertices: float32 (V, 3) positions in metres.
        faces: int32 (F, 3) vertex indices, counter-clockwise seen from outside.
        colors: uint8 (F, 3) colour of each face.
        uvs: float32 (F, 3, 2) texture coordinates of each face corner, or None.
        texture: uint8 (H, W, 3) image sampled by ``uvs``, or None.
    """

    vertices: NDArray[np.float32]
    faces: NDArray[np.int32]
    colors: NDArray[np.uint8]
    uvs: NDArray[np.float32] | None = None
    texture: NDArray[np.uint8] | None = None
    _bounds: tuple[NDArray[np.float32], NDArray[np.float32]] | None = field(
        default=None, init=False, repr=False
    )

    @property
    def triangle_count(self) -> int:
        """Return the number of triangles."""
        return int(self.faces.shape[0])

    def triangles(self) -> NDArray[np.float32]:
        """Return the corners of every triangle, (F, 3, 3)."""
        return self.vertices[self.faces]

    def transformed(self, matrix: NDArray[np.float64]) -> Mesh:
        """Return a copy moved by a 4x4 homogeneous transform."""
        return self._placed(matrix[:3, :3].T, matrix[:3, 3])

    def moved(self, offset: Vec3 = (0.0, 0.0, 0.0), yaw: float = 0.0) -> Mesh:
        """Return a copy rotated by ``yaw`` degrees about z, then translated by ``offset``.

        The same as ``transformed(pose_matrix(offset, yaw))``, without making the matrix.
        """
        return self._placed(_turning(yaw, 0.0)[:3, :3].T, np.array(offset, np.float64))

    def _placed(self, turn: NDArray[np.float64], shift: NDArray[np.float64]) -> Mesh:
        """Return a copy whose vertices are ``vertices @ turn + shift`` (``turn``: (3, 3))."""
        verts = product(self.vertices.astype(np.float64), turn) + shift
        return Mesh(verts.astype(np.float32), self.faces, self.colors, self.uvs, self.texture)

    def bounds(self) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """Return the (min, max) corners of the axis-aligned bounding box (read-only arrays).

        Computed once per mesh: meshes are never changed in place, and oracles and missions
        ask for the same objects' boxes every step.
        """
        if self._bounds is None:
            low, high = self.vertices.min(axis=0), self.vertices.max(axis=0)
            low.flags.writeable = high.flags.writeable = False
            object.__setattr__(self, "_bounds", (low, high))
        assert self._bounds is not None
        return self._bounds


def pose_matrix(offset: Vec3 = (0.0, 0.0, 0.0), yaw: float = 0.0, pitch: float = 0.0) -> NDArray:
    """Return the 4x4 transform: pitch about y (degrees, nose up), then yaw about z, then move."""
    matrix = _turning(yaw, pitch).copy()
    matrix[:3, 3] = offset
    return matrix


def _turning(yaw: float, pitch: float) -> NDArray:
    """Return the 4x4 turn of ``pose_matrix`` without a move (read-only, kept when it can be)."""
    try:
        return _kept_turn(yaw, pitch, math.copysign(1.0, yaw), math.copysign(1.0, pitch))
    except TypeError:  # an angle that cannot be a key (a 0-d array)
        return _turn(yaw, pitch)


@functools.lru_cache(maxsize=4096)
def _kept_turn(yaw: float, pitch: float, yaw_sign: float, pitch_sign: float) -> NDArray:
    """Return ``_turn(yaw, pitch)``, kept per angle pair: worlds turn most parts by a few angles.

    The signs are in the key because -0.0 equals 0.0 as a key but is another angle
    (``sin(-0.0)`` is -0.0): kept apart, a turn is always the one computed for its angle.
    """
    return _turn(yaw, pitch)


def _turn(yaw: float, pitch: float) -> NDArray:
    """Return the 4x4 turn of ``pose_matrix`` without a move (read-only)."""
    cy, sy = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
    cp, sp = math.cos(math.radians(pitch)), math.sin(math.radians(pitch))
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    ry = np.array([[cp, 0, -sp], [0, 1, 0], [sp, 0, cp]])
    matrix = np.eye(4)
    matrix[:3, :3] = product(rz, ry)
    matrix.flags.writeable = False
    return matrix


def merge(meshes: Sequence[Mesh]) -> Mesh:
    """Join untextured meshes into one (textured meshes must stay separate parts)."""
    if any(m.texture is not None for m in meshes):
        raise ValueError("merge() joins untextured meshes only; keep textured ones as parts")
    counts = [len(m.vertices) for m in meshes[:-1]]
    offsets = np.repeat(np.cumsum([0, *counts]), [len(m.faces) for m in meshes])
    faces = (
        np.concatenate([m.faces for m in meshes]).astype(np.int64, copy=False) + offsets[:, None]
    )
    return Mesh(
        np.concatenate([m.vertices for m in meshes]).astype(np.float32, copy=False),
        faces.astype(np.int32),
        np.concatenate([m.colors for m in meshes]).astype(np.uint8, copy=False),
    )


def _mesh(vertices: list | NDArray, faces: list | NDArray, color: Color) -> Mesh:
    faces_arr = np.asarray(faces, dtype=np.int32).reshape(-1, 3)
    return Mesh(np.asarray(vertices, dtype=np.float32), faces_arr, _colors(color, len(faces_arr)))


def _colors(color: Color, count: int) -> NDArray[np.uint8]:
    """Return ``count`` rows of ``color`` as uint8 (what ``np.tile`` gives, without its cost)."""
    row = np.asarray(color, dtype=np.uint8)
    colors = np.empty((count, *row.shape), np.uint8)
    colors[:] = row
    return colors


def _read_only(array: NDArray) -> NDArray:
    """Return ``array`` made read-only: kept per process and shared by every mesh built on it."""
    array.flags.writeable = False
    return array


_BOX_FACES = _read_only(
    np.array(
        [
            [0, 2, 1],
            [0, 3, 2],  # bottom (z-)
            [4, 5, 6],
            [4, 6, 7],  # top (z+)
            [0, 1, 5],
            [0, 5, 4],  # y-
            [1, 2, 6],
            [1, 6, 5],  # x+
            [2, 3, 7],
            [2, 7, 6],  # y+
            [3, 0, 4],
            [3, 4, 7],  # x-
        ],
        np.int32,
    )
)
_BOX_SIGNS = _read_only(
    np.array(
        [[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1], [-1, -1, 1], [1, -1, 1], [1, 1, 1]]
        + [[-1, 1, 1]],
        np.float32,
    )
)
"""The box's corners in units of its half size: times the half sizes in float32, the corners
are those of the half sizes and their negatives rounded to float32 (negation is exact)."""


def box(
    size: Vec3, center: Vec3 = (0.0, 0.0, 0.0), color: Color = (200, 200, 200), yaw: float = 0.0
) -> Mesh:
    """Return an axis-aligned box of ``size`` centred at ``center``, turned by ``yaw``."""
    hx, hy, hz = (s / 2 for s in size)
    corners = _BOX_SIGNS * np.array([hx, hy, hz], np.float32)
    return Mesh(corners, _BOX_FACES, _colors(color, 12)).moved(center, yaw)


def slab(
    x0: float, y0: float, x1: float, y1: float, z0: float, z1: float, color: Color = (200, 200, 200)
) -> Mesh:
    """Return the box spanning ``[x0, x1] x [y0, y1] x [z0, z1]``."""
    return box((x1 - x0, y1 - y0, z1 - z0), ((x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2), color)


def cylinder(
    radius: float,
    height: float,
    center: Vec3 = (0.0, 0.0, 0.0),
    color: Color = (200, 200, 200),
    segments: int = 10,
    top_radius: float | None = None,
) -> Mesh:
    """Return a vertical cylinder (or a cone frustum with ``top_radius``) standing on ``center``."""
    top = radius if top_radius is None else top_radius
    ring, faces = _cylinder_frame(segments)
    verts = np.zeros((2 * segments + 2, 3))
    verts[:segments, :2] = ring * radius
    verts[segments : 2 * segments, :2] = ring * top
    verts[segments : 2 * segments, 2] = height
    verts[2 * segments + 1, 2] = height
    colors = _colors(color, len(faces))
    return Mesh(verts.astype(np.float32), faces, colors).moved(center)


@functools.lru_cache(maxsize=64)
def _cylinder_frame(segments: int) -> tuple[NDArray[np.float64], NDArray[np.int32]]:
    """Return a cylinder's unit ring (cos, sin) and its faces (read-only, kept per count).

    Vertices: the bottom ring, the top ring, then the bottom and top centres.
    """
    angles = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    faces = []
    for i in range(segments):
        j = (i + 1) % segments
        faces += [[i, j, segments + j], [i, segments + j, segments + i]]
        faces += [[2 * segments, j, i], [2 * segments + 1, segments + i, segments + j]]
    return _read_only(ring), _read_only(np.array(faces, np.int32).reshape(-1, 3))


def cone(
    radius: float,
    height: float,
    center: Vec3 = (0.0, 0.0, 0.0),
    color: Color = (200, 200, 200),
    segments: int = 10,
) -> Mesh:
    """Return a vertical cone standing on ``center``."""
    return cylinder(radius, height, center, color, segments, top_radius=0.0)


def sphere(
    radius: float,
    center: Vec3 = (0.0, 0.0, 0.0),
    color: Color = (200, 200, 200),
    rings: int = 6,
    segments: int = 10,
    squash: float = 1.0,
) -> Mesh:
    """Return a UV sphere; ``squash`` scales its height (e.g. 0.6 for a bush)."""
    if not (isinstance(radius, float | int) and isinstance(squash, float | int)):
        return _sphere_by_rows(radius, center, color, rings, segments, squash)
    cos_theta, sin_theta, cos_phi, sin_phi, faces = _sphere_frame(rings, segments)
    # The products in the order of ``_sphere_by_rows``: (radius * cos theta) * cos phi.
    across = (radius * cos_theta)[:, None]
    verts = np.empty((2 + len(cos_theta) * segments, 3))
    verts[:2] = [[0.0, 0.0, -radius * squash], [0.0, 0.0, radius * squash]]
    verts[2:, 0] = (across * cos_phi).ravel()
    verts[2:, 1] = (across * sin_phi).ravel()
    verts[2:, 2] = np.repeat(radius * squash * sin_theta, segments)
    colors = _colors(color, len(faces))
    return Mesh(verts.astype(np.float32), faces, colors).moved(center)


def _sphere_by_rows(
    radius: float,
    center: Vec3,
    color: Color,
    rings: int,
    segments: int,
    squash: float,
) -> Mesh:
    """Return ``sphere``'s mesh one vertex at a time (for a radius or squash not a float)."""
    verts = [[0.0, 0.0, -radius * squash], [0.0, 0.0, radius * squash]]
    for r in range(1, rings):
        theta = math.pi * r / rings - math.pi / 2
        for s in range(segments):
            phi = 2 * math.pi * s / segments
            verts.append(
                [
                    radius * math.cos(theta) * math.cos(phi),
                    radius * math.cos(theta) * math.sin(phi),
                    radius * squash * math.sin(theta),
                ]
            )
    return _mesh(verts, _sphere_frame(rings, segments)[4], color).moved(center)


@functools.lru_cache(maxsize=64)
def _sphere_frame(rings: int, segments: int) -> tuple[NDArray, NDArray, NDArray, NDArray, NDArray]:
    """Return a UV sphere's cos and sin per ring and per segment, and its faces (read-only).

    Vertices: the south pole, the north pole, then ``segments`` per ring from the south. The
    angles come from ``math`` (not numpy's own cos and sin, which round otherwise).
    """
    thetas = [math.pi * r / rings - math.pi / 2 for r in range(1, rings)]
    phis = [2 * math.pi * s / segments for s in range(segments)]
    tables = [
        np.array([f(a) for a in angles]) for angles in (thetas, phis) for f in (math.cos, math.sin)
    ]
    faces = []

    def ring_index(r: int, s: int) -> int:
        return 2 + (r - 1) * segments + s % segments

    for s in range(segments):
        faces.append([0, ring_index(1, s + 1), ring_index(1, s)])
        faces.append([1, ring_index(rings - 1, s), ring_index(rings - 1, s + 1)])
        for r in range(1, rings - 1):
            a, b = ring_index(r, s), ring_index(r, s + 1)
            c, d = ring_index(r + 1, s + 1), ring_index(r + 1, s)
            faces += [[a, b, c], [a, c, d]]
    cos_theta, sin_theta, cos_phi, sin_phi = (_read_only(t) for t in tables)
    return (
        cos_theta,
        sin_theta,
        cos_phi,
        sin_phi,
        _read_only(np.array(faces, np.int32).reshape(-1, 3)),
    )


def wedge(
    size: Vec3, center: Vec3 = (0.0, 0.0, 0.0), color: Color = (200, 200, 200), yaw: float = 0.0
) -> Mesh:
    """Return a ramp: a box whose top slopes from 0 at x- up to ``size[2]`` at x+."""
    hx, hy, hz = size[0] / 2, size[1] / 2, size[2]
    verts = [[-hx, -hy, 0], [hx, -hy, 0], [hx, hy, 0], [-hx, hy, 0], [hx, -hy, hz], [hx, hy, hz]]
    faces = [[0, 2, 1], [0, 3, 2], [0, 1, 4], [3, 5, 2], [1, 2, 5], [1, 5, 4], [0, 4, 5], [0, 5, 3]]
    return _mesh(verts, faces, color).moved(center, yaw)


def quad(
    corners: Sequence[Vec3],
    texture: NDArray[np.uint8] | None = None,
    color: Color = (255, 255, 255),
) -> Mesh:
    """Return a quad through 4 corners, textured when ``texture`` is given.

    Corners run top-left, top-right, bottom-right, bottom-left as seen from the front.
    """
    uvs = _QUAD_UVS if texture is not None else None
    colors = _colors(color, 2)
    return Mesh(np.asarray(corners, dtype=np.float32), _QUAD_FACES, colors, uvs, texture)


_QUAD_FACES = _read_only(np.array([[0, 3, 2], [0, 2, 1]], dtype=np.int32))
_QUAD_UVS = _read_only(np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=np.float32)[_QUAD_FACES])


def stairs(
    width: float,
    run: float,
    rise: float,
    steps: int,
    origin: Vec3 = (0, 0, 0),
    yaw: float = 0.0,
    color: Color = (170, 170, 170),
) -> Mesh:
    """Return a flight of ``steps`` solid steps climbing along +x from ``origin``."""
    blocks = [
        slab(i * run, -width / 2, (i + 1) * run, width / 2, 0.0, (i + 1) * rise, color)
        for i in range(steps)
    ]
    return merge(blocks).moved(origin, yaw)
