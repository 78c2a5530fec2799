"""Cars with readable licence plates, and the ambulance of rescue missions.

Vehicles are built in a local frame (front towards +x, wheels on z = 0) and then turned by
``yaw``. Plates and lettering are text textures on quads that sit just proud of the body.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from sortie.sim.assets.painted import ground_label
from sortie.sim.assets.props import PALETTE, PROUD, Footprints, facing_quad, pick
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Mesh, box, cylinder, merge, pose_matrix, slab
from sortie.sim.scene import AttributeValue, SceneObject
from sortie.sim.textures import text_texture

CAR_COLORS = (
    "red",
    "blue",
    "white",
    "black",
    "silver",
    "grey",
    "yellow",
    "green",
    "dark red",
    "navy",
    "orange",
)
PLATE_LETTERS = "ABCDEFGHJKLMNPRSTUVWXYZ"  # no I, O, Q: they read as digits
PLATE_SIZE = (0.52, 0.12)
CAR_SIZE = (4.2, 1.8)
WHEEL_RADIUS = 0.33


def random_plate(rng: np.random.Generator) -> str:
    """Return a licence plate like ``KX 472``."""
    letters = "".join(PLATE_LETTERS[int(i)] for i in rng.integers(len(PLATE_LETTERS), size=2))
    return f"{letters} {int(rng.integers(100, 1000))}"


def plate_texture(plate: str) -> np.ndarray:
    """Return the plate's image: black characters on white inside a black border."""
    return text_texture(
        plate, 128, 30, ink=(16, 16, 16), paper=(250, 250, 246), border=(16, 16, 16)
    )


def _wheels(half_base: float, half_track: float) -> list[Mesh]:
    """Return four hexagonal wheels whose axles run along y."""
    # Pitch then yaw of 90 turn the cylinder's axis (z) onto -y.
    tyre = cylinder(WHEEL_RADIUS, 0.22, (0, 0, -0.11), PALETTE["black"], 6)
    return [
        tyre.transformed(pose_matrix((sx * half_base, sy * half_track, WHEEL_RADIUS), 90.0, 90.0))
        for sx in (-1, 1)
        for sy in (-1, 1)
    ]


def _plates(texture: np.ndarray, half_length: float, z: float) -> list[Mesh]:
    """Return the front and back plate quads of a body ``2 * half_length`` long."""
    w, h = PLATE_SIZE
    front = facing_quad((half_length + PROUD, 0.0, z), 0.0, w, h, texture)
    back = facing_quad((-half_length - PROUD, 0.0, z), 180.0, w, h, texture)
    return [front, back]


def car_meshes(color: str, plate: str, roof_plate: bool = False) -> list[Mesh]:
    """Return a saloon car in its local frame: body, glass cabin, roof, lights, wheels, plates.

    ``roof_plate`` also paints the plate large on the roof, as fleet cars carry their number
    for helicopters: a drone can read it from a few metres up.
    """
    texture = plate_texture(plate)
    parts = [_car_body(color), *_plates(texture, 2.1, 0.55)]
    if roof_plate:
        # Across the roof: it reads left to right for a drone behind the car.
        parts.append(ground_label((-0.15, 0.0, 1.5 + PROUD), -90.0, 1.56, 0.42, texture))
    return parts


@functools.lru_cache(maxsize=32)
def _car_body(color: str) -> Mesh:
    """Return a car's untextured parts merged in its local frame, kept per colour (read-only).

    Every car of a colour has the same body: built once per process, each car moves a copy.
    """
    rgb = PALETTE[color]
    body = slab(-2.1, -0.88, 2.1, 0.88, 0.3, 0.95, rgb)
    cabin = slab(-1.2, -0.78, 0.9, 0.78, 0.95, 1.42, (60, 72, 86))
    roof = slab(-1.15, -0.8, 0.85, 0.8, 1.42, 1.5, rgb)
    lights = [
        facing_quad((2.1 + PROUD, side * 0.62, 0.8), 0.0, 0.3, 0.12, color=(250, 246, 210))
        for side in (-1, 1)
    ]
    lights += [
        facing_quad((-2.1 - PROUD, side * 0.62, 0.8), 180.0, 0.3, 0.12, color=(200, 20, 20))
        for side in (-1, 1)
    ]
    return _read_only(merge([body, cabin, roof, *lights, *_wheels(1.35, 0.8)]))


def _read_only(mesh: Mesh) -> Mesh:
    """Return ``mesh`` with its arrays made read-only (it is kept and shared)."""
    for array in (mesh.vertices, mesh.faces, mesh.colors):
        array.flags.writeable = False
    return mesh


def add_car(
    kit: WorldKit,
    rng: np.random.Generator,
    position: tuple[float, float],
    yaw: float = 0.0,
    color: str | None = None,
    plate: str | None = None,
    roof_plate: bool = False,
    **extra: AttributeValue,
) -> SceneObject:
    """Add a parked car facing ``yaw`` with a colour name and a readable licence plate.

    ``roof_plate`` paints the plate on the roof too; ``extra`` attributes (e.g. where it is
    parked) are stored after ``color`` and ``plate``.
    """
    color = color or pick(rng, CAR_COLORS)
    plate = plate or random_plate(rng)
    parts = [m.moved((*position, 0.0), yaw) for m in car_meshes(color, plate, roof_plate)]
    return kit.add("car", parts, color=color, plate=plate, **extra)  # type: ignore[arg-type]


def ambulance_meshes(plate: str) -> list[Mesh]:
    """Return a white box ambulance with a red stripe, AMBULANCE lettering and plates."""
    white, red = PALETTE["white"], PALETTE["red"]
    word = text_texture("AMBULANCE", 256, 48, ink=red, paper=white)
    letters = [
        facing_quad((-0.75, side * (1.05 + PROUD), 1.85), side * 90.0, 3.4, 0.64, word)
        for side in (-1, 1)
    ]
    letters.append(facing_quad((-2.8 - PROUD, 0.0, 1.85), 180.0, 1.8, 0.34, word))
    return [_ambulance_body(), *letters, *_plates(plate_texture(plate), 2.8, 0.6)]


@functools.lru_cache(maxsize=1)
def _ambulance_body() -> Mesh:
    """Return the ambulance's untextured parts merged in its local frame, kept (read-only)."""
    white, red = PALETTE["white"], PALETTE["red"]
    box_body = slab(-2.8, -1.05, 1.3, 1.05, 0.45, 2.75, white)
    cab = slab(1.3, -1.0, 2.8, 1.0, 0.45, 2.15, white)
    stripe = slab(-2.81, -1.06, 2.81, 1.06, 1.0, 1.25, red)  # 1 cm proud of the body
    screen = facing_quad((2.8 + PROUD, 0.0, 1.75), 0.0, 1.8, 0.6, color=(60, 72, 86))
    side_windows = [
        facing_quad((2.1, side * (1.0 + PROUD), 1.75), side * 90.0, 0.9, 0.55, color=(60, 72, 86))
        for side in (-1, 1)
    ]
    beacons = [box((0.3, 0.5, 0.15), (1.1, side * 0.6, 2.825), PALETTE["blue"]) for side in (-1, 1)]
    return _read_only(
        merge([box_body, cab, stripe, screen, *side_windows, *beacons, *_wheels(1.8, 0.88)])
    )


def add_ambulance(
    kit: WorldKit,
    rng: np.random.Generator,
    position: tuple[float, float],
    yaw: float = 0.0,
    plate: str | None = None,
) -> SceneObject:
    """Add an ambulance facing ``yaw``: white, red stripe, AMBULANCE on sides and back."""
    plate = plate or random_plate(rng)
    parts = [m.moved((*position, 0.0), yaw) for m in ambulance_meshes(plate)]
    return kit.add("ambulance", parts, color="white", stripe="red", text="AMBULANCE", plate=plate)


def park_cars(
    kit: WorldKit,
    rng: np.random.Generator,
    taken: Footprints,
    chance: float,
    lanes: list[tuple[tuple[float, float], tuple[float, float]]],
) -> None:
    """Park cars nose to tail along lanes ``(start, end)`` that run along x or y.

    Each 6.5 m slot holds a car with probability ``chance`` unless ``taken`` says it is busy;
    cars head from start to end.
    """
    length, width = CAR_SIZE
    for (x0, y0), (x1, y1) in lanes:
        span = float(np.hypot(x1 - x0, y1 - y0))
        dx, dy = (x1 - x0) / span, (y1 - y0) / span
        yaw = float(np.degrees(math.atan2(dy, dx)))
        hx = abs(dx) * length / 2 + abs(dy) * width / 2  # axis-aligned footprint
        hy = abs(dy) * length / 2 + abs(dx) * width / 2
        for t in np.arange(4.0, span - 4.0, 6.5):
            x, y = float(x0 + dx * t), float(y0 + dy * t)
            if rng.random() < chance and taken.fits(x - hx, y - hy, x + hx, y + hy, gap=0.3):
                taken.reserve(x - hx, y - hy, x + hx, y + hy)
                add_car(kit, rng, (x, y), yaw)
