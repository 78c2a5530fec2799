"""``apartment``: a one-floor home of named rooms, furniture to put things on or in, and items.

The floor plan is a rectangle cut by straight walls into ``rooms`` rectangles (a binary
partition); a spanning tree of neighbouring rooms, plus a few more pairs, are joined by open
doorways 1.2 m wide. Furniture stands by room type, backs to the walls (tables stand free);
every piece gets an approach point where a robot base of radius 0.3 m stands to reach it.
Containers (fridge, cabinet, drawer, microwave, wardrobe, dishwasher) are a static body and a
separate openable door. Small portable items rest on receptacles or inside containers.

What mission code reads is in the objects' attributes (see ``sortie.sim.household``, which
checks them, and docs/worlds.md). Every room stays walkable: a piece is only kept if the room's
doorways and every approach point stay joined by passages wide enough for the walker.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from sortie.core.errors import ParameterError
from sortie.sim.assets.household import (
    CENTRE_PIECES,
    CONTAINERS,
    FURNITURE,
    ITEMS,
    Piece,
    build_piece,
    item_mesh,
    item_radius,
)
from sortie.sim.assets.props import pick
from sortie.sim.assets.structures import Rect, floor_slab, jitter_color, wall
from sortie.sim.kit import WorldKit
from sortie.sim.linear import inverse_rigid, product
from sortie.sim.mesh import pose_matrix, slab
from sortie.sim.scene import Dynamics, Scene, SceneObject
from sortie.sim.worlds.base import CLUTTER, LIGHTING, Param, ParamValue, world

WALL_HEIGHT = 2.7
WALL = 0.2
DOORWAY = (1.2, 2.1)  # width, height
MIN_SIDE = 2.8
CLEAR = 0.65
"""Free distance kept around every approach point (the walker's radius plus grid slack)."""
PASSAGE = 0.6
"""Half the narrowest gap kept open between obstacles on the way to every approach point."""
RASTER = 0.05
SILL = 0.005
SILL_COLOUR = (120, 110, 100)

FURNISHING: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "kitchen": (
        ("fridge", "sink", "counter"),
        ("counter", "cabinet", "dishwasher", "microwave", "drawer", "table"),
    ),
    "living_room": (("sofa", "tv_stand", "coffee_table"), ("shelf", "cabinet", "drawer")),
    "bedroom": (("bed", "wardrobe", "nightstand"), ("nightstand", "drawer", "desk")),
    "bathroom": (("sink", "cabinet"), ("shelf",)),
    "dining_room": (("table", "cabinet"), ("shelf", "drawer")),
    "study": (("desk", "shelf"), ("drawer", "cabinet")),
    "hallway": (("shelf",), ("cabinet", "drawer")),
}
"""Per room type: the pieces it always tries to hold, then the ones ``clutter`` may add."""

FLOORS = {
    "kitchen": (200, 200, 195),
    "bathroom": (185, 205, 215),
    "hallway": (150, 120, 90),
}
WOOD_FLOOR = (165, 130, 95)
WALL_COLOURS = ((225, 220, 205), (210, 220, 225), (230, 215, 200), (215, 225, 205))


@dataclass(frozen=True, slots=True)
class Doorway:
    """An opening in the wall ``x = at`` (axis 0) or ``y = at`` (axis 1), centred on ``along``."""

    axis: int
    at: float
    along: float
    rooms: tuple[int, int]


@dataclass
class Plan:
    """The floor plan: room rectangles, the walls' lines and the doorways in them."""

    rects: list[Rect]
    lines: list[tuple[int, float, float, float]]  # axis, at, start, end
    doorways: list[Doorway] = field(default_factory=list)


@world(
    "apartment",
    "one-floor home of named rooms with furniture, containers and small items (household)",
    (
        Param("rooms", 0, "number of rooms, 3..8; 0: drawn from the seed", 0, 8),
        CLUTTER,
        LIGHTING,
    ),
)
def build(kit: WorldKit, rng: np.random.Generator, params: Mapping[str, ParamValue]) -> Scene:
    """Build an apartment of ``rooms`` rooms (0: 3..8 from the seed) furnished by ``clutter``."""
    count = int(params["rooms"])
    if 0 < count < 3:
        raise ParameterError(f"world 'apartment': rooms={count} is not 0 (seeded) or 3..8")
    count = count or int(rng.integers(3, 9))
    clutter = float(params["clutter"])
    plan = _plan(rng, count)
    types = _room_types(rng, plan.rects)
    rooms = _add_structure(kit, rng, plan, types)
    hosts: list[Host] = []
    for i, rect in enumerate(plan.rects):
        hosts += _furnish(kit, rng, rooms[i], types[i], rect, plan, i, clutter)
    _add_items(kit, rng, hosts, round(count * (2.5 + 6.0 * clutter)))
    # Last, and without drawing from rng: the suites written before the sills name the same
    # objects, with the same instance ids.
    for i, doorway in enumerate(plan.doorways):
        _add_sill(kit, doorway, f"sill_{i}")
    x0, y0, x1, y1 = _outline(plan.rects)
    return kit.scene(
        (x0 - 0.3, y0 - 0.3, x1 + 0.3, y1 + 0.3), str(params["lighting"]), topdown_cut=2.4
    )


# --- floor plan ----------------------------------------------------------------------------


def _outline(rects: Sequence[Rect]) -> Rect:
    return (
        min(r[0] for r in rects),
        min(r[1] for r in rects),
        max(r[2] for r in rects),
        max(r[3] for r in rects),
    )


def _plan(rng: np.random.Generator, count: int) -> Plan:
    """Return a floor plan of ``count`` rooms whose neighbours can all be joined by doorways."""
    scale = 1.0
    for _ in range(50):
        plan = _partition(rng, count, scale)
        if plan is not None and _link(rng, plan, count):
            return plan
        scale *= 1.05
    raise AssertionError("apartment: no floor plan found")  # never seen: sizes leave room


def _partition(rng: np.random.Generator, count: int, scale: float) -> Plan | None:
    """Cut a rectangle of about 11..17 m2 per room into ``count`` rooms, or None if stuck."""
    area = count * float(rng.uniform(11.0, 17.0)) * scale
    aspect = float(rng.uniform(1.0, 1.7))
    width = round(math.sqrt(area * aspect), 1)
    height = round(area / width, 1)
    rects: list[Rect] = [(-width / 2, -height / 2, width / 2, height / 2)]
    lines: list[tuple[int, float, float, float]] = []
    while len(rects) < count:
        sizes = [(r[2] - r[0], r[3] - r[1]) for r in rects]
        able = [i for i, (w, h) in enumerate(sizes) if max(w, h) >= 2 * MIN_SIDE]
        if not able:
            return None
        weights = np.array([sizes[i][0] * sizes[i][1] for i in able])
        i = able[int(rng.choice(len(able), p=weights / weights.sum()))]
        x0, y0, x1, y1 = rects.pop(i)
        axis = 0 if x1 - x0 >= y1 - y0 else 1
        lo, hi = ((x0, x1), (y0, y1))[axis]
        at = round(float(rng.uniform(lo + MIN_SIDE, hi - MIN_SIDE)), 1)
        if axis == 0:
            rects += [(x0, y0, at, y1), (at, y0, x1, y1)]
            lines.append((0, at, y0, y1))
        else:
            rects += [(x0, y0, x1, at), (x0, at, x1, y1)]
            lines.append((1, at, x0, x1))
    return Plan(rects, lines)


def _shared(a: Rect, b: Rect) -> tuple[int, float, float, float] | None:
    """Return the wall two rooms share as (axis, at, start, end), or None."""
    for axis in (0, 1):
        other = 1 - axis
        if abs(a[axis + 2] - b[axis]) < 1e-6 or abs(b[axis + 2] - a[axis]) < 1e-6:
            at = a[axis + 2] if abs(a[axis + 2] - b[axis]) < 1e-6 else a[axis]
            start, end = max(a[other], b[other]), min(a[other + 2], b[other + 2])
            if end > start:
                return axis, at, start, end
    return None


def _link(rng: np.random.Generator, plan: Plan, count: int) -> bool:
    """Add doorways: a spanning tree of neighbouring rooms, then some loops; False if stuck."""
    need = DOORWAY[0] + 0.7
    pairs = []
    for a in range(count):
        for b in range(a + 1, count):
            wall_line = _shared(plan.rects[a], plan.rects[b])
            if wall_line is not None and wall_line[3] - wall_line[2] >= need:
                pairs.append((a, b, wall_line))
    group = list(range(count))

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for k in rng.permutation(len(pairs)):
        a, b, (axis, at, start, end) = pairs[int(k)]
        if root(a) != root(b) or rng.random() < 0.2:
            group[root(a)] = root(b)
            along = round(float(rng.uniform(start + need / 2, end - need / 2)), 2)
            plan.doorways.append(Doorway(axis, at, along, (a, b)))
    return len({root(i) for i in range(count)}) == 1


def _room_types(rng: np.random.Generator, rects: Sequence[Rect]) -> list[str]:
    """Name the rooms: the largest is the living room, one other the kitchen, then by size."""
    areas = [(r[2] - r[0]) * (r[3] - r[1]) for r in rects]
    order = sorted(range(len(rects)), key=lambda i: -areas[i])
    types = ["" for _ in rects]
    types[order[0]] = "living_room"
    rest = order[1:]
    kitchen = rest.pop(int(rng.integers(len(rest))))
    types[kitchen] = "kitchen"
    if len(rest) >= 2 or (rest and rng.random() < 0.5):
        types[rest.pop()] = "bathroom"  # the smallest
    for i in rest:
        w, h = rects[i][2] - rects[i][0], rects[i][3] - rects[i][1]
        pool = ["dining_room", "study"]
        if min(w, h) >= 3.2:
            pool.append("bedroom")
        if max(w, h) / min(w, h) >= 1.5:
            pool.append("hallway")
        fresh = [t for t in pool if t not in types]
        types[i] = pick(rng, tuple(fresh or pool))
    return types


def _add_structure(
    kit: WorldKit, rng: np.random.Generator, plan: Plan, types: Sequence[str]
) -> list[SceneObject]:
    """Add floors (one per room, named by type), walls with doorways and the ceiling."""
    counts: dict[str, int] = {}
    rooms = []
    for rect, room_type in zip(plan.rects, types, strict=True):
        n = counts.get(room_type, 0)
        counts[room_type] = n + 1
        colour = jitter_color(rng, FLOORS.get(room_type, WOOD_FLOOR), 18)
        rooms.append(kit.add("floor", floor_slab(*rect, 0.0, colour), name=f"{room_type}_{n}"))
    wall_colour = jitter_color(rng, WALL_COLOURS[int(rng.integers(len(WALL_COLOURS)))], 8)
    x0, y0, x1, y1 = _outline(plan.rects)
    outer = [(0, x0, y0, y1), (0, x1, y0, y1), (1, y0, x0, x1), (1, y1, x0, x1)]
    for axis, at, start, end in [*outer, *plan.lines]:
        openings = [
            (d.along - start, DOORWAY[0], DOORWAY[1])
            for d in plan.doorways
            if d.axis == axis and abs(d.at - at) < 1e-6 and start < d.along < end
        ]
        a, b = ((at, start), (at, end)) if axis == 0 else ((start, at), (end, at))
        kit.add("wall", wall(a, b, 0.0, WALL_HEIGHT, wall_colour, openings or None, WALL))
    ceiling = slab(x0 - 0.1, y0 - 0.1, x1 + 0.1, y1 + 0.1, WALL_HEIGHT, WALL_HEIGHT + 0.1)
    kit.add("ceiling", ceiling)
    return rooms


def _add_sill(kit: WorldKit, doorway: Doorway, name: str) -> None:
    """Add a doorway's sill, 5 mm proud of the floors it joins.

    Two rooms' floors meet under the doorway; a ray down exactly on that seam can slip
    between them, and the navigation graph would lose the column that crosses the doorway.
    """
    half, depth = DOORWAY[0] / 2, WALL
    at, along = doorway.at, doorway.along
    if doorway.axis == 0:
        rect = (at - depth, along - half, at + depth, along + half)
    else:
        rect = (along - half, at - depth, along + half, at + depth)
    kit.add("floor", floor_slab(*rect, SILL, SILL_COLOUR), name=name, kind="sill")


# --- furniture -----------------------------------------------------------------------------


@dataclass
class Host:
    """A receptacle or container that items may be put on or in, and what it holds so far."""

    name: str
    kind: str
    room: str
    role: str
    surface: Rect
    z: float
    headroom: float
    taken: list[tuple[float, float, float]] = field(default_factory=list)


@dataclass
class RoomState:
    """What a room holds while it is furnished: obstacles, places kept free, points to reach."""

    inner: Rect
    bodies: list[Rect] = field(default_factory=list)
    keep: list[Rect] = field(default_factory=list)
    points: list[tuple[float, float]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Placed:
    """A piece where it stands: its frame and its rectangles in world coordinates."""

    piece: Piece
    matrix: NDArray[np.float64]
    footprint: Rect
    surface: Rect
    swing: Rect | None
    sweep: Rect | None


def _furnish(
    kit: WorldKit,
    rng: np.random.Generator,
    room: SceneObject,
    room_type: str,
    rect: Rect,
    plan: Plan,
    index: int,
    clutter: float,
) -> list[Host]:
    """Add a room's furniture; return the pieces items may go on or in."""
    half = WALL / 2
    state = RoomState((rect[0] + half, rect[1] + half, rect[2] - half, rect[3] - half))
    for doorway in plan.doorways:
        if index in doorway.rooms:
            _keep_doorway(state, doorway, rect)
    always, extra = FURNISHING[room_type]
    wanted = [*always, *(k for k in extra if rng.random() < 0.25 + 0.6 * clutter)]
    hosts = []
    for kind in wanted:
        host = _place(kit, rng, state, kind, room.name)
        if host is not None:
            hosts.append(host)
    _set_room_approach(state, room, room_type)
    return hosts


def _keep_doorway(state: RoomState, doorway: Doorway, rect: Rect) -> None:
    """Keep the floor in front of a doorway free, and the point just inside it reachable."""
    axis, at, along = doorway.axis, doorway.at, doorway.along
    inward = 1.0 if abs(rect[axis] - at) < 1e-6 else -1.0
    depth, half = 1.3, DOORWAY[0] / 2 + 0.4
    a, b = at, at + inward * depth
    point = at + inward * (WALL / 2 + CLEAR)
    if axis == 0:
        state.keep.append((min(a, b), along - half, max(a, b), along + half))
        state.points.append((point, along))
    else:
        state.keep.append((along - half, min(a, b), along + half, max(a, b)))
        state.points.append((along, point))


def _place(
    kit: WorldKit, rng: np.random.Generator, state: RoomState, kind: str, room: str
) -> Host | None:
    """Try to stand one piece of ``kind`` in the room; add it and return its host, or None."""
    spec = FURNITURE[kind]
    width = round(float(rng.uniform(*spec.width)), 2)
    colour, material = pick(rng, spec.colours), pick(rng, spec.materials)
    piece = build_piece(kind, width, colour, int(rng.choice([-1, 1])))
    for x, y, yaw in _candidates(rng, state, piece):
        # Most places are taken: the footprint and door sweep are tested before the rest is made
        matrix = pose_matrix((x, y, 0.0), yaw)
        footprint = _moved_rect(piece.footprint, matrix)
        sweep = _moved_rect(piece.sweep, matrix) if piece.sweep else None
        if not _stands_clear(state, [footprint] + ([sweep] if sweep else [])):
            continue
        placed = _placed(piece, matrix, footprint, sweep)
        if not _keeps_points_clear(state, placed):
            continue
        approach = _approach(state, placed)
        if approach is not None and _stays_walkable(state, placed, approach):
            return _add_piece(kit, rng, state, placed, approach, (room, colour, material))
    return None


def _candidates(
    rng: np.random.Generator, state: RoomState, piece: Piece
) -> list[tuple[float, float, float]]:
    """Return places to try (x, y, yaw), in a seeded order: backed to a wall (tables first free).

    Along a wall the piece may stand in a corner, flush beside a piece already there, or at a
    random place. Every draw from ``rng`` is made here, so the caller may stop at the first
    place that fits.
    """
    x0, y0, x1, y1 = state.inner
    fx0, fy0, fx1, fy1 = piece.footprint
    free: list[tuple[float, float, float]] = []
    if piece.kind in CENTRE_PIECES:
        reach = max(fx1 - fx0, fy1 - fy0) / 2 + CLEAR + 0.1
        (xa, xb), (ya, yb) = (x0 + reach, x1 - reach), (y0 + reach, y1 - reach)
        # Both tests: a room exactly twice the reach wide can round to xa > xb (a crash).
        if x1 - x0 >= 2 * reach and y1 - y0 >= 2 * reach and xa <= xb and ya <= yb:
            xs = rng.uniform(xa, xb, 12)
            ys = rng.uniform(ya, yb, 12)
            yaws = rng.choice([0.0, 90.0], 12)
            free = [
                (round(float(x), 2), round(float(y), 2), float(a))
                for x, y, a in zip(xs, ys, yaws, strict=True)
            ]
    half, back = (fx1 - fx0) / 2, -fy0 + 0.01  # from the wall to the piece's centre
    found = []
    for side, yaw in enumerate((0.0, 90.0, 180.0, 270.0)):  # facing north, west, south, east
        axis = side % 2  # 0: along x (south and north walls), 1: along y
        lo, hi = (x0, x1) if axis == 0 else (y0, y1)
        if hi - lo < 2 * half or lo + half > hi - half:  # the second: rounding, as above
            continue
        alongs = [lo + half, hi - half, *rng.uniform(lo + half, hi - half, 3)]
        for r in state.bodies:
            alongs += [r[axis] - half - 0.01, r[axis + 2] + half + 0.01]
        depth = (y0 + back, x1 - back, y1 - back, x0 + back)[side]
        for along in alongs:
            if lo + half <= along <= hi - half:
                x, y = (along, depth) if axis == 0 else (depth, along)
                found.append((round(float(x), 2), round(float(y), 2), yaw))
    return free + [found[int(k)] for k in rng.permutation(len(found))]


def _placed(
    piece: Piece, matrix: NDArray[np.float64], footprint: Rect, sweep: Rect | None
) -> Placed:
    """Return the piece placed by ``matrix``, given its footprint and sweep moved there."""
    swing = _moved_rect(piece.swing, matrix) if piece.swing else None
    return Placed(piece, matrix, footprint, _moved_rect(piece.surface, matrix), swing, sweep)


def _moved_rect(rect: Rect, matrix: NDArray[np.float64]) -> Rect:
    """Return the world bounding rectangle of a local rectangle (turned by quarter turns)."""
    corners = np.array(
        [[rect[0], rect[1]], [rect[2], rect[1]], [rect[2], rect[3]], [rect[0], rect[3]]]
    )
    world = product(corners, matrix[:2, :2].T) + matrix[:2, 3]
    lo, hi = world.min(axis=0), world.max(axis=0)
    return (
        round(float(lo[0]), 4),
        round(float(lo[1]), 4),
        round(float(hi[0]), 4),
        round(float(hi[1]), 4),
    )


def _overlaps(a: Rect, b: Rect) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _inside(a: Rect, outer: Rect) -> bool:
    return outer[0] <= a[0] and outer[1] <= a[1] and a[2] <= outer[2] and a[3] <= outer[3]


def _gap(point: tuple[float, float], rect: Rect) -> float:
    """Return the distance from a point to a rectangle (0 inside it)."""
    dx = max(rect[0] - point[0], 0.0, point[0] - rect[2])
    dy = max(rect[1] - point[1], 0.0, point[1] - rect[3])
    return math.hypot(dx, dy)


def _stands_clear(state: RoomState, shapes: Sequence[Rect]) -> bool:
    """Return whether a piece's footprint and door sweep stay clear of walls, pieces and keeps."""
    for shape in shapes:
        if not _inside(shape, state.inner):
            return False
        if any(_overlaps(shape, other) for other in [*state.bodies, *state.keep]):
            return False
    return True


def _keeps_points_clear(state: RoomState, placed: Placed) -> bool:
    """Return whether the piece and its open door keep clear of the points to reach."""
    solid = [placed.footprint] + ([placed.swing] if placed.swing else [])
    return all(_gap(p, s) >= CLEAR for p in state.points for s in solid)


def _clearance(state: RoomState, point: tuple[float, float], extra: Sequence[Rect]) -> float:
    x0, y0, x1, y1 = state.inner
    walls = min(point[0] - x0, x1 - point[0], point[1] - y0, y1 - point[1])
    return min([walls, *(_gap(point, r) for r in [*state.bodies, *extra])])


def _approach(state: RoomState, placed: Placed) -> tuple[float, float] | None:
    """Return the first of the piece's approach points with room for the robot base."""
    own = [placed.footprint] + ([placed.swing] if placed.swing else [])
    for lx, ly in placed.piece.approaches:
        x, y = product(placed.matrix[:2, :2], np.array([lx, ly])) + placed.matrix[:2, 3]
        point = (round(float(x), 3), round(float(y), 3))
        if _clearance(state, point, own) >= CLEAR:
            return point
    return None


def _raster(state: RoomState, extra: Sequence[Rect]) -> tuple[NDArray[np.int32], Rect]:
    """Return the room's free floor as labelled passages (0: too close to an obstacle)."""
    x0, y0, x1, y1 = state.inner
    nx = max(1, math.ceil((x1 - x0) / RASTER - 1e-6))
    ny = max(1, math.ceil((y1 - y0) / RASTER - 1e-6))
    xs = x0 + (np.arange(nx) + 0.5) * RASTER
    ys = y0 + (np.arange(ny) + 0.5) * RASTER
    free = np.ones((ny + 2, nx + 2), bool)
    free[0, :] = free[-1, :] = free[:, 0] = free[:, -1] = False
    for r in [*state.bodies, *extra]:
        cols = np.flatnonzero((xs >= r[0] - RASTER / 2) & (xs <= r[2] + RASTER / 2)) + 1
        rows = np.flatnonzero((ys >= r[1] - RASTER / 2) & (ys <= r[3] + RASTER / 2)) + 1
        if cols.size and rows.size:
            free[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1] = False
    from scipy import ndimage  # here, as in terrain.py: only apartment builds need it

    distance = ndimage.distance_transform_edt(free) * RASTER - RASTER / 2
    labels, _ = ndimage.label(distance >= PASSAGE)
    return labels.astype(np.int32), state.inner


def _label_at(labels: NDArray[np.int32], inner: Rect, point: tuple[float, float]) -> int:
    i = int((point[0] - inner[0]) / RASTER) + 1
    j = int((point[1] - inner[1]) / RASTER) + 1
    if not (0 <= j < labels.shape[0] and 0 <= i < labels.shape[1]):
        return 0
    return int(labels[j, i])


def _stays_walkable(state: RoomState, placed: Placed, approach: tuple[float, float]) -> bool:
    """Return whether the doorways and every approach point stay joined with the piece added."""
    extra = [placed.footprint] + ([placed.swing] if placed.swing else [])
    labels, inner = _raster(state, extra)
    found = {_label_at(labels, inner, p) for p in [*state.points, approach]}
    return len(found) == 1 and 0 not in found


def _piece_attributes(
    placed: Placed, approach: tuple[float, float], looks: tuple[str, str, str]
) -> dict[str, str | float]:
    """Return a piece's household attributes (the contract of ``sortie.sim.household``)."""
    piece = placed.piece
    room, colour, material = looks
    sx0, sy0, sx1, sy1 = placed.surface
    aim = ((sx0 + sx1) / 2 - approach[0], (sy0 + sy1) / 2 - approach[1])
    attributes: dict[str, str | float] = {
        "role": "container" if piece.kind in CONTAINERS else "receptacle",
        "kind": piece.kind,
        "room": room,
        "colour": colour,
        "material": material,
        "approach_x": approach[0],
        "approach_y": approach[1],
        "approach_yaw": round(math.degrees(math.atan2(aim[1], aim[0])), 2),
        "surface_xmin": sx0,
        "surface_ymin": sy0,
        "surface_xmax": sx1,
        "surface_ymax": sy1,
    }
    height = "inside_z" if piece.kind in CONTAINERS else "surface_z"
    attributes[height] = round(piece.surface_z, 4)
    return attributes


def _add_piece(
    kit: WorldKit,
    rng: np.random.Generator,
    state: RoomState,
    placed: Placed,
    approach: tuple[float, float],
    looks: tuple[str, str, str],
) -> Host:
    """Add the piece (and its door) to the kit and the room; return it as a host.

    ``looks`` is the room's name, the piece's colour and its material.
    """
    piece = placed.piece
    room = looks[0]
    state.bodies.append(placed.footprint)
    if placed.swing:
        state.bodies.append(placed.swing)
    state.points.append(approach)
    attributes = _piece_attributes(placed, approach, looks)
    body_parts = [p.transformed(placed.matrix) for p in piece.body]
    body = kit.add(piece.kind, body_parts)
    body.attributes.update(attributes)
    if piece.kind in CONTAINERS:
        body.attributes["door"] = f"{body.name}_door"
        _add_door(kit, body, placed, bool(rng.random() < 0.3))
    return Host(
        body.name,
        piece.kind,
        room,
        str(attributes["role"]),
        placed.surface,
        piece.surface_z,
        piece.headroom,
    )


def _add_door(kit: WorldKit, body: SceneObject, placed: Placed, starts_open: bool) -> None:
    """Add a container's door (most start closed)."""
    matrix, local = placed.matrix, placed.piece.open_transform
    assert local is not None  # every container has a door
    turn = product(product(matrix, local), inverse_rigid(matrix))
    parts = [p.transformed(matrix) for p in placed.piece.door]
    door = kit.add(
        body.semantic,
        parts,
        name=f"{body.name}_door",
        dynamics=Dynamics.OPENABLE,
        open_transform=turn,
        role="door_of",
        container=body.name,
    )
    kit.objects[-1] = SceneObject(
        door.name,
        door.semantic,
        door.parts,
        door.attributes,
        door.dynamics,
        door.open_transform,
        starts_open,
    )


def _nearest_first() -> list[tuple[float, float]]:
    """Return the offsets at which a room's standing point is sought, nearest first.

    A 0.1 m grid out to 4 m from the room's centre, by distance (ties by x, then y), its first
    2,000 points.
    """
    offsets = np.arange(-40, 41) / 10
    dx, dy = (a.ravel() for a in np.meshgrid(offsets, offsets))
    order = np.lexsort((dy, dx, np.hypot(dx, dy)))
    return [(float(dx[k]), float(dy[k])) for k in order[:2000]]


_NEAREST_FIRST = _nearest_first()
"""The same for every room, so made once (a room's build made it anew: a third of its time)."""


def _set_room_approach(state: RoomState, room: SceneObject, room_type: str) -> None:
    """Mark the floor as a room and give it the free standing point nearest its centre."""
    labels, inner = _raster(state, [])
    target = _label_at(labels, inner, state.points[0]) if state.points else 0
    cx, cy = (inner[0] + inner[2]) / 2, (inner[1] + inner[3]) / 2
    for dx, dy in _NEAREST_FIRST:
        point = (round(cx + dx, 2), round(cy + dy, 2))
        if _clearance(state, point, []) >= CLEAR and _label_at(labels, inner, point) == target:
            break
    else:
        point = state.points[0]
    room.attributes.update(
        role="room", room_type=room_type, approach_x=point[0], approach_y=point[1]
    )
    room.attributes["approach_yaw"] = 0.0  # any way will do in the open


# --- items ---------------------------------------------------------------------------------


def _add_items(kit: WorldKit, rng: np.random.Generator, hosts: Sequence[Host], count: int) -> None:
    """Put ``count`` items on and in the hosts; same-kind items differ in colour."""
    fits = {kind: [h for h in hosts if _can_hold(h, kind)] for kind in ITEMS}
    kinds = [k for k in ITEMS if fits[k]]
    if not kinds:
        return
    several = [k for k in kinds if len(ITEMS[k].colours) >= 2]
    wish: list[str] = []
    for kind in rng.permutation(several)[:3]:
        wish += [str(kind)] * int(rng.integers(2, 4))
    while len(wish) < count:
        wish.append(str(kinds[int(rng.integers(len(kinds)))]))
    used: dict[str, set[str]] = {}
    for kind in wish[:count]:
        colours = [c for c in ITEMS[kind].colours if c not in used.get(kind, set())]
        if not colours:
            continue
        colour = colours[int(rng.integers(len(colours)))]
        for k in rng.permutation(len(fits[kind])):
            host = fits[kind][int(k)]
            spot = _free_spot(rng, host, item_radius(kind))
            if spot is not None:
                _add_item(kit, rng, host, kind, colour, spot)
                used.setdefault(kind, set()).add(colour)
                break


def _can_hold(host: Host, kind: str) -> bool:
    spec = ITEMS[kind]
    x0, y0, x1, y1 = host.surface
    room = 2 * item_radius(kind)
    return (
        host.kind in spec.hosts
        and spec.size[2] <= host.headroom - 0.02
        and min(x1 - x0, y1 - y0) >= room
    )


def _free_spot(rng: np.random.Generator, host: Host, radius: float) -> tuple[float, float] | None:
    """Return a random point of the host's surface where a disc of ``radius`` fits, or None."""
    x0, y0, x1, y1 = host.surface
    for _ in range(12):
        x = float(rng.uniform(x0 + radius, x1 - radius))
        y = float(rng.uniform(y0 + radius, y1 - radius))
        if all(math.hypot(x - tx, y - ty) >= radius + tr + 0.02 for tx, ty, tr in host.taken):
            host.taken.append((x, y, radius))
            return round(x, 3), round(y, 3)
    return None


def _add_item(
    kit: WorldKit,
    rng: np.random.Generator,
    host: Host,
    kind: str,
    colour: str,
    spot: tuple[float, float],
) -> None:
    yaw = round(float(rng.uniform(0.0, 360.0)), 1)
    mesh = item_mesh(kind, colour).moved((spot[0], spot[1], host.z), yaw)
    place = "on" if host.role == "receptacle" else "inside"
    item = kit.add(
        kind,
        mesh,
        dynamics=Dynamics.PORTABLE,
        role="item",
        kind=kind,
        colour=colour,
        material=pick(rng, ITEMS[kind].materials),
        room=host.room,
    )
    item.attributes[place] = host.name
