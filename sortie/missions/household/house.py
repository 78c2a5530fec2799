"""The mission's model of a household scene: what each named thing is, and where items are.

Built once per episode from the privileged object list (``OracleView.objects``): scene objects
carry their household role in their attributes (``role``, ``kind``, ``room``, ``on``/``inside``,
``door``, ``approach_*``; see docs/worlds.md, apartment). From then on the mission keeps the
state itself: which item is on or inside which furniture, which container is open, what the
gripper holds. The backend only moves the geometry to match.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sortie.backends.base import ObjectInfo
from sortie.core.pose import Pose
from sortie.missions.household.facts import PlaceFacts
from sortie.missions.household.records import ObjectRole
from sortie.sim.household import Furniture, Item, Room, read_house

HELD, FLOOR = "held", "floor"


@dataclass(frozen=True, slots=True)
class Thing:
    """One named thing of the house a planner may name: an item, furniture or a room."""

    name: str
    kind: str
    role: ObjectRole
    room: str | None
    position: tuple[float, float, float]
    """Where it was at the start (base centre); items move, the mission tracks them."""
    colour: str = ""
    material: str = ""
    approach: Pose | None = None
    """Where a robot base stands to reach it (furniture and rooms)."""
    door: str | None = None
    """A container's door object."""

    @property
    def is_large(self) -> bool:
        """Return whether it is a room or furniture (a goal for image navigation)."""
        return self.role is not ObjectRole.ITEM

    def describe(self) -> str:
        """Return how a person would name it: ``red ceramic mug``."""
        return " ".join(w for w in (self.colour, self.material, self.kind.replace("_", " ")) if w)


class House:
    """The household state of one episode: things, item places, container states, the gripper."""

    def __init__(self, things: Iterable[Thing], places: dict[str, PlaceFacts]) -> None:
        """Create the state from the things and each item's starting place."""
        self.things = {t.name: t for t in things}
        self.places = dict(places)
        self.open: dict[str, bool] = {}
        self.held: str | None = None

    @classmethod
    def from_objects(cls, objects: Iterable[ObjectInfo], is_open: Callable[[str], bool]) -> House:
        """Read the household things of a scene from its objects' attributes.

        The attributes are read and checked by the one reader of the contract
        (``sortie.sim.household.read_house``), as strictly as the simulator reads its scenes.

        Raises:
            ConfigError: an object has a household role but lacks an attribute it needs, or
                an attribute names something that is not there.
        """
        listed = list(objects)
        layout = read_house("household scene", listed, _no_footprint)
        at = {o.name: o.position for o in listed}
        made = {r.name: _room(r, at[r.name]) for r in layout.rooms}
        made |= {f.name: _furniture(f, at[f.name]) for f in layout.furniture}
        made |= {i.name: _item(i, at[i.name]) for i in layout.items}
        places = {i.name: PlaceFacts(relation=_relation(i), place=i.host) for i in layout.items}
        house = cls([made[o.name] for o in listed if o.name in made], places)
        house.open = {t.name: is_open(t.door) for t in house.things.values() if t.door}
        return house

    def of_role(self, role: ObjectRole) -> list[Thing]:
        """Return the things of one role, in scene order."""
        return [t for t in self.things.values() if t.role is role]

    def items_in(self, furniture: str) -> list[str]:
        """Return the items on or inside ``furniture``."""
        return [name for name, p in self.places.items() if p.place == furniture]

    def enclosed(self, item: str) -> str | None:
        """Return the closed container ``item`` is inside, if it is."""
        place = self.places.get(item)
        if place and place.relation == "inside" and not self.open.get(place.place or "", True):
            return place.place
        return None

    def pick(self, item: str) -> None:
        """Record that the gripper took ``item``."""
        self.held, self.places[item] = item, PlaceFacts(relation=HELD)

    def put(self, item: str, furniture: str | None) -> None:
        """Record that ``item`` left the gripper onto ``furniture`` (None: the floor)."""
        if furniture is None:
            self.places[item] = PlaceFacts(relation=FLOOR)
        else:
            role = self.things[furniture].role
            relation = "inside" if role is ObjectRole.CONTAINER else "on"
            self.places[item] = PlaceFacts(relation=relation, place=furniture)
        self.held = None


Position = tuple[float, float, float]


def _no_footprint(obj: ObjectInfo) -> tuple[float, float, float, float]:
    x, y, _ = obj.position  # the mission needs no ground rectangles: a point will do
    return (x, y, x, y)


def _pose(approach: tuple[float, float, float], at: Position) -> Pose:
    x, y, yaw = approach
    return Pose(x, y, at[2], yaw)


def _room(room: Room, at: Position) -> Thing:
    return Thing(
        room.name, room.room_type, ObjectRole.ROOM, room.name, at, approach=_pose(room.approach, at)
    )


def _furniture(piece: Furniture, at: Position) -> Thing:
    return Thing(
        piece.name,
        piece.kind,
        ObjectRole(piece.role),
        piece.room,
        at,
        piece.colour,
        piece.material,
        _pose(piece.approach, at),
        piece.door,
    )


def _item(item: Item, at: Position) -> Thing:
    return Thing(item.name, item.kind, ObjectRole.ITEM, item.room, at, item.colour, item.material)


def _relation(item: Item) -> str:
    return "on" if item.on is not None else "inside"
