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
from sortie.core.errors import ConfigError
from sortie.core.facts import PlaceFacts
from sortie.core.household import ObjectRole
from sortie.core.pose import Pose

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

        Raises:
            ConfigError: an object has a household role but lacks an attribute it needs.
        """
        things, places = [], {}
        for info in objects:
            role = info.attributes.get("role")
            if role in ("item", "receptacle", "container", "room"):
                things.append(_thing(info))
            if role == "item":
                places[info.name] = _start_place(info)
        house = cls(things, places)
        house.open = {t.name: is_open(t.door) for t in things if t.door}
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


def _thing(info: ObjectInfo) -> Thing:
    attributes = info.attributes
    role = ObjectRole(str(attributes["role"]))
    approach = None
    if "approach_x" in attributes:
        x, y = _number(info, "approach_x"), _number(info, "approach_y")
        approach = Pose(x, y, info.position[2], _number(info, "approach_yaw"))
    if role is ObjectRole.ROOM:
        kind = str(attributes.get("room_type", info.semantic))
    else:
        kind = str(attributes.get("kind", info.semantic))
    door = str(attributes.get("door", "")) if role is ObjectRole.CONTAINER else None
    if door == "":
        raise ConfigError(f"household scene: container {info.name} names no door")
    if role is not ObjectRole.ITEM and approach is None:
        raise ConfigError(f"household scene: {info.name} ({role.value}) has no approach_x/_y/_yaw")
    room = info.name if role is ObjectRole.ROOM else attributes.get("room")
    return Thing(
        info.name,
        kind,
        role,
        None if room is None else str(room),
        info.position,
        str(attributes.get("colour", "")),
        str(attributes.get("material", "")),
        approach,
        door,
    )


def _start_place(info: ObjectInfo) -> PlaceFacts:
    for relation in ("on", "inside"):
        if relation in info.attributes:
            return PlaceFacts(relation=relation, place=str(info.attributes[relation]))
    return PlaceFacts(relation=FLOOR)


def _number(info: ObjectInfo, key: str) -> float:
    value = info.attributes.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"household scene: {info.name}.{key} is {value!r}, expected a number")
    return float(value)
