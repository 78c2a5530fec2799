"""``tower``: an office building of several floors joined by turning stairs (rescue L5).

Each floor holds a hall at both ends and rooms along a central corridor, reached through open
doorways. Stairs climb inside walled stairwells at the ends, alternating west and east from
floor to floor, so the slab above every stairwell is open and the one above that is solid:
a walker on the stairs always has the full storey height over its head.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sortie.sim.assets.climbs import Stairwell, stairwell, stairwell_size
from sortie.sim.assets.furniture import furnish
from sortie.sim.assets.structures import Rect, floor_slab, jitter_color, slab_with_holes, wall
from sortie.sim.assets.terrain import Circle
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Color
from sortie.sim.scene import Scene
from sortie.sim.worlds.base import CLUTTER, LIGHTING, Param, ParamValue, world

DEPTH = 16.0
"""Building depth (y) in metres; its length (x) is the ``size`` parameter."""
CORRIDOR = 1.2
"""Half the corridor's width."""
SLAB = 0.2
WALL_GAP = 0.1
"""Gap between inner walls and the slab above, where the top-down map cuts."""
HALL = 2.5
"""Free floor in front of each stairwell's mouth."""
APRON = 8.0


@world(
    "tower",
    "multi-floor office building joined by stairs through stairwells (rescue L5)",
    (
        Param("size", 26.0, "length of the building in metres", 22.0, 40.0),
        Param("floors", 3, "number of floors", 2, 4),
        CLUTTER,
        LIGHTING,
    ),
)
def build(kit: WorldKit, rng: np.random.Generator, params: Mapping[str, ParamValue]) -> Scene:
    """Build ``floors`` storeys of 3.5-4 m each, with a ceiling over the top one."""
    half_x, half_y = float(params["size"]) / 2, DEPTH / 2
    count = int(params["floors"])
    levels = np.concatenate([[0.0], np.cumsum(np.round(rng.uniform(3.5, 4.0, count), 2))])
    floor_color = jitter_color(rng, (170, 160, 140), 10)
    wall_color = jitter_color(rng, (215, 210, 195), 10)
    footprint = (-half_x, -half_y, half_x, half_y)
    wells: list[Stairwell] = []
    for k in range(count):
        z, top = float(levels[k]), float(levels[k + 1])
        holes = [wells[-1].opening] if wells else []
        kit.add(
            "floor",
            slab_with_holes(footprint, holes, z, floor_color, SLAB),
            level=k,
            height=round(z, 3),
        )
        _storey(kit, rng, footprint, z, top, wall_color, float(params["clutter"]), k)
        if k < count - 1:
            wells.append(_stairs_up(kit, half_x, z, top, west=k % 2 == 0))
    top = float(levels[count])
    kit.add("ceiling", floor_slab(*footprint, top, (230, 230, 225), SLAB))
    _grounds(kit, footprint)
    bounds = (-half_x - APRON, -half_y - APRON, half_x + APRON, half_y + APRON)
    cut = float(levels[1]) - SLAB - WALL_GAP / 2
    return kit.scene(bounds, str(params["lighting"]), topdown_cut=cut)


def _stairs_up(kit: WorldKit, half_x: float, z0: float, z1: float, west: bool) -> Stairwell:
    """Add a stairwell against the west or east end wall, its mouth facing the building."""
    length = stairwell_size(z1 - z0)[0]
    inner = half_x - 0.1  # inner face of the end wall
    if west:
        return stairwell(kit, (-inner + length, 0.0), 180.0, z0, z1)
    return stairwell(kit, (inner - length, 0.0), 0.0, z0, z1)


def _storey(
    kit: WorldKit,
    rng: np.random.Generator,
    footprint: Rect,
    z: float,
    top: float,
    color: Color,
    clutter: float,
    level: int,
) -> None:
    """Add one storey's outer walls, rooms and furniture between ``z`` and ``top``."""
    x0, y0, x1, y1 = footprint
    height = top - z - SLAB
    entrance = [(stairwell_size(4.0)[0] + 1.5, 1.6, 2.4)] if level == 0 else None
    kit.add("wall", wall((x0, y0), (x1, y0), z, height, color, entrance))
    kit.add("wall", wall((x1, y0), (x1, y1), z, height, color))
    kit.add("wall", wall((x1, y1), (x0, y1), z, height, color))
    kit.add("wall", wall((x0, y1), (x0, y0), z, height, color))
    reach = stairwell_size(4.0)[0] + HALL + 0.1
    for rooms in _room_rows(rng, x0 + reach, x1 - reach, y0, y1):
        _rooms(kit, rng, rooms, z, height - WALL_GAP, color, clutter)


def _room_rows(
    rng: np.random.Generator, xa: float, xb: float, y0: float, y1: float
) -> list[list[Rect]]:
    """Return the rooms south and north of the corridor, about 5 m wide each."""
    count = max(1, round((xb - xa) / 5.0))
    edges = np.linspace(xa, xb, count + 1)
    south = [(float(a), y0, float(b), -CORRIDOR) for a, b in zip(edges, edges[1:], strict=False)]
    north = [(float(a), CORRIDOR, float(b), y1) for a, b in zip(edges, edges[1:], strict=False)]
    return [south, north]


def _rooms(
    kit: WorldKit,
    rng: np.random.Generator,
    rooms: list[Rect],
    z: float,
    height: float,
    color: Color,
    clutter: float,
) -> None:
    """Add a row of rooms: side walls, a corridor wall with one doorway each, furniture."""
    north = rooms[0][1] > 0
    y_corridor = CORRIDOR if north else -CORRIDOR
    y_outer = rooms[0][3] if north else rooms[0][1]
    doors = []
    for i, (rx0, _, rx1, _) in enumerate(rooms):
        kit.add("wall", wall((rx0, y_corridor), (rx0, y_outer), z, height, color))
        if i == len(rooms) - 1:
            kit.add("wall", wall((rx1, y_corridor), (rx1, y_outer), z, height, color))
        doors.append(float(rng.uniform(rx0 + 1.0, rx1 - 1.0)))
    start, end = rooms[0][0], rooms[-1][2]
    # Doorways run up to the wall's top: no lintel, so the top-down map shows them.
    openings = [(d - start, 1.0, height) for d in doors]
    kit.add("wall", wall((start, y_corridor), (end, y_corridor), z, height, color, openings))
    for room, door in zip(rooms, doors, strict=True):
        _furnish(kit, rng, room, z, clutter, [(door, y_corridor, 1.6)])


def _furnish(
    kit: WorldKit,
    rng: np.random.Generator,
    room: Rect,
    z: float,
    clutter: float,
    clear: list[Circle],
) -> None:
    """Add desks, chairs, shelves and sofas to a room, leaving lanes between them."""
    x0, y0, x1, y1 = room
    count = int(round((x1 - x0) * (y1 - y0) * 0.08 * (0.3 + clutter)))
    furnish(
        kit,
        rng,
        (x0 + 0.5, y0 + 0.5, x1 - 0.5, y1 - 0.5),
        z,
        count,
        ("table", "chair", "shelf", "sofa"),
        clear,
        weights=(0.35, 0.3, 0.2, 0.15),
    )


def _grounds(kit: WorldKit, footprint: Rect) -> None:
    """Add the paved apron and lawn around the building."""
    x0, y0, x1, y1 = footprint
    apron = (x0 - APRON, y0 - APRON, x1 + APRON, y1 + APRON)
    kit.add("sidewalk", slab_with_holes(apron, [footprint], 0.0, (175, 172, 165), 0.2))
    lawn = (apron[0] - 20, apron[1] - 20, apron[2] + 20, apron[3] + 20)
    kit.add("grass", slab_with_holes(lawn, [apron], 0.0, (95, 130, 70), 0.2))
