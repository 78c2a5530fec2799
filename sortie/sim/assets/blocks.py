"""Flat-roofed buildings for the flight worlds: windowed walls, a big roof number, a roof sign.

A block is a closed box with window grids painted on its four walls, a parapet and its
number painted large on the roof, where a drone reads it. A rooftop billboard (its own
object, semantic ``sign``) names the business inside.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from sortie.sim.assets.painted import ground_label, label_texture
from sortie.sim.assets.props import PALETTE, PROUD, facing_quad, shade
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Color, Mesh, box, merge, pose_matrix, slab
from sortie.sim.scene import SceneObject
from sortie.sim.textures import text_texture

STOREY = 3.2
BLOCK_COLORS = ("grey", "beige", "cream", "white", "dark red", "light blue", "brown", "teal")
BLOCK_KINDS = ("office", "apartments", "hotel", "bank", "school", "library", "warehouse")
COMPANIES = (
    "ACME",
    "NOVA",
    "APEX",
    "ORION",
    "ZENITH",
    "VEGA",
    "ATLAS",
    "POLARIS",
    "TITAN",
    "LUMEN",
    "KESTREL",
    "SUMMIT",
    "HELIX",
    "CASCADE",
    "MERIDIAN",
    "QUASAR",
)
ROOF: Color = (96, 96, 100)


@lru_cache(maxsize=64)
def window_texture(storeys: int, columns: int, wall: Color) -> NDArray[np.uint8]:
    """Return a wall with ``storeys`` rows of ``columns`` dark windows (8 texels a window)."""
    image = np.empty((storeys * 8, columns * 8, 3), np.uint8)
    image[:] = wall
    for r in range(storeys):
        for c in range(columns):
            image[r * 8 + 2 : r * 8 + 7, c * 8 + 2 : c * 8 + 6] = (64, 84, 108)
    image.flags.writeable = False
    return image


def _walls(width: float, depth: float, height: float, storeys: int, wall: Color) -> list[Mesh]:
    """Return the window grids painted on the four walls of a block centred on the origin."""
    quads = []
    for facing, across, out in (
        (0.0, width, depth / 2),
        (90.0, depth, width / 2),
        (180.0, width, depth / 2),
        (270.0, depth, width / 2),
    ):
        columns = max(1, int(across / 3.0))
        texture = window_texture(storeys, columns, wall)
        c, s = np.cos(np.radians(facing)), np.sin(np.radians(facing))
        center = ((out + PROUD) * c, (out + PROUD) * s, height / 2)
        quads.append(facing_quad(center, facing, across, height, texture))
    return quads


def _shell(width: float, depth: float, height: float, wall: Color) -> Mesh:
    """Return a block's body, its roof and the parapet around the roof, as one mesh."""
    body = slab(-depth / 2, -width / 2, depth / 2, width / 2, 0.0, height, wall)
    roof = slab(
        -depth / 2 + 0.3,
        -width / 2 + 0.3,
        depth / 2 - 0.3,
        width / 2 - 0.3,
        height,
        height + 0.05,
        ROOF,
    )
    parapet = [
        box((depth, 0.3, 0.9), (0.0, s * (width / 2 - 0.15), height + 0.45), shade(wall, 0.8))
        for s in (-1, 1)
    ]
    parapet += [
        box((0.3, width, 0.9), (s * (depth / 2 - 0.15), 0.0, height + 0.45), shade(wall, 0.8))
        for s in (-1, 1)
    ]
    return merge([body, roof, *parapet])


def add_block(
    kit: WorldKit,
    center: tuple[float, float],
    yaw: float,
    width: float,
    depth: float,
    storeys: int,
    number: int,
    color: str,
    kind: str,
    street: str = "",
    text: str = "",
) -> SceneObject:
    """Add a flat-roofed block whose front (depth along x) faces ``yaw``.

    Attributes: ``kind`` (office, hotel, ...), ``number`` (painted on the roof), ``color``,
    ``storeys``, ``street`` and ``text`` (what its roof sign says, empty without one).
    """
    wall = PALETTE[color]
    height = storeys * STOREY
    digits = text_texture(str(number), 96, 64, ink=(245, 245, 240), paper=ROOF)
    size = min(width, depth) * 0.4
    # The digits read left to right for a drone heading along the block's +y (north in a
    # block turned by 0), as on a map.
    number_quad = ground_label((0.0, 0.0, height + 0.05 + PROUD), 0.0, size * 1.4, size, digits)
    parts = [
        _shell(width, depth, height, wall),
        *_walls(width, depth, height, storeys, wall),
        number_quad,
    ]
    moved = [p.transformed(pose_matrix((*center, 0.0), yaw)) for p in parts]
    return kit.add(
        "building",
        moved,
        kind=kind,
        number=number,
        color=color,
        storeys=storeys,
        street=street,
        text=text,
    )


def add_roof_sign(
    kit: WorldKit, block: SceneObject, yaw: float, text: str, color: str
) -> SceneObject:
    """Add a billboard with ``text`` standing on ``block``'s roof, facing ``yaw``.

    Attributes: ``text``, ``color`` (of the board) and ``building`` (the block's name).
    """
    low, high = block.bounds()
    cx, cy = float(low[0] + high[0]) / 2, float(low[1] + high[1]) / 2
    top = float(high[2])
    span = float(min(high[0] - low[0], high[1] - low[1]))
    board_w = min(12.0, span * 0.8)
    paper = PALETTE[color]
    ink = (245, 245, 240) if sum(paper) < 380 else (20, 20, 20)
    texture = label_texture(text, ink=ink, paper=paper, aspect=4.0)
    c, s = np.cos(np.radians(yaw)), np.sin(np.radians(yaw))
    at = (cx + c * span * 0.25, cy + s * span * 0.25, top + 2.0)
    # Two faces a few centimetres apart, so neither shows through the other mirrored.
    front = facing_quad(
        (at[0] + c * 0.03, at[1] + s * 0.03, at[2]), yaw, board_w, board_w / 4, texture
    )
    back = facing_quad(
        (at[0] - c * 0.03, at[1] - s * 0.03, at[2]), yaw + 180.0, board_w, board_w / 4, texture
    )
    legs = [
        box((0.2, 0.2, 2.0), (at[0] - s * k, at[1] + c * k, top + 0.5), (60, 60, 64))
        for k in (-board_w / 3, board_w / 3)
    ]
    return kit.add("sign", [front, back, merge(legs)], text=text, color=color, building=block.name)
