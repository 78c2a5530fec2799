"""What a drone inspects and reports on: solar panels, pylons, tanks, pads, statues, crates.

Everything is built on z = 0 at the origin and moved by the caller's ``(x, y, z)``; labels a
drone must read (pad letters, tank names, pylon numbers, crate stencils) are painted large
on surfaces that face up or outwards.
"""

from __future__ import annotations

import math

import numpy as np

from sortie.sim.assets.painted import (
    cell_texture,
    ground_label,
    label_texture,
    pad_texture,
    textured_box,
)
from sortie.sim.assets.props import PALETTE, PROUD, facing_quad, shade
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Mesh, box, cone, cylinder, merge, pose_matrix, sphere
from sortie.sim.scene import SceneObject

Point3 = tuple[float, float, float]
STEEL = (150, 152, 156)
PYLON_HEIGHT = 18.0
ARM_HALF = 3.0  # the cross arm's half width: the outer wires hang from its ends
STATUE_KINDS = ("figure", "horse", "obelisk")
STATUE_COLORS = {
    "bronze": (140, 96, 52),
    "white": (226, 224, 216),
    "gold": (212, 170, 50),
    "grey": (140, 140, 142),
}
CRATE_LABELS = ("MED", "FOOD", "WATER", "TOOLS", "PARTS")
CRATE_COLORS = ("blue", "red", "orange", "green", "yellow", "brown")


def add_solar_panel(
    kit: WorldKit,
    position: Point3,
    yaw: float,
    panels: int = 4,
    damaged: bool = False,
    site: str = "",
) -> SceneObject:
    """Add a row of ``panels`` panels on a frame, tilted 25 degrees towards ``yaw``.

    A damaged row has one cracked panel with a dark scorch. Attributes: ``kind``,
    ``panels``, ``condition`` (``ok``/``damaged``) and ``site``.
    """
    parts: list[Mesh] = []
    for i in range(panels):
        texture = cell_texture(damaged=damaged and i == panels // 2)
        panel = textured_box((1.0, 1.6, 0.05), (0.0, 0.0, 0.0), texture)
        offset = (i - (panels - 1) / 2) * 1.7
        parts.append(panel.transformed(pose_matrix((0.0, offset, 1.1), 0.0, -25.0)))
    legs = [
        box((0.08, 0.08, h), (x, y, h / 2), STEEL)
        for x, h in ((-0.35, 1.25), (0.35, 0.95))
        for y in (-panels * 0.85, panels * 0.85)
    ]
    parts.append(merge(legs))
    moved = [p.transformed(pose_matrix(position, yaw)) for p in parts]
    return kit.add(
        "solar_panel",
        moved,
        kind="solar panel row",
        panels=panels,
        condition="damaged" if damaged else "ok",
        site=site,
    )


def pylon_mesh(number: str) -> list[Mesh]:
    """Return an 18 m lattice pylon (tapered legs, braces, a cross arm) and its number plate."""
    legs, braces = [], []
    for sx in (-1, 1):
        for sy in (-1, 1):
            foot, top = np.array([sx * 1.6, sy * 1.6, 0.0]), np.array([sx * 0.4, sy * 0.4, 16.0])
            legs.append(_beam(foot, top, 0.16))
    for z in (4.0, 8.0, 12.0):
        half = 1.6 - 1.2 * z / 16.0
        braces += [box((2 * half, 0.1, 0.1), (0, s * half, z), STEEL) for s in (-1, 1)]
        braces += [box((0.1, 2 * half, 0.1), (s * half, 0, z), STEEL) for s in (-1, 1)]
    arm = box((0.3, 2 * ARM_HALF, 0.3), (0.0, 0.0, 16.0), STEEL)
    peak = cone(0.5, 2.0, (0.0, 0.0, 16.0), STEEL, 4)
    insulators = [
        cylinder(0.12, 0.6, (0.0, s * ARM_HALF, 15.3), (120, 90, 60), 5) for s in (-1, 0, 1)
    ]
    plate = facing_quad((1.4 + PROUD, 0.0, 3.0), 0.0, 1.2, 0.6, label_texture(number, aspect=2.0))
    back = facing_quad((-1.4 - PROUD, 0.0, 3.0), 180.0, 1.2, 0.6, label_texture(number, aspect=2.0))
    return [merge([*legs, *braces, arm, peak, *insulators]), plate, back]


def _beam(
    a: np.ndarray, b: np.ndarray, thickness: float, color: tuple[int, int, int] = STEEL
) -> Mesh:
    """Return a square beam from point ``a`` to point ``b``."""
    d = b - a
    length = float(np.linalg.norm(d))
    yaw = math.degrees(math.atan2(d[1], d[0]))
    pitch = math.degrees(math.asin(d[2] / length))
    beam = box((length, thickness, thickness), (length / 2, 0.0, 0.0), color)
    return beam.transformed(pose_matrix(tuple(a), yaw, pitch))


def add_pylon(kit: WorldKit, position: Point3, yaw: float, number: str, line: str) -> SceneObject:
    """Add a pylon whose cross arm lies across ``yaw`` (the line's direction).

    Attributes: ``kind`` (``pylon``), ``number`` (the plate on its legs, e.g. ``P-03``),
    ``line`` (the power line it carries).
    """
    parts = [m.transformed(pose_matrix(position, yaw)) for m in pylon_mesh(number)]
    return kit.add("pylon", parts, kind="pylon", number=number, line=line)


def add_power_line(kit: WorldKit, towers: list[Point3], line: str) -> SceneObject:
    """Add the three wires hung between consecutive pylon positions (they sag 1.5 m)."""
    wires: list[Mesh] = []
    for a, b in zip(towers, towers[1:], strict=False):
        pa, pb = np.asarray(a), np.asarray(b)
        d = pb - pa
        across = np.array([-d[1], d[0], 0.0]) / max(float(np.hypot(d[0], d[1])), 1e-9)
        for s in (-1, 0, 1):
            ends = [p + across * s * ARM_HALF + np.array([0.0, 0.0, 15.0]) for p in (pa, pb)]
            middle = (ends[0] + ends[1]) / 2 - np.array([0.0, 0.0, 1.5])
            wires += [
                _beam(ends[0], middle, 0.06, (40, 40, 44)),
                _beam(middle, ends[1], 0.06, (40, 40, 44)),
            ]
    return kit.add("pylon", merge(wires), kind="power line", line=line)


def add_water_tank(
    kit: WorldKit, position: Point3, text: str, color: str = "white", legs: float = 8.0
) -> SceneObject:
    """Add a water tank on ``legs`` metres of stilts with ``text`` painted on four sides.

    Attributes: ``kind`` (``water tower`` or ``water tank``), ``text``, ``color``.
    """
    rgb = PALETTE[color]
    tank = cylinder(3.0, 4.0, (0.0, 0.0, legs), rgb, 12)
    lid = cone(3.2, 1.2, (0.0, 0.0, legs + 4.0), shade(rgb, 0.8), 12)
    stilts = (
        [
            box((0.25, 0.25, legs), (sx * 2.0, sy * 2.0, legs / 2), STEEL)
            for sx in (-1, 1)
            for sy in (-1, 1)
        ]
        if legs > 0
        else []
    )
    texture = label_texture(text, ink=(30, 40, 90), paper=rgb, aspect=3.0)
    labels = [
        facing_quad(
            (
                3.0 * math.cos(math.radians(a)) * 1.01,
                3.0 * math.sin(math.radians(a)) * 1.01,
                legs + 2.0,
            ),
            a,
            3.0,
            1.2,
            texture,
        )
        for a in (0.0, 90.0, 180.0, 270.0)
    ]
    roof = ground_label((0.0, 0.0, legs + 5.25), 0.0, 2.4, 0.8, texture)  # read from above
    parts = [merge([tank, lid, *stilts]), *labels, roof]
    kind = "water tower" if legs > 0 else "water tank"
    return kit.add(
        "water_tank", [p.moved(position) for p in parts], kind=kind, text=text, color=color
    )


def add_landing_pad(
    kit: WorldKit,
    position: Point3,
    yaw: float = 0.0,
    letter: str = "H",
    side: float = 8.0,
    number: int = 0,
) -> SceneObject:
    """Add a square landing pad, ``side`` metres, with a big ringed letter, 5 cm proud.

    Attributes: ``kind`` (``landing pad``), ``text`` (the letter) and ``number`` (0: none).
    """
    slab_mesh = box((side, side, 0.05), (0.0, 0.0, 0.025), (60, 62, 66))
    face = ground_label(
        (0.0, 0.0, 0.05 + PROUD), 90.0, side * 0.95, side * 0.95, pad_texture(letter)
    )
    parts = [p.transformed(pose_matrix(position, yaw)) for p in (slab_mesh, face)]
    return kit.add("landing_pad", parts, kind="landing pad", text=letter, number=number)


def statue_mesh(kind: str, color: tuple[int, int, int]) -> Mesh:
    """Return a statue of ``kind`` (figure, horse, obelisk) on a 1.5 m stone plinth."""
    plinth = box((2.4, 2.4, 1.5), (0.0, 0.0, 0.75), (170, 166, 156))
    if kind == "figure":
        body = [
            box((0.6, 0.8, 2.2), (0.0, 0.0, 2.6), color),
            sphere(0.35, (0.0, 0.0, 4.0), color, rings=5, segments=8),
            box((0.2, 0.2, 1.4), (0.3, 0.55, 4.1), color),
        ]
    elif kind == "horse":
        body = [
            box((2.0, 0.7, 0.8), (0.0, 0.0, 2.9), color),
            *[
                box((0.2, 0.2, 1.0), (sx * 0.7, sy * 0.25, 2.0), color)
                for sx in (-1, 1)
                for sy in (-1, 1)
            ],
            box((0.5, 0.4, 1.2), (1.0, 0.0, 3.6), color),
            box((0.7, 0.3, 0.35), (1.3, 0.0, 4.2), color),
        ]
    else:
        body = [
            cylinder(0.8, 6.0, (0.0, 0.0, 1.5), color, 4, top_radius=0.45),
            cone(0.45, 1.0, (0.0, 0.0, 7.5), color, 4),
        ]
    return merge([plinth, *body])


def add_statue(
    kit: WorldKit, position: Point3, yaw: float, kind: str, color: str, text: str
) -> SceneObject:
    """Add a statue on a plinth with a name plaque on the plinth's front and top edge.

    Attributes: ``kind`` (figure, horse or obelisk), ``color`` (bronze, white, gold,
    grey) and ``text`` (the name on its plaque).
    """
    plaque = label_texture(text.upper(), ink=(236, 226, 192), paper=(60, 50, 40), aspect=4.0)
    front = facing_quad((1.2 + PROUD, 0.0, 0.8), 0.0, 2.2, 0.55, plaque)
    parts = [statue_mesh(kind, STATUE_COLORS[color]), front]
    moved = [p.transformed(pose_matrix(position, yaw)) for p in parts]
    return kit.add("statue", moved, kind=kind, color=color, text=text)


def add_supply_crate(
    kit: WorldKit, position: Point3, yaw: float, color: str, label: str, side: float = 1.2
) -> SceneObject:
    """Add a painted supply crate with its ``label`` stencilled on the lid and the sides.

    Attributes: ``kind`` (``supply crate``), ``color`` and ``text`` (the stencil).
    """
    rgb = PALETTE[color]
    body = box((side, side, side), (0.0, 0.0, side / 2), rgb)
    texture = label_texture(label, ink=(20, 20, 20), paper=shade(rgb, 1.15), aspect=2.0)
    lid = ground_label((0.0, 0.0, side + PROUD), 0.0, side * 0.9, side * 0.45, texture)
    sides = [
        facing_quad(
            (
                side / 2 * math.cos(math.radians(a)) * 1.02,
                side / 2 * math.sin(math.radians(a)) * 1.02,
                side / 2,
            ),
            a,
            side * 0.9,
            side * 0.45,
            texture,
        )
        for a in (0.0, 180.0)
    ]
    moved = [p.transformed(pose_matrix(position, yaw)) for p in (body, lid, *sides)]
    return kit.add("crate", moved, kind="supply crate", color=color, text=label)
