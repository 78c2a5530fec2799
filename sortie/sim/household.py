"""The household structure of a scene: rooms, furniture and items, read from attributes.

World builders (``apartment``) write the structure into object attributes; ``read_house`` is
the one reader of that contract (the simulator's ``house_layout`` and the household
mission's ``House`` both use it), and ``place_spots`` finds where an item can be put down.
Nothing here knows about missions or backends.

The attribute contract (docs/worlds.md describes it too):

- room: its floor, named ``<room_type>_<n>``; ``role="room"``, ``room_type``,
  ``approach_x``, ``approach_y``, ``approach_yaw``.
- receptacle: ``role="receptacle"``, ``kind``, ``room``, ``surface_z``, ``colour``,
  ``material``, ``approach_x/y/yaw``, and ``surface_xmin/ymin/xmax/ymax`` (where items rest).
- container body: as a receptacle but ``role="container"``, ``inside_z`` instead of
  ``surface_z``, and ``door`` (its door's name); the surface rectangle is the inside floor.
- container door: ``role="door_of"``, ``container``; openable.
- item: portable; ``role="item"``, ``kind``, ``colour``, ``material``, ``room``, and exactly
  one of ``on`` (a receptacle) or ``inside`` (a container).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np

from sortie.core.errors import ConfigError
from sortie.sim.assets.household import CONTAINERS, ITEMS, RECEPTACLES
from sortie.sim.scene import Dynamics, Scene, SceneObject

ROOM_TYPES = ("kitchen", "living_room", "bedroom", "bathroom", "dining_room", "study", "hallway")
"""The room types an apartment's rooms are named by."""
RECEPTACLE_KINDS: tuple[str, ...] = RECEPTACLES
"""Furniture kinds items are put on."""
CONTAINER_KINDS: tuple[str, ...] = CONTAINERS
"""Furniture kinds items are put in, behind a door."""
ITEM_KINDS: tuple[str, ...] = tuple(ITEMS)
"""Every kind of small portable object."""

Rect = tuple[float, float, float, float]
Approach = tuple[float, float, float]
"""Where a robot base stands: ``(x, y, yaw)``, yaw in degrees."""
SPOT_GAP = 0.02
"""Free gap kept between an item put down and its neighbours, in metres."""
RESTING = 0.02
"""How far above or below a surface an item's base may be and still count as resting on it."""


@dataclass(frozen=True, slots=True)
class Room:
    """One room: its floor object's name, type, floor rectangle and a free standing point."""

    name: str
    room_type: str
    bounds: Rect
    approach: Approach


@dataclass(frozen=True, slots=True)
class Furniture:
    """A receptacle (things go on it) or container (things go in it, behind a door).

    Attributes:
        name: the body's object name, e.g. ``fridge_0``.
        kind: furniture kind, e.g. ``fridge``.
        role: ``receptacle`` or ``container``.
        room: the room's name.
        approach: where a robot base stands to reach it.
        surface_z: height items rest at (a container's inside floor).
        door: the door's object name (containers), else None.
        footprint: ground rectangle of the body (and closed door).
        surface: rectangle items may rest in, at ``surface_z``.
        colour: colour name.
        material: material name.
    """

    name: str
    kind: str
    role: str
    room: str
    approach: Approach
    surface_z: float
    door: str | None
    footprint: Rect
    surface: Rect
    colour: str
    material: str


@dataclass(frozen=True, slots=True)
class Item:
    """A small portable object and where it started: ``on`` a receptacle or ``inside`` one."""

    name: str
    kind: str
    colour: str
    material: str
    room: str
    on: str | None
    inside: str | None

    @property
    def host(self) -> str:
        """Return the furniture it started on or in."""
        return self.on or self.inside or ""


@dataclass(frozen=True, slots=True)
class HouseLayout:
    """Every room, piece of furniture and item of a scene, in scene order."""

    rooms: tuple[Room, ...]
    furniture: tuple[Furniture, ...]
    items: tuple[Item, ...]

    def room(self, name: str) -> Room:
        """Return room ``name``, or raise naming the rooms."""
        return _named(self.rooms, name, "room")

    def piece(self, name: str) -> Furniture:
        """Return receptacle or container ``name``, or raise naming them."""
        return _named(self.furniture, name, "receptacle or container")

    def item(self, name: str) -> Item:
        """Return item ``name``, or raise naming the items."""
        return _named(self.items, name, "item")


Named = TypeVar("Named", "Room", "Furniture", "Item")


def _named(records: tuple[Named, ...], name: str, what: str) -> Named:
    for record in records:
        if record.name == name:
            return record
    known = ", ".join(r.name for r in records) or "none"
    raise ConfigError(f"household: no {what} named {name!r}; known: {known}")


class Attributed(Protocol):
    """An object as the attribute contract reads it: a scene's, or one an oracle view lists."""

    @property
    def name(self) -> str:
        """The object's name."""
        ...

    @property
    def attributes(self) -> Mapping[str, Any]:
        """Its attributes, ``role`` and the rest the contract asks of that role."""
        ...


A = TypeVar("A", bound=Attributed)


def house_layout(scene: Scene) -> HouseLayout:
    """Read the rooms, furniture and items of ``scene``, checking every attribute they need.

    Beyond the attributes (``read_house``), a door must be openable and an item portable.

    Raises:
        ConfigError: naming the object and attribute, when one is missing, of the wrong
            type, or names something that is not there.
    """
    origin = scene.origin or "scene"
    layout = read_house(origin, scene.objects, _bounds)
    for obj in scene.objects:
        role = obj.attributes.get("role")
        if role == "door_of" and (
            obj.dynamics is not Dynamics.OPENABLE or obj.open_transform is None
        ):
            raise ConfigError(f"{_where(origin, obj)}: a container's door must be openable")
        if role == "item" and obj.dynamics is not Dynamics.PORTABLE:
            raise ConfigError(f"{_where(origin, obj)}: an item must be portable")
    return layout


def read_house(origin: str, objects: Sequence[A], bounds: Callable[[A], Rect]) -> HouseLayout:
    """Read the household structure of ``objects`` by the attribute contract (module doc).

    The one reader of the contract: the embedded simulator reads its scenes with it
    (``house_layout``), the household mission the objects of any backend's oracle view.
    ``bounds`` gives an object's ground rectangle (rooms' floors, furniture footprints).

    Raises:
        ConfigError: ``origin``, the object and the attribute, when one is missing, of the
            wrong type, or names something that is not there.
    """
    by_role: dict[str, list[A]] = {}
    for obj in objects:
        role = obj.attributes.get("role")
        if isinstance(role, str):
            by_role.setdefault(role, []).append(obj)
    rooms = tuple(_room(origin, o, bounds(o)) for o in by_role.get("room", []))
    names = {r.name for r in rooms}
    pieces = tuple(
        _furniture(origin, o, names, bounds(o))
        for o in objects
        if o.attributes.get("role") in ("receptacle", "container")
    )
    for door in by_role.get("door_of", []):
        _door(origin, door, {p.name: p for p in pieces})
    kinds = {p.name: p.role for p in pieces}
    items = tuple(_item(origin, o, names, kinds) for o in by_role.get("item", []))
    return HouseLayout(rooms, pieces, items)


def _where(origin: str, obj: Attributed) -> str:
    return f"{origin}: object {obj.name!r}"


def _text(origin: str, obj: Attributed, key: str) -> str:
    value = obj.attributes.get(key)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{_where(origin, obj)}: attribute {key!r} must be a name, got {value!r}")
    return value


def _number(origin: str, obj: Attributed, key: str) -> float:
    value = obj.attributes.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(
            f"{_where(origin, obj)}: attribute {key!r} must be a finite number, got {value!r}"
        )
    return float(value)


def _approach(origin: str, obj: Attributed) -> Approach:
    x, y, yaw = (_number(origin, obj, f"approach_{k}") for k in ("x", "y", "yaw"))
    return (x, y, yaw)


def _bounds(obj: SceneObject) -> Rect:
    low, high = obj.bounds()
    return (float(low[0]), float(low[1]), float(high[0]), float(high[1]))


def _room(origin: str, obj: Attributed, bounds: Rect) -> Room:
    return Room(obj.name, _text(origin, obj, "room_type"), bounds, _approach(origin, obj))


def _in_room(origin: str, obj: Attributed, rooms: set[str]) -> str:
    room = _text(origin, obj, "room")
    if room not in rooms:
        raise ConfigError(
            f"{_where(origin, obj)}: attribute 'room' names {room!r}, which is not a room; "
            f"rooms: {', '.join(sorted(rooms)) or 'none'}"
        )
    return room


def _furniture(origin: str, obj: Attributed, rooms: set[str], footprint: Rect) -> Furniture:
    role = str(obj.attributes["role"])
    container = role == "container"
    x0, y0, x1, y1 = (
        _number(origin, obj, f"surface_{k}") for k in ("xmin", "ymin", "xmax", "ymax")
    )
    return Furniture(
        obj.name,
        _text(origin, obj, "kind"),
        role,
        _in_room(origin, obj, rooms),
        _approach(origin, obj),
        _number(origin, obj, "inside_z" if container else "surface_z"),
        _text(origin, obj, "door") if container else None,
        footprint,
        (x0, y0, x1, y1),
        _text(origin, obj, "colour"),
        _text(origin, obj, "material"),
    )


def _door(origin: str, door: Attributed, pieces: dict[str, Furniture]) -> None:
    """Check that a door belongs to a container that names it."""
    owner = _text(origin, door, "container")
    piece = pieces.get(owner)
    if piece is None or piece.door != door.name:
        raise ConfigError(
            f"{_where(origin, door)}: attribute 'container' names {owner!r}, which is not a "
            f"container whose 'door' is {door.name!r}"
        )


def _item(origin: str, obj: Attributed, rooms: set[str], roles: dict[str, str]) -> Item:
    on, inside = obj.attributes.get("on"), obj.attributes.get("inside")
    if (on is None) == (inside is None):
        raise ConfigError(
            f"{_where(origin, obj)}: an item needs exactly one of the attributes 'on' or "
            f"'inside', got on={on!r}, inside={inside!r}"
        )
    key, wanted = ("on", "receptacle") if on is not None else ("inside", "container")
    host = _text(origin, obj, key)
    if roles.get(host) != wanted:
        raise ConfigError(
            f"{_where(origin, obj)}: attribute {key!r} names {host!r}, which is not a {wanted}"
        )
    return Item(
        obj.name,
        _text(origin, obj, "kind"),
        _text(origin, obj, "colour"),
        _text(origin, obj, "material"),
        _in_room(origin, obj, rooms),
        host if key == "on" else None,
        host if key == "inside" else None,
    )


# --- putting things down -------------------------------------------------------------------


def resting_on(scene: Scene, layout: HouseLayout, furniture: str) -> tuple[str, ...]:
    """Return the items whose base rests on ``furniture``'s surface now (carried ones do not)."""
    piece = layout.piece(furniture)
    return tuple(
        item.name
        for item in layout.items
        if (disc := _disc(scene, item.name)) is not None
        and abs(disc[3] - piece.surface_z) <= RESTING
        and _contains(piece.surface, disc[0], disc[1])
    )


def item_base(scene: Scene, name: str) -> tuple[float, float, float] | None:
    """Return where item ``name``'s base centre is now, ``(x, y, z)``; None while hidden.

    Moving an item from here to a spot of ``place_spots`` is a pure translation by their
    difference (on top of any transform it already has).
    """
    disc = _disc(scene, name)
    return None if disc is None else (disc[0], disc[1], disc[3])


def item_radius(scene: Scene, name: str) -> float:
    """Return the radius of the circle around item ``name``'s footprint, as built."""
    low, high = scene[name].bounds()
    return float(math.hypot(high[0] - low[0], high[1] - low[1]) / 2)


def place_spots(
    scene: Scene,
    layout: HouseLayout,
    furniture: str,
    n: int,
    radius: float = 0.1,
    avoid: Iterable[str] | None = None,
) -> tuple[tuple[float, float, float], ...]:
    """Return up to ``n`` points ``(x, y, z)`` where items of ``radius`` can be put down.

    The points lie on ``furniture``'s surface (a container's inside floor) at its height,
    each disc of ``radius`` inside the surface, apart from each other and from the items in
    ``avoid`` (default: the items resting there now, see ``resting_on``) by ``SPOT_GAP``.
    They come nearest the surface's centre first, on a fixed lattice: the same state gives the
    same points. Fewer than ``n`` come back when the surface is full.

    Raises:
        ConfigError: for an unknown furniture or item name, or a bad ``n`` or ``radius``.
    """
    piece = layout.piece(furniture)
    if n < 0 or not radius > 0:
        raise ConfigError(f"place_spots: n must be >= 0 and radius > 0, got {n}, {radius}")
    names = resting_on(scene, layout, furniture) if avoid is None else tuple(avoid)
    taken = [d[:3] for d in (_disc(scene, name) for name in names) if d is not None]
    chosen: list[tuple[float, float, float]] = []
    for x, y in _lattice(piece.surface, radius):
        if len(chosen) >= n:
            break
        others = [*taken, *((cx, cy, radius) for cx, cy, _ in chosen)]
        if all(math.hypot(x - ox, y - oy) >= radius + r + SPOT_GAP for ox, oy, r in others):
            chosen.append((x, y, piece.surface_z))
    return tuple(chosen)


def _lattice(surface: Rect, radius: float) -> list[tuple[float, float]]:
    """Return candidate centres a quarter radius apart inside ``surface``, centre first."""
    x0, y0, x1, y1 = (
        surface[0] + radius,
        surface[1] + radius,
        surface[2] - radius,
        surface[3] - radius,
    )
    if x1 < x0 or y1 < y0:
        return []
    step = max(radius / 4, 0.01)
    xs = np.linspace(x0, x1, max(1, int((x1 - x0) / step) + 1))
    ys = np.linspace(y0, y1, max(1, int((y1 - y0) / step) + 1))
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    points = [(round(float(x), 4), round(float(y), 4)) for x in xs for y in ys]
    return sorted(points, key=lambda p: (round(math.hypot(p[0] - cx, p[1] - cy), 6), p))


def _disc(scene: Scene, name: str) -> tuple[float, float, float, float] | None:
    """Return an item's current centre, footprint radius and base height, None if hidden."""
    parts = scene.current_parts(scene[name])
    if not parts:
        return None
    low = np.min([p.bounds()[0] for p in parts], axis=0)
    high = np.max([p.bounds()[1] for p in parts], axis=0)
    radius = math.hypot(high[0] - low[0], high[1] - low[1]) / 2
    return (
        float(low[0] + high[0]) / 2,
        float(low[1] + high[1]) / 2,
        float(radius),
        float(low[2]),
    )


def _contains(rect: Rect, x: float, y: float) -> bool:
    return rect[0] <= x <= rect[2] and rect[1] <= y <= rect[3]
