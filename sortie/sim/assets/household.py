"""Household furniture and small objects for the ``apartment`` world.

Every piece is built in its own frame: centred on the origin, standing on ``z = 0``, its front
facing ``+y``. A receptacle is one static body with a top (or seat, or basin) that things rest
on; a container is a static body (a box with an open front and an inside floor) plus a door
(its front panel) that swings on a side hinge, or, for a drawer, slides out. Items are small
portable things (< 0.35 m) standing on their base at ``z = 0``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from sortie.sim.assets.props import PALETTE, shade
from sortie.sim.linear import product
from sortie.sim.mesh import Color, Mesh, box, cylinder, merge, pose_matrix, sphere

Rect = tuple[float, float, float, float]
"""An axis-aligned rectangle ``(x0, y0, x1, y1)`` in metres."""

PANEL = 0.03  # thickness of container walls and doors
REACH = 0.66
"""Distance from a piece's front (or side) to where a robot base stands to reach it."""
DRAWER_SLIDE = 0.18
BASE = 0.3
"""Radius of the robot base the approach points are made for."""


@dataclass(frozen=True, slots=True)
class Piece:
    """One piece of furniture in its own frame (front along +y).

    Attributes:
        kind: furniture kind, e.g. ``counter``.
        body: the static meshes.
        footprint: the ground rectangle of body and closed door.
        surface: where items rest (the top, seat, basin or inside floor).
        surface_z: height of that surface.
        approaches: places a robot base may stand to reach it, best first, as (x, y).
        door: the door's meshes (containers only).
        open_transform: moves the closed door to its open place (containers only).
        swing: ground rectangle the open door takes (containers only).
        headroom: free height above the surface (inside a container), inf on open tops.
        sweep: ground rectangle the door passes through while it opens (containers only).
    """

    kind: str
    body: tuple[Mesh, ...]
    footprint: Rect
    surface: Rect
    surface_z: float
    approaches: tuple[tuple[float, float], ...]
    door: tuple[Mesh, ...] = ()
    open_transform: NDArray[np.float64] | None = None
    swing: Rect | None = None
    headroom: float = math.inf
    sweep: Rect | None = None


@dataclass(frozen=True, slots=True)
class FurnitureKind:
    """Size ranges and looks of one furniture kind."""

    width: tuple[float, float]
    depth: float
    height: float
    colours: tuple[str, ...]
    materials: tuple[str, ...]


FURNITURE: dict[str, FurnitureKind] = {
    "counter": FurnitureKind(
        (1.2, 1.8), 0.6, 0.9, ("white", "grey", "beige", "dark grey"), ("marble", "laminate")
    ),
    "sink": FurnitureKind((0.8, 0.9), 0.6, 0.9, ("white", "grey", "cream"), ("ceramic", "steel")),
    "table": FurnitureKind((1.2, 1.6), 0.8, 0.75, ("brown", "beige", "white", "black"), ("wood",)),
    "coffee_table": FurnitureKind(
        (0.9, 1.2), 0.55, 0.42, ("brown", "black", "white"), ("wood", "glass")
    ),
    "sofa": FurnitureKind(
        (1.7, 2.1),
        0.85,
        0.85,
        ("grey", "navy", "beige", "sage green", "dark red", "teal"),
        ("fabric", "leather"),
    ),
    "bed": FurnitureKind(
        (1.2, 1.6), 2.0, 0.55, ("white", "light blue", "cream", "pink", "grey"), ("fabric",)
    ),
    "nightstand": FurnitureKind((0.45, 0.5), 0.4, 0.55, ("brown", "white", "beige"), ("wood",)),
    "desk": FurnitureKind((1.1, 1.4), 0.6, 0.75, ("brown", "white", "black"), ("wood", "metal")),
    "shelf": FurnitureKind((0.8, 1.2), 0.35, 1.1, ("brown", "white", "black", "beige"), ("wood",)),
    "tv_stand": FurnitureKind((1.2, 1.6), 0.42, 0.5, ("black", "brown", "white"), ("wood",)),
    "fridge": FurnitureKind((0.65, 0.75), 0.65, 1.8, ("white", "silver", "black"), ("metal",)),
    "cabinet": FurnitureKind((0.7, 0.9), 0.5, 0.95, ("brown", "white", "beige", "grey"), ("wood",)),
    "drawer": FurnitureKind((0.7, 0.9), 0.5, 0.8, ("brown", "white", "beige"), ("wood",)),
    "microwave": FurnitureKind((0.5, 0.6), 0.45, 1.2, ("white", "silver", "black"), ("metal",)),
    "wardrobe": FurnitureKind((0.9, 1.1), 0.6, 2.0, ("brown", "white", "beige"), ("wood",)),
    "dishwasher": FurnitureKind((0.6, 0.6), 0.6, 0.85, ("white", "silver"), ("metal",)),
}
"""Every furniture kind: receptacles first, then containers."""

CONTAINERS = ("fridge", "cabinet", "drawer", "microwave", "wardrobe", "dishwasher")
RECEPTACLES = tuple(k for k in FURNITURE if k not in CONTAINERS)
CENTRE_PIECES = ("table", "coffee_table")
"""Kinds that stand free in a room (the rest stand with their back to a wall)."""

INSIDE_FLOOR = {
    "fridge": 1.0,
    "cabinet": 0.45,
    "drawer": 0.5,
    "microwave": 0.93,
    "wardrobe": 1.1,
    "dishwasher": 0.3,
}
"""Height of each container's inside floor (a shelf, for the tall ones)."""


def build_piece(kind: str, width: float, colour: str, hinge: int = -1) -> Piece:
    """Return furniture ``kind`` of ``width`` in ``colour``; ``hinge`` -1/+1: door on left/right."""
    spec = FURNITURE[kind]
    rgb = PALETTE[colour]
    if kind in CONTAINERS:
        return _container(kind, width, spec, rgb, hinge)
    return replace(RECEPTACLE_BUILDERS[kind](width, spec, rgb), kind=kind)


# --- receptacles ---------------------------------------------------------------------------


def _front(width: float, depth: float) -> tuple[tuple[float, float], ...]:
    return ((0.0, depth / 2 + REACH),)


def _around(width: float, depth: float) -> tuple[tuple[float, float], ...]:
    return (
        (0.0, depth / 2 + REACH),
        (0.0, -depth / 2 - REACH),
        (width / 2 + REACH, 0.0),
        (-width / 2 - REACH, 0.0),
    )


def _rect(width: float, depth: float, inset: float = 0.0) -> Rect:
    return (-width / 2 + inset, -depth / 2 + inset, width / 2 - inset, depth / 2 - inset)


def _table(width: float, spec: FurnitureKind, rgb: Color) -> Piece:
    d, h = spec.depth, spec.height
    legs = [
        box(
            (0.05, 0.05, h - 0.04),
            (sx * (width / 2 - 0.06), sy * (d / 2 - 0.06), (h - 0.04) / 2),
            shade(rgb, 0.7),
        )
        for sx in (-1, 1)
        for sy in (-1, 1)
    ]
    top = box((width, d, 0.04), (0, 0, h - 0.02), rgb)
    return Piece(
        "", (merge([top, *legs]),), _rect(width, d), _rect(width, d, 0.05), h, _around(width, d)
    )


def _counter(width: float, spec: FurnitureKind, rgb: Color) -> Piece:
    d, h = spec.depth, spec.height
    base = box((width, d - 0.04, h - 0.04), (0, -0.02, (h - 0.04) / 2), shade(rgb, 0.8))
    top = box((width, d, 0.04), (0, 0, h - 0.02), rgb)
    kick = box((width - 0.02, 0.02, 0.1), (0, d / 2 - 0.05, 0.05), shade(rgb, 0.5))
    return Piece(
        "", (merge([base, top, kick]),), _rect(width, d), _rect(width, d, 0.05), h, _front(width, d)
    )


def _sink(width: float, spec: FurnitureKind, rgb: Color) -> Piece:
    d, h = spec.depth, spec.height
    basin_z = h - 0.12
    bx, by0, by1 = width / 2 - 0.12, -d / 2 + 0.14, d / 2 - 0.06
    base = box((width, d, basin_z), (0, 0, basin_z / 2), shade(rgb, 0.8))
    rim_h = h - basin_z
    rims = [
        box((width, by0 + d / 2, rim_h), (0, (-d / 2 + by0) / 2, basin_z + rim_h / 2), rgb),
        box((width, d / 2 - by1, rim_h), (0, (by1 + d / 2) / 2, basin_z + rim_h / 2), rgb),
        box(
            (width / 2 - bx, by1 - by0, rim_h),
            (-(bx + width / 2) / 2, (by0 + by1) / 2, basin_z + rim_h / 2),
            rgb,
        ),
        box(
            (width / 2 - bx, by1 - by0, rim_h),
            ((bx + width / 2) / 2, (by0 + by1) / 2, basin_z + rim_h / 2),
            rgb,
        ),
    ]
    steel = PALETTE["silver"]
    tap = merge(
        [
            cylinder(0.02, 0.25, (0, -d / 2 + 0.07, h), steel, 6),
            box((0.03, 0.14, 0.03), (0, -d / 2 + 0.12, h + 0.24), steel),
        ]
    )
    surface = (-bx + 0.02, by0 + 0.02, bx - 0.02, by1 - 0.02)
    return Piece(
        "", (merge([base, *rims]), tap), _rect(width, d), surface, basin_z, _front(width, d)
    )


def _sofa(width: float, spec: FurnitureKind, rgb: Color) -> Piece:
    d = spec.depth
    seat = box((width, d - 0.2, 0.45), (0, 0.1, 0.225), rgb)
    back = box((width, 0.2, spec.height), (0, -d / 2 + 0.1, spec.height / 2), shade(rgb, 0.85))
    arms = [
        box((0.16, d - 0.2, 0.62), (sx * (width / 2 - 0.08), 0.1, 0.31), shade(rgb, 0.9))
        for sx in (-1, 1)
    ]
    surface = (-width / 2 + 0.2, -d / 2 + 0.24, width / 2 - 0.2, d / 2 - 0.04)
    return Piece(
        "", (merge([seat, back, *arms]),), _rect(width, d), surface, 0.45, _front(width, d)
    )


def _bed(width: float, spec: FurnitureKind, rgb: Color) -> Piece:
    d, top = spec.depth, spec.height
    wood = PALETTE["brown"]
    frame = box((width, d, 0.3), (0, 0, 0.15), wood)
    mattress = box((width - 0.06, d - 0.1, top - 0.3), (0, 0.03, 0.3 + (top - 0.3) / 2), rgb)
    head = box((width, 0.06, 1.0), (0, -d / 2 + 0.03, 0.5), shade(wood, 0.8))
    pillow = box((width * 0.7, 0.35, 0.1), (0, -d / 2 + 0.28, top + 0.05), PALETTE["white"])
    surface = (-width / 2 + 0.1, -d / 2 + 0.55, width / 2 - 0.1, d / 2 - 0.1)
    sides = ((width / 2 + REACH, 0.2), (-width / 2 - REACH, 0.2), (0.0, d / 2 + REACH))
    return Piece("", (merge([frame, mattress, head]), pillow), _rect(width, d), surface, top, sides)


def _cupboard_top(width: float, spec: FurnitureKind, rgb: Color) -> Piece:
    """A nightstand: a closed box with a knob."""
    d, h = spec.depth, spec.height
    body = box((width, d, h), (0, 0, h / 2), rgb)
    knob = box((0.05, 0.02, 0.03), (0, d / 2 + 0.01, h - 0.12), shade(rgb, 0.5))
    return Piece(
        "",
        (merge([body, knob]),),
        _rect(width, d + 0.04),
        _rect(width, d, 0.04),
        h,
        _front(width, d),
    )


def _shelf(width: float, spec: FurnitureKind, rgb: Color) -> Piece:
    d, h = spec.depth, spec.height
    t = 0.03
    parts = [
        box((width, t, h), (0, -d / 2 + t / 2, h / 2), shade(rgb, 0.8)),
        *(box((t, d, h), (sx * (width / 2 - t / 2), 0, h / 2), rgb) for sx in (-1, 1)),
        *(box((width, d, t), (0, 0, z), rgb) for z in (0.05, h * 0.36, h * 0.68, h - t / 2)),
    ]
    return Piece("", (merge(parts),), _rect(width, d), _rect(width, d, 0.04), h, _front(width, d))


def _tv_stand(width: float, spec: FurnitureKind, rgb: Color) -> Piece:
    d, h = spec.depth, spec.height
    body = box((width, d, h), (0, 0, h / 2), rgb)
    screen = box((width * 0.8, 0.04, 0.55), (0, -d / 2 + 0.05, h + 0.33), PALETTE["black"])
    foot = box((0.3, 0.15, 0.05), (0, -d / 2 + 0.08, h + 0.025), PALETTE["dark grey"])
    surface = (-width / 2 + 0.04, -d / 2 + 0.17, width / 2 - 0.04, d / 2 - 0.04)
    return Piece("", (body, merge([screen, foot])), _rect(width, d), surface, h, _front(width, d))


RECEPTACLE_BUILDERS: dict[str, Callable[[float, FurnitureKind, Color], Piece]] = {
    "counter": _counter,
    "sink": _sink,
    "table": _table,
    "coffee_table": _table,
    "sofa": _sofa,
    "bed": _bed,
    "nightstand": _cupboard_top,
    "desk": _table,
    "shelf": _shelf,
    "tv_stand": _tv_stand,
}


# --- containers ----------------------------------------------------------------------------


def _shell(width: float, depth: float, z0: float, z1: float, rgb: Color) -> list[Mesh]:
    """Return a box open at the front between heights ``z0`` and ``z1`` (back, sides, top)."""
    h = z1 - z0
    inner = shade(rgb, 1.15)
    return [
        box((width, PANEL, h), (0, -depth / 2 + PANEL / 2, z0 + h / 2), inner),
        *(
            box((PANEL, depth, h), (sx * (width / 2 - PANEL / 2), 0, z0 + h / 2), rgb)
            for sx in (-1, 1)
        ),
        box((width, depth, PANEL), (0, 0, z1 - PANEL / 2), rgb),
    ]


def _container(kind: str, width: float, spec: FurnitureKind, rgb: Color, hinge: int) -> Piece:
    d = spec.depth
    floor_z = INSIDE_FLOOR[kind]
    parts, base, top = _container_body(kind, width, spec, rgb)
    front = d / 2 + PANEL
    door_z0 = base if base > 0 else 0.02
    door = box(
        (width, PANEL, top - door_z0), (0, d / 2 + PANEL / 2, (door_z0 + top) / 2), shade(rgb, 0.92)
    )
    inside = (
        -width / 2 + PANEL + 0.02,
        -d / 2 + PANEL + 0.02,
        width / 2 - PANEL - 0.02,
        d / 2 - 0.03,
    )
    shape = _Shape(width, d, floor_z, top, front, door_z0, inside, rgb)
    if kind == "drawer":
        return _drawer(kind, shape, parts, door)
    handle_x = -hinge * (width / 2 - 0.06)
    handle_z = min(door_z0 + (top - door_z0) * 0.6, 1.2)
    handle = box((0.03, 0.03, 0.12), (handle_x, front + 0.015, handle_z), PALETTE["dark grey"])
    return _hinged(kind, shape, parts, merge([door, handle]), hinge)


@dataclass(frozen=True, slots=True)
class _Shape:
    """A container's measures: body, inside floor, top, front face, door bottom, inside."""

    width: float
    depth: float
    floor_z: float
    top: float
    front: float
    door_z0: float
    inside: Rect
    rgb: Color


def _container_body(
    kind: str, width: float, spec: FurnitureKind, rgb: Color
) -> tuple[list[Mesh], float, float]:
    """Return a container's fixed parts, the height its body starts at, and its top."""
    d, h = spec.depth, spec.height
    floor_z = INSIDE_FLOOR[kind]
    base = 0.0
    parts: list[Mesh] = []
    if kind == "microwave":  # a small cart under the oven
        base = floor_z - PANEL
        parts.append(box((width, d, base), (0, 0, base / 2), PALETTE["dark grey"]))
        top = base + 0.3
    elif kind == "drawer":  # a chest whose top drawer is the container
        base = floor_z - PANEL
        parts.append(box((width, d, base), (0, 0, base / 2), rgb))
        parts.append(box((0.12, 0.02, 0.03), (0, d / 2 + 0.01, base / 2), shade(rgb, 0.5)))
        top = h
    else:
        top = h
    parts += _shell(width, d, base, top, rgb)
    parts.append(
        box((width, d, PANEL), (0, 0, floor_z - PANEL / 2), shade(rgb, 1.1))
    )  # inside floor
    if base == 0.0 and floor_z > 0.2:
        parts.append(box((width, d, PANEL), (0, 0, 0.05), rgb))  # bottom under the shelf
    return parts, base, top


def _drawer(kind: str, shape: _Shape, parts: list[Mesh], drawer_front: Mesh) -> Piece:
    """Return a chest whose top drawer slides out, carrying its handle and sides."""
    width, d, front, rgb = shape.width, shape.depth, shape.front, shape.rgb
    handle = box(
        (0.14, 0.03, 0.03),
        (0, front + 0.015, (shape.door_z0 + shape.top) / 2),
        PALETTE["dark grey"],
    )
    sides = [
        box(
            (0.015, d - 0.08, 0.12),
            (sx * (width / 2 - 0.055), 0.0, shape.floor_z + 0.06),
            shade(rgb, 1.1),
        )
        for sx in (-1, 1)
    ]
    move = pose_matrix((0.0, DRAWER_SLIDE, 0.0))
    swing = (-width / 2, d / 2, width / 2, front + PANEL + DRAWER_SLIDE)  # with the handle
    inside = (-width / 2 + 0.08, shape.inside[1], width / 2 - 0.08, shape.inside[3])
    approach: tuple[tuple[float, float], ...] = ((0.0, swing[3] + REACH),)
    headroom = shape.top - PANEL - shape.floor_z
    return Piece(
        kind,
        (merge(parts),),
        (-width / 2, -d / 2, width / 2, front),
        inside,
        shape.floor_z,
        approach,
        (merge([drawer_front, handle, *sides]),),
        move,
        swing,
        headroom,
        swing,
    )


def _hinged(kind: str, shape: _Shape, parts: list[Mesh], door: Mesh, hinge: int) -> Piece:
    """Return a container whose door turns on a side hinge at the front corner.

    The door turns 90 degrees out to lie beside the body.
    """
    width, d = shape.width, shape.depth
    hx = hinge * width / 2
    turn = pose_matrix((0.0, 0.0, 0.0), -90.0 * hinge)
    hinge_point = np.array([hx, d / 2, 0.0])
    turn[:3, 3] = hinge_point - product(turn[:3, :3], hinge_point)
    edge = hx + hinge * 2 * PANEL  # the panel and its handle
    swing = (min(hx, edge), d / 2, max(hx, edge), d / 2 + width)
    sweep = (min(hx, hx - hinge * width), d / 2, max(hx, hx - hinge * width), d / 2 + width)
    approach = tuple(
        (hx - hinge * _beside(width, out), d / 2 + out)
        for out in (PANEL + REACH, PANEL + REACH + 0.15)
    )
    return Piece(
        kind,
        (merge(parts),),
        (-width / 2, -d / 2, width / 2, shape.front),
        shape.inside,
        shape.floor_z,
        approach,
        (door,),
        turn,
        swing,
        shape.top - PANEL - shape.floor_z,
        sweep,
    )


def _beside(width: float, out: float) -> float:
    """Return how far along the front from the hinge a base stands, ``out`` in front of it.

    Far enough that the open door is ``REACH`` away, and that the door, turning, passes the
    base's edge (radius 0.3) with 5 cm to spare.
    """
    return max(REACH + 2 * PANEL, math.sqrt(max((width + BASE + 0.05) ** 2 - out**2, 0.0)))


# --- items ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ItemKind:
    """One kind of small object: its size, looks and the furniture it is found on or in."""

    size: tuple[float, float, float]
    colours: tuple[str, ...]
    materials: tuple[str, ...]
    hosts: tuple[str, ...]


KITCHEN = ("counter", "table", "sink", "cabinet", "dishwasher", "shelf")
LIVING = ("coffee_table", "tv_stand", "shelf", "desk", "table", "nightstand", "drawer")
FOOD = ("counter", "table", "fridge", "coffee_table")
BATH = ("sink", "shelf", "cabinet", "counter")
BRIGHT = ("red", "blue", "green", "yellow", "white", "black", "orange", "pink", "purple", "teal")

ITEMS: dict[str, ItemKind] = {
    "apple": ItemKind((0.08, 0.08, 0.08), ("red", "green", "yellow"), ("fruit",), FOOD),
    "banana": ItemKind((0.19, 0.05, 0.05), ("yellow",), ("fruit",), FOOD),
    "orange": ItemKind((0.08, 0.08, 0.08), ("orange",), ("fruit",), FOOD),
    "bread": ItemKind((0.24, 0.11, 0.1), ("beige", "brown"), ("food",), ("counter", "table")),
    "jar": ItemKind(
        (0.09, 0.09, 0.14), ("red", "yellow", "orange", "green"), ("glass",), (*FOOD, "cabinet")
    ),
    "can": ItemKind(
        (0.07, 0.07, 0.12), ("red", "silver", "green", "blue"), ("metal",), (*FOOD, "cabinet")
    ),
    "bottle": ItemKind(
        (0.07, 0.07, 0.27), ("green", "blue", "white", "dark green"), ("glass", "plastic"), FOOD
    ),
    "mug": ItemKind(
        (0.12, 0.09, 0.1), BRIGHT, ("ceramic",), (*KITCHEN, "microwave", "desk", "coffee_table")
    ),
    "cup": ItemKind(
        (0.1, 0.1, 0.1),
        ("white", "red", "blue", "green"),
        ("plastic", "paper", "glass"),
        (*KITCHEN, "microwave"),
    ),
    "bowl": ItemKind(
        (0.17, 0.17, 0.06),
        ("white", "blue", "red", "cream"),
        ("ceramic", "plastic"),
        (*KITCHEN, "microwave"),
    ),
    "plate": ItemKind(
        (0.24, 0.24, 0.02), ("white", "blue", "cream"), ("ceramic",), (*KITCHEN, "microwave")
    ),
    "spoon": ItemKind((0.16, 0.035, 0.015), ("silver",), ("metal",), (*KITCHEN, "drawer")),
    "fork": ItemKind((0.18, 0.03, 0.015), ("silver",), ("metal",), (*KITCHEN, "drawer")),
    "knife": ItemKind(
        (0.22, 0.025, 0.015),
        ("silver", "black"),
        ("metal",),
        ("counter", "drawer", "dishwasher", "table"),
    ),
    "pan": ItemKind(
        (0.33, 0.22, 0.06),
        ("black", "dark grey", "red"),
        ("metal",),
        ("counter", "cabinet", "sink"),
    ),
    "pot": ItemKind(
        (0.3, 0.22, 0.14), ("silver", "red", "black"), ("metal",), ("counter", "cabinet", "sink")
    ),
    "kettle": ItemKind(
        (0.22, 0.16, 0.22),
        ("silver", "white", "black", "red"),
        ("metal", "plastic"),
        ("counter", "table"),
    ),
    "sponge": ItemKind(
        (0.1, 0.07, 0.04), ("yellow", "green", "pink"), ("foam",), ("sink", "counter")
    ),
    "soap": ItemKind(
        (0.09, 0.06, 0.035), ("white", "pink", "green", "light blue"), ("soap",), BATH
    ),
    "toothbrush": ItemKind(
        (0.18, 0.02, 0.02), ("blue", "green", "pink", "white"), ("plastic",), BATH
    ),
    "towel": ItemKind(
        (0.3, 0.2, 0.06),
        ("white", "blue", "pink", "sage green", "beige"),
        ("cotton",),
        (*BATH, "bed", "wardrobe"),
    ),
    "book": ItemKind(
        (0.16, 0.23, 0.035),
        ("red", "blue", "green", "black", "yellow", "white"),
        ("paper",),
        (*LIVING, "bed", "sofa"),
    ),
    "remote": ItemKind(
        (0.05, 0.17, 0.02),
        ("black", "grey", "silver"),
        ("plastic",),
        ("coffee_table", "tv_stand", "sofa", "drawer"),
    ),
    "phone": ItemKind(
        (0.075, 0.15, 0.01), ("black", "white", "blue", "pink"), ("glass",), (*LIVING, "bed")
    ),
    "laptop": ItemKind(
        (0.32, 0.22, 0.025),
        ("silver", "black", "grey"),
        ("metal",),
        ("desk", "table", "coffee_table", "bed", "sofa"),
    ),
    "vase": ItemKind(
        (0.1, 0.1, 0.24),
        ("white", "blue", "green", "red"),
        ("glass", "ceramic"),
        ("table", "shelf", "tv_stand", "coffee_table", "nightstand"),
    ),
    "candle": ItemKind(
        (0.06, 0.06, 0.12),
        ("white", "red", "cream", "purple"),
        ("wax",),
        ("table", "shelf", "coffee_table", "nightstand", "tv_stand"),
    ),
    "toy": ItemKind(
        (0.15, 0.08, 0.09),
        ("red", "yellow", "blue", "green"),
        ("plastic", "wood"),
        ("shelf", "bed", "sofa", "coffee_table", "wardrobe"),
    ),
    "shoe": ItemKind(
        (0.28, 0.1, 0.09),
        ("black", "brown", "white", "red"),
        ("leather", "fabric"),
        ("shelf", "wardrobe"),
    ),
    "pillow": ItemKind(
        (0.34, 0.24, 0.1),
        ("white", "grey", "navy", "pink", "teal", "yellow"),
        ("fabric",),
        ("bed", "sofa", "wardrobe"),
    ),
    "glasses": ItemKind(
        (0.14, 0.05, 0.045),
        ("black", "brown", "red"),
        ("plastic", "metal"),
        ("nightstand", "desk", "drawer", "coffee_table"),
    ),
    "keys": ItemKind(
        (0.08, 0.04, 0.015),
        ("silver", "yellow"),
        ("metal",),
        ("drawer", "table", "shelf", "nightstand", "desk"),
    ),
    "wallet": ItemKind(
        (0.11, 0.09, 0.025),
        ("brown", "black"),
        ("leather",),
        ("drawer", "nightstand", "desk", "table"),
    ),
    "tissue_box": ItemKind(
        (0.22, 0.12, 0.1),
        ("white", "light blue", "pink"),
        ("cardboard",),
        ("nightstand", "shelf", "desk", "coffee_table"),
    ),
    "plant": ItemKind(
        (0.16, 0.16, 0.26), ("green",), ("ceramic",), ("shelf", "table", "desk", "tv_stand")
    ),
}
"""Every item kind; ``hosts`` are the furniture kinds it may start on or in."""


def item_radius(kind: str) -> float:
    """Return the radius of the circle that holds an item's footprint however it is turned."""
    sx, sy, _ = ITEMS[kind].size
    return math.hypot(sx, sy) / 2


def item_mesh(kind: str, colour: str) -> Mesh:
    """Return item ``kind`` in ``colour``, standing on the origin, long side along x."""
    sx, sy, sz = ITEMS[kind].size
    rgb = PALETTE[colour]
    make = ITEM_SHAPES.get(kind)
    return make(sx, sy, sz, rgb) if make else box((sx, sy, sz), (0, 0, sz / 2), rgb)


def _round(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    r = sz / 2
    stalk = box((0.008, 0.008, 0.02), (0, 0, sz + 0.005), PALETTE["brown"])
    return merge([sphere(r, (0, 0, r), rgb, 5, 8), stalk])


def _mug(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    r = sy / 2
    handle = box((sx - 2 * r, 0.015, sz * 0.6), (r + (sx - 2 * r) / 2 - 0.005, 0, sz / 2), rgb)
    return merge(
        [
            cylinder(r, sz, (-(sx - 2 * r) / 2, 0, 0), rgb, 10),
            handle.moved((-(sx - 2 * r) / 2, 0, 0)),
        ]
    )


def _vessel(top_scale: float) -> Callable[[float, float, float, Color], Mesh]:
    def make(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
        r = min(sx, sy) / 2
        return cylinder(
            r * min(1.0, 1 / top_scale), sz, (0, 0, 0), rgb, 12, r * min(1.0, top_scale)
        )

    return make


def _bottle(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    r = sx / 2
    body = cylinder(r, sz * 0.7, (0, 0, 0), rgb, 10)
    neck = cylinder(r * 0.35, sz * 0.3, (0, 0, sz * 0.7), shade(rgb, 0.8), 8)
    return merge([body, neck])


def _jar(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    r = sx / 2
    return merge(
        [
            cylinder(r, sz * 0.85, (0, 0, 0), rgb, 10),
            cylinder(r * 0.9, sz * 0.15, (0, 0, sz * 0.85), PALETTE["silver"], 10),
        ]
    )


def _pan(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    r = sy / 2
    handle = box(
        (sx - 2 * r, 0.03, 0.02), (sx / 2 - (sx - 2 * r) / 2, 0, sz - 0.01), PALETTE["black"]
    )
    return merge([cylinder(r, sz, (-sx / 2 + r, 0, 0), rgb, 12), handle])


def _pot(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    r = sy / 2
    handles = [
        box(
            (sx / 2 - r, 0.03, 0.02),
            (side * (r + (sx / 2 - r) / 2), 0, sz - 0.02),
            PALETTE["black"],
        )
        for side in (-1, 1)
    ]
    return merge([cylinder(r, sz, (0, 0, 0), rgb, 12), *handles])


def _kettle(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    r = sy / 2
    body = cylinder(r, sz * 0.8, (-sx / 2 + r, 0, 0), rgb, 10, r * 0.75)
    spout = box((sx - 2 * r, 0.025, 0.025), (sx / 2 - (sx - 2 * r) / 2, 0, sz * 0.55), rgb)
    lid = box((0.04, 0.04, sz * 0.2), (-sx / 2 + r, 0, sz * 0.9), PALETTE["black"])
    return merge([body, spout, lid])


def _candle(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    wick = box((0.006, 0.006, 0.015), (0, 0, sz - 0.0075), PALETTE["black"])
    return merge([cylinder(sx / 2, sz - 0.015, (0, 0, 0), rgb, 8), wick])


def _plant(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    pot = cylinder(sx * 0.35, sz * 0.4, (0, 0, 0), PALETTE["brown"], 8, sx * 0.42)
    leaves = sphere(sx / 2, (0, 0, sz - sx / 2), rgb, 5, 8)
    return merge([pot, leaves])


def _toy(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    body = box((sx, sy, sz * 0.5), (0, 0, sz * 0.25 + 0.02), rgb)
    cabin = box(
        (sx * 0.5, sy * 0.9, sz * 0.35),
        (-sx * 0.1, 0, sz * 0.5 + 0.02 + sz * 0.175),
        shade(rgb, 0.8),
    )
    wheels = [
        box((0.035, sy, 0.035), (side * sx * 0.32, 0, 0.0175), PALETTE["black"]) for side in (-1, 1)
    ]
    return merge([body, cabin, *wheels])


def _shoe(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    sole = box((sx, sy, 0.03), (0, 0, 0.015), PALETTE["dark grey"])
    upper = box((sx * 0.55, sy * 0.95, sz - 0.03), (-sx * 0.2, 0, 0.03 + (sz - 0.03) / 2), rgb)
    toe = box((sx * 0.45, sy * 0.9, (sz - 0.03) * 0.5), (sx * 0.27, 0, 0.03 + (sz - 0.03) / 4), rgb)
    return merge([sole, upper, toe])


def _laptop(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    base = box((sx, sy, sz * 0.6), (0, 0, sz * 0.3), rgb)
    lid = box((sx, sy, sz * 0.4), (0, 0, sz * 0.8), shade(rgb, 0.8))
    return merge([base, lid])


def _glasses(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    lenses = [
        cylinder(0.025, 0.008, (side * 0.035, 0, sz * 0.4), PALETTE["light blue"], 8)
        for side in (-1, 1)
    ]
    frame = box((sx, 0.01, 0.012), (0, 0, sz * 0.75), rgb)
    arms = [
        box((0.008, sy, 0.008), (side * (sx / 2 - 0.004), 0, sz * 0.75), rgb) for side in (-1, 1)
    ]
    legs = [
        box((0.008, 0.008, sz * 0.75), (side * (sx / 2 - 0.004), sy / 2 - 0.004, sz * 0.375), rgb)
        for side in (-1, 1)
    ]
    return merge([*lenses, frame, *arms, *legs])


def _cutlery(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    handle = box((sx * 0.65, sy * 0.45, sz), (-sx * 0.175, 0, sz / 2), rgb)
    head = box((sx * 0.35, sy, sz), (sx * 0.325, 0, sz / 2), rgb)
    return merge([handle, head])


def _toothbrush(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    handle = box((sx, sy * 0.6, sz * 0.5), (0, 0, sz * 0.25), rgb)
    bristles = box((sx * 0.2, sy, sz * 0.5), (sx * 0.38, 0, sz * 0.75), PALETTE["white"])
    return merge([handle, bristles])


def _tissue_box(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    tissue = box((0.06, 0.04, 0.03), (0, 0, sz + 0.015), PALETTE["white"])
    return merge([box((sx, sy, sz), (0, 0, sz / 2), rgb), tissue])


def _remote(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    buttons = box((sx * 0.5, sy * 0.5, 0.004), (0, sy * 0.1, sz + 0.002), PALETTE["red"])
    return merge([box((sx, sy, sz), (0, 0, sz / 2), rgb), buttons])


def _book(sx: float, sy: float, sz: float, rgb: Color) -> Mesh:
    pages = box((sx - 0.01, sy - 0.01, sz * 0.8), (0.005, 0, sz / 2), PALETTE["cream"])
    covers = [box((sx, sy, sz * 0.12), (0, 0, z), rgb) for z in (sz * 0.06, sz * 0.94)]
    spine = box((0.01, sy, sz), (-sx / 2 + 0.005, 0, sz / 2), rgb)
    return merge([pages, *covers, spine])


ITEM_SHAPES: dict[str, Callable[[float, float, float, Color], Mesh]] = {
    "apple": _round,
    "orange": _round,
    "mug": _mug,
    "cup": _vessel(1.25),
    "bowl": _vessel(1.4),
    "plate": _vessel(1.0),
    "can": _vessel(1.0),
    "vase": _vessel(0.7),
    "bottle": _bottle,
    "jar": _jar,
    "pan": _pan,
    "pot": _pot,
    "kettle": _kettle,
    "candle": _candle,
    "plant": _plant,
    "toy": _toy,
    "shoe": _shoe,
    "laptop": _laptop,
    "glasses": _glasses,
    "spoon": _cutlery,
    "fork": _cutlery,
    "knife": _cutlery,
    "toothbrush": _toothbrush,
    "tissue_box": _tissue_box,
    "remote": _remote,
    "book": _book,
}
"""Kinds drawn with more than one box (the rest are plain boxes of their size)."""
