"""Triangle meshes and the primitive shapes that every asset is built from.

A ``Mesh`` holds triangles with one colour per face and, optionally, one texture that its
faces sample through per-corner UV coordinates (0..1, v down). Assets combine meshes; the
renderer packs all textures into one atlas.
"""

from __future__ import annotations

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
        verts = product(self.vertices.astype(np.float64), matrix[:3, :3].T) + matrix[:3, 3]
        return Mesh(verts.astype(np.float32), self.faces, self.colors, self.uvs, self.texture)

    def moved(self, offset: Vec3 = (0.0, 0.0, 0.0), yaw: float = 0.0) -> Mesh:
        """Return a copy rotated by ``yaw`` degrees about z, then translated by ``offset``."""
        return self.transformed(pose_matrix(offset, yaw))

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
    cy, sy = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
    cp, sp = math.cos(math.radians(pitch)), math.sin(math.radians(pitch))
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    ry = np.array([[cp, 0, -sp], [0, 1, 0], [sp, 0, cp]])
    matrix = np.eye(4)
    matrix[:3, :3] = product(rz, ry)
    matrix[:3, 3] = offset
    return matrix


def merge(meshes: Sequence[Mesh]) -> Mesh:
    """Join untextured meshes into one (textured meshes must stay separate parts)."""
    if any(m.texture is not None for m in meshes):
        raise ValueError("merge() joins untextured meshes only; keep textured ones as parts")
    offsets = np.cumsum([0] + [len(m.vertices) for m in meshes[:-1]])
    return Mesh(
        np.concatenate([m.vertices for m in meshes]).astype(np.float32),
        np.concatenate([m.faces + o for m, o in zip(meshes, offsets, strict=True)]).astype(
            np.int32
        ),
        np.concatenate([m.colors for m in meshes]).astype(np.uint8),
    )


def _mesh(vertices: list | NDArray, faces: list | NDArray, color: Color) -> Mesh:
    faces_arr = np.asarray(faces, dtype=np.int32).reshape(-1, 3)
    colors = np.tile(np.asarray(color, dtype=np.uint8), (len(faces_arr), 1))
    return Mesh(np.asarray(vertices, dtype=np.float32), faces_arr, colors)


_BOX_FACES = [
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
]


def box(
    size: Vec3, center: Vec3 = (0.0, 0.0, 0.0), color: Color = (200, 200, 200), yaw: float = 0.0
) -> Mesh:
    """Return an axis-aligned box of ``size`` centred at ``center``, turned by ``yaw``."""
    hx, hy, hz = (s / 2 for s in size)
    corners = [
        [-hx, -hy, -hz],
        [hx, -hy, -hz],
        [hx, hy, -hz],
        [-hx, hy, -hz],
        [-hx, -hy, hz],
        [hx, -hy, hz],
        [hx, hy, hz],
        [-hx, hy, hz],
    ]
    return _mesh(corners, _BOX_FACES, color).moved(center, yaw)


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
    angles = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    bottom_v = np.column_stack([ring * radius, np.zeros(segments)])
    top_v = np.column_stack([ring * top, np.full(segments, height)])
    verts = np.vstack([bottom_v, top_v, np.array([[0.0, 0.0, 0.0], [0.0, 0.0, height]])])
    faces = []
    for i in range(segments):
        j = (i + 1) % segments
        faces += [[i, j, segments + j], [i, segments + j, segments + i]]
        faces += [[2 * segments, j, i], [2 * segments + 1, segments + i, segments + j]]
    return _mesh(verts, faces, color).moved(center)


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
    return _mesh(verts, faces, color).moved(center)


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
    faces = np.array([[0, 3, 2], [0, 2, 1]], dtype=np.int32)
    corner_uv = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=np.float32)
    uvs = corner_uv[faces] if texture is not None else None
    colors = np.tile(np.asarray(color, dtype=np.uint8), (2, 1))
    return Mesh(np.asarray(corners, dtype=np.float32), faces, colors, uvs, texture)


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
