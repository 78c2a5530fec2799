"""Low-poly animals a drone can tell apart from above: elephant, rhino, zebra, giraffe, deer.

Each is built standing in a local frame (feet at z = 0, facing +x) from a few boxes, cones
and cylinders, well under 150 triangles. What tells them apart from 30 m up is size, colour
and coat: the elephant is big and grey with wide ears, the rhino low and grey with horns, the
zebra striped, the giraffe tall and patched, the deer small, brown and antlered.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sortie.sim.assets.painted import patch_texture, stripe_texture, textured_box
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Color, Mesh, box, cone, cylinder, merge, pose_matrix
from sortie.sim.scene import SceneObject

SPECIES = ("elephant", "rhino", "zebra", "giraffe", "deer")
COLORS = {
    "elephant": "grey",
    "rhino": "grey",
    "zebra": "black and white",
    "giraffe": "yellow with brown patches",
    "deer": "brown",
}
ELEPHANT: Color = (132, 128, 124)
RHINO: Color = (112, 106, 98)
TAN: Color = (214, 176, 110)
DEER: Color = (150, 98, 56)
DARK: Color = (40, 34, 30)


def _legs(half_x: float, half_y: float, height: float, radius: float, color: Color) -> list[Mesh]:
    """Return four legs standing on z = 0 at the corners of a ``2 half_x`` by ``2 half_y`` body."""
    return [
        cylinder(radius, height, (sx * half_x, sy * half_y, 0.0), color, 6)
        for sx in (-1, 1)
        for sy in (-1, 1)
    ]


def _tilted(mesh: Mesh, at: tuple[float, float, float], pitch: float) -> Mesh:
    """Return ``mesh`` (built around the origin) pitched nose-up by ``pitch`` and moved."""
    return mesh.transformed(pose_matrix(at, 0.0, pitch))


def elephant() -> list[Mesh]:
    """Return a 3.2 m elephant: big grey body, wide ears, a trunk to the ground, white tusks."""
    body = box((3.2, 1.8, 1.7), (0.0, 0.0, 2.35), ELEPHANT)
    head = box((1.0, 1.2, 1.2), (1.9, 0.0, 2.8), ELEPHANT)
    ears = [box((0.12, 1.1, 1.4), (1.55, side * 1.05, 2.8), (150, 140, 136)) for side in (-1, 1)]
    trunk = cylinder(0.2, 2.2, (2.5, 0.0, 0.4), ELEPHANT, 6, top_radius=0.28)
    tusks = [
        _tilted(
            box((0.9, 0.1, 0.1), (0.45, 0.0, 0.0), (240, 236, 220)), (2.3, side * 0.35, 2.1), 30.0
        )
        for side in (-1, 1)
    ]
    tail = box((0.08, 0.08, 1.0), (-1.65, 0.0, 2.2), ELEPHANT)
    return [merge([body, head, *ears, trunk, *tusks, tail, *_legs(1.1, 0.6, 1.6, 0.32, ELEPHANT)])]


def rhino() -> list[Mesh]:
    """Return a 3 m rhino: a low heavy grey body, a drooping head with two horns."""
    body = box((2.8, 1.3, 1.1), (0.0, 0.0, 1.15), RHINO)
    head = _tilted(box((1.0, 0.65, 0.6), (0.5, 0.0, 0.0), RHINO), (1.35, 0.0, 1.05), -20.0)
    horns = [
        cone(0.16, 0.6, (2.15, 0.0, 0.95), (210, 200, 180), 6),
        cone(0.11, 0.35, (1.85, 0.0, 1.1), (210, 200, 180), 6),
    ]
    ears = [box((0.1, 0.12, 0.25), (1.4, side * 0.25, 1.55), RHINO) for side in (-1, 1)]
    return [merge([body, head, *horns, *ears, *_legs(0.95, 0.45, 0.65, 0.22, RHINO)])]


def zebra() -> list[Mesh]:
    """Return a 2.2 m zebra: a striped body and neck, white legs, a black mane and muzzle."""
    coat = stripe_texture()
    body = textured_box((1.9, 0.62, 0.7), (0.0, 0.0, 1.15), coat)
    neck = _tilted(textured_box((0.9, 0.3, 0.38), (0.45, 0.0, 0.0), coat), (0.8, 0.0, 1.35), 50.0)
    head = box((0.55, 0.24, 0.26), (1.45, 0.0, 1.95), (220, 220, 214))
    muzzle = box((0.2, 0.22, 0.22), (1.78, 0.0, 1.92), DARK)
    mane = _tilted(box((0.9, 0.06, 0.1), (0.45, 0.0, 0.22), DARK), (0.8, 0.0, 1.35), 50.0)
    tail = box((0.06, 0.06, 0.6), (-1.0, 0.0, 1.2), DARK)
    legs = _legs(0.7, 0.2, 0.85, 0.07, (226, 226, 220))
    return [body, neck, merge([head, muzzle, mane, tail, *legs])]


def giraffe() -> list[Mesh]:
    """Return a 5 m giraffe: a patched body on long legs, a long patched neck, a small head."""
    coat = patch_texture()
    body = textured_box((2.0, 0.8, 1.0), (0.0, 0.0, 2.2), coat)
    neck = _tilted(textured_box((2.6, 0.35, 0.4), (1.3, 0.0, 0.0), coat), (0.8, 0.0, 2.5), 62.0)
    head = box((0.65, 0.28, 0.3), (2.3, 0.0, 4.85), TAN)
    horns = [box((0.06, 0.06, 0.25), (2.1, side * 0.08, 5.1), DARK) for side in (-1, 1)]
    legs = _legs(0.75, 0.28, 1.75, 0.09, TAN)
    return [body, neck, merge([head, *horns, *legs])]


def deer() -> list[Mesh]:
    """Return a 1.6 m deer: a slim brown body, a white tail patch and branching antlers."""
    body = box((1.4, 0.45, 0.55), (0.0, 0.0, 1.05), DEER)
    neck = _tilted(box((0.6, 0.22, 0.25), (0.3, 0.0, 0.0), DEER), (0.55, 0.0, 1.15), 55.0)
    head = box((0.4, 0.2, 0.22), (1.0, 0.0, 1.68), DEER)
    tail = box((0.08, 0.3, 0.3), (-0.72, 0.0, 1.1), (236, 232, 224))
    antlers = [box((0.05, 0.05, 0.5), (0.85, side * 0.12, 2.0), (96, 72, 50)) for side in (-1, 1)]
    tines = [box((0.3, 0.05, 0.05), (0.85, side * 0.12, 2.1), (96, 72, 50)) for side in (-1, 1)]
    return [merge([body, neck, head, tail, *antlers, *tines, *_legs(0.55, 0.15, 0.8, 0.05, DEER)])]


_BUILDERS: dict[str, Callable[[], list[Mesh]]] = {
    "elephant": elephant,
    "rhino": rhino,
    "zebra": zebra,
    "giraffe": giraffe,
    "deer": deer,
}


def add_animal(
    kit: WorldKit,
    species: str,
    position: tuple[float, float, float],
    yaw: float = 0.0,
    herd: str = "",
) -> SceneObject:
    """Add an animal of ``species`` standing on ``position`` (a ground point), facing ``yaw``.

    Attributes: ``species``, ``color`` (how it looks, in words) and ``herd`` (the group it
    grazes with, empty for a lone animal).
    """
    if species not in _BUILDERS:
        raise ValueError(f"animal species must be one of {', '.join(SPECIES)}, got {species!r}")
    parts = [m.moved(position, yaw) for m in _BUILDERS[species]()]
    return kit.add("animal", parts, species=species, color=COLORS[species], herd=herd)


def add_herd(
    kit: WorldKit,
    rng: np.random.Generator,
    species: str,
    center: tuple[float, float],
    count: int,
    spread: float,
    height: Callable[[float, float], float] | None = None,
    herd: str = "",
) -> list[SceneObject]:
    """Add ``count`` animals of one species around ``center``, at least 3.5 m apart."""
    placed: list[tuple[float, float]] = []
    for _ in range(count * 6):
        if len(placed) == count:
            break
        x, y = (float(v) for v in np.asarray(center) + rng.uniform(-spread, spread, 2))
        if all(
            np.hypot(x - px, y - py) >= 3.5 + (2.0 if species == "elephant" else 0.0)
            for px, py in placed
        ):
            placed.append((x, y))
    yaw = float(rng.uniform(0.0, 360.0))  # a herd faces roughly one way
    return [
        add_animal(
            kit,
            species,
            (x, y, height(x, y) if height else 0.0),
            yaw + float(rng.uniform(-40.0, 40.0)),
            herd,
        )
        for x, y in placed
    ]
