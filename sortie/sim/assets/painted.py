"""Painted surfaces for the flight worlds: textured boxes and flat labels seen from above.

A drone looks down at 45 degrees from tens of metres, so what it must read (roof numbers,
roof plates, the H of a landing pad) is painted on upward-facing quads, large. Patterns
(zebra stripes, giraffe patches, solar cells) are small fixed images, so every machine draws
the same pixels.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import NDArray
from PIL import Image, ImageDraw

from sortie.sim.mesh import Color, Mesh, Vec3, pose_matrix, quad
from sortie.sim.textures import text_texture

# Corner order of box() (see mesh.py), and for each face its corners top-left, top-right,
# bottom-right, bottom-left as seen from outside.
_CORNERS = np.array(
    [
        [-1, -1, -1],
        [1, -1, -1],
        [1, 1, -1],
        [-1, 1, -1],
        [-1, -1, 1],
        [1, -1, 1],
        [1, 1, 1],
        [-1, 1, 1],
    ],
    np.float64,
)
_FACES = ((4, 5, 1, 0), (5, 6, 2, 1), (6, 7, 3, 2), (7, 4, 0, 3), (7, 6, 5, 4), (0, 1, 2, 3))


def textured_box(size: Vec3, center: Vec3, texture: NDArray[np.uint8], yaw: float = 0.0) -> Mesh:
    """Return a box whose six faces each show the whole ``texture`` (one textured part)."""
    corners = _CORNERS * np.asarray(size) / 2
    faces, uvs = [], []
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    for k in range(len(_FACES)):
        faces += [[4 * k, 4 * k + 3, 4 * k + 2], [4 * k, 4 * k + 2, 4 * k + 1]]
        uvs += [square[[0, 3, 2]], square[[0, 2, 1]]]
    verts = np.concatenate([corners[list(f)] for f in _FACES]).astype(np.float32)
    mesh = Mesh(
        verts,
        np.asarray(faces, np.int32),
        np.full((12, 3), 255, np.uint8),
        np.asarray(uvs, np.float32),
        texture,
    )
    return mesh.transformed(pose_matrix(center, yaw))


def ground_label(
    center: Vec3, yaw: float, length: float, width: float, texture: NDArray[np.uint8]
) -> Mesh:
    """Return an upward-facing quad at ``center``; its text reads along ``yaw``."""
    hx, hy = length / 2, width / 2
    local = [(-hx, hy, 0.0), (hx, hy, 0.0), (hx, -hy, 0.0), (-hx, -hy, 0.0)]
    return quad(local, texture).transformed(pose_matrix(center, yaw))


def label_texture(
    text: str, ink: Color = (20, 20, 20), paper: Color = (245, 245, 245), aspect: float = 3.0
) -> NDArray[np.uint8]:
    """Return a bordered text image ``aspect`` times wider than tall."""
    return text_texture(text, int(48 * aspect), 48, ink=ink, paper=paper, border=ink)


@lru_cache(maxsize=4)
def stripe_texture(
    ink: Color = (24, 24, 24), paper: Color = (236, 236, 230), bands: int = 10
) -> NDArray[np.uint8]:
    """Return vertical stripes (a zebra's coat along its body)."""
    cols = (np.arange(64) * 2 * bands // 64) % 2
    row = np.asarray([paper, ink], np.uint8)[cols]
    image = np.repeat(row[None], 16, axis=0)
    image.flags.writeable = False
    return image


@lru_cache(maxsize=4)
def patch_texture(patch: Color = (150, 86, 36), line: Color = (236, 214, 160)) -> NDArray[np.uint8]:
    """Return brown patches in a pale net (a giraffe's coat)."""
    image = np.empty((32, 32, 3), np.uint8)
    image[:] = patch
    image[::8] = line
    image[:, ::8] = line
    image[1::8] = line  # lines two texels wide stay visible from afar
    image[:, 1::8] = line
    image.flags.writeable = False
    return image


@lru_cache(maxsize=4)
def cell_texture(
    cell: Color = (30, 48, 110), frame: Color = (190, 196, 204), damaged: bool = False
) -> NDArray[np.uint8]:
    """Return a solar panel's grid of cells; a damaged one has a dark cracked corner."""
    image = np.empty((24, 48, 3), np.uint8)
    image[:] = cell
    image[::6] = frame
    image[:, ::6] = frame
    image[-1], image[:, -1] = frame, frame
    if damaged:
        yy, xx = np.mgrid[0:24, 0:48]
        image[(xx - 34) ** 2 + (yy - 8) ** 2 < 60] = (70, 56, 40)
        image[np.abs((xx - 34) - (yy - 8) * 2) < 1] = (240, 240, 240)
    image.flags.writeable = False
    return image


@lru_cache(maxsize=8)
def pad_texture(
    letter: str = "H", ring: Color = (236, 236, 232), ground: Color = (60, 62, 66)
) -> NDArray[np.uint8]:
    """Return a landing pad: a white ring around a big letter on dark asphalt."""
    image = Image.new("RGB", (96, 96), ground)
    draw = ImageDraw.Draw(image)
    draw.ellipse([4, 4, 91, 91], outline=ring, width=6)
    letter_image = text_texture(letter, 48, 48, ink=ring, paper=ground)
    image.paste(Image.fromarray(letter_image), (24, 24))
    array = np.asarray(image, np.uint8).copy()
    array.flags.writeable = False
    return array
