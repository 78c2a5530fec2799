"""Clue texts for rescue episodes, one style per level, written from the scene's semantics.

Styles (docs/rescue.md, Rules): ``direct`` (L1, what the casualty looks like), ``surroundings``
(L2, looks plus the objects nearby), ``landmark`` (L3, where, by named landmarks),
``topology`` (L4, which area and how many doors away) and ``minimal`` (L5, barely a hint).
Only what the scene records is quoted: clothing, colours, house numbers, plates, shop names.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from sortie.core.errors import ConfigError
from sortie.sim.scene import Scene, SceneObject

Point = tuple[float, float, float]
NOT_LANDMARKS = frozenset(
    {
        "ground",
        "floor",
        "ceiling",
        "wall",
        "roof",
        "road",
        "sidewalk",
        "grass",
        "water",
        "door",
        "gate",
        "window",
        "platform",
        "railing",
        "fence",
        "track",
        "person",
        "stretcher",
        "ambulance",
        "item",
    }
)
"""Classes too large, too structural or too episode-specific to point at."""
NAMED = ("house", "shop", "sign", "car", "train", "building")
"""Landmarks that carry an identity (a number, a name, a plate)."""
WORLD_WORDS = {
    "forest": "woods",
    "campus": "campus",
    "suburb": "neighbourhood",
    "street": "shopping district",
    "tower": "building",
    "station": "station",
    "flexible_room": "room",
}
"""How a clue names the whole world, by builder."""
COMPASS = ("east", "north-east", "north", "north-west", "west", "south-west", "south", "south-east")


@dataclass(frozen=True, slots=True)
class ClueFacts:
    """What a clue may draw on besides the scene."""

    outfit: Mapping[str, str]
    """The casualty's ``top``, ``top_color``, ``bottom``, ``bottom_color`` and ``hair``."""
    casualty: Point
    """Where the casualty lies (floor point)."""
    start: Point
    """Where the agent starts (feet)."""
    surface: str
    """Semantic class of the floor under the casualty, e.g. ``sidewalk``."""
    doors: int = 0
    """Closed doors on every shortest way there (L4)."""


def write_clue(style: str, scene: Scene, facts: ClueFacts, rng: np.random.Generator) -> str:
    """Return the clue text of ``style`` for the casualty described by ``facts``."""
    writer = WRITERS.get(style)
    if writer is None:
        raise ConfigError(f"clue style {style!r} is not one of: {', '.join(WRITERS)}")
    return writer(scene, facts, rng)


def _direct(scene: Scene, facts: ClueFacts, rng: np.random.Generator) -> str:
    return (
        f"A person in {_outfit(facts.outfit)}, with {facts.outfit['hair']} hair, is lying "
        f"on the {_floor(facts.surface)}."
    )


def _surroundings(scene: Scene, facts: ClueFacts, rng: np.random.Generator) -> str:
    near = list(dict.fromkeys(describe(o) for o in landmarks(scene, facts.casualty, 8.0)))[:2]
    where = f" near {' and '.join(near)}" if near else ""
    return f"A person in {_outfit(facts.outfit)} is lying on the {_floor(facts.surface)}{where}."


def _landmark(scene: Scene, facts: ClueFacts, rng: np.random.Generator) -> str:
    named = [o for o in landmarks(scene, facts.casualty, 20.0) if o.semantic in NAMED]
    area = area_of(scene, facts.casualty)
    if named:
        anchor = named[0]
        where = f"{compass(_centre(anchor), facts.casualty)} of {describe(anchor)}"
    elif area is not None:
        where = (
            f"in the {area.attributes.get('kind', 'area')} in the "
            f"{_region(scene, facts.casualty)} of the {_world_word(scene)}"
        )
    else:
        where = f"in the {_region(scene, facts.casualty)} part of the {_world_word(scene)}"
    minor = [o for o in landmarks(scene, facts.casualty, 5.0) if o.semantic not in NAMED]
    by = f", by {describe(minor[0])}" if minor else ""
    top = _a(f"{facts.outfit['top_color']} {facts.outfit['top']}")
    return f"Someone in {top} is lying {where}{by}, out of sight from where you start."


def _topology(scene: Scene, facts: ClueFacts, rng: np.random.Generator) -> str:
    target, origin = area_of(scene, facts.casualty), area_of(scene, facts.start)
    top = _a(f"{facts.outfit['top_color']} {facts.outfit['top']}")
    doors = "a closed door" if facts.doors == 1 else f"{facts.doors} closed doors"
    if target is None or origin is None or target.name == origin.name:
        where = f"{compass(facts.start, facts.casualty)} of where you start"
    else:
        kind = target.attributes.get("kind", "area")
        where = (
            f"in the {kind} {compass(_centre(origin), _centre(target))} of the "
            f"{origin.attributes.get('kind', 'area')} you start in"
        )
    return f"Someone in {top} is lying {where}; the way passes {doors}."


def _minimal(scene: Scene, facts: ClueFacts, rng: np.random.Generator) -> str:
    up = facts.casualty[2] > facts.start[2]
    if facts.surface == "platform":
        return "Someone collapsed up on the platform."
    places = ("upstairs", "on an upper floor") if up else ("downstairs", "on a lower floor")
    return f"Someone collapsed {places[int(rng.integers(2))]}."


WRITERS: dict[str, Callable[[Scene, ClueFacts, np.random.Generator], str]] = {
    "direct": _direct,
    "surroundings": _surroundings,
    "landmark": _landmark,
    "topology": _topology,
    "minimal": _minimal,
}


def landmarks(scene: Scene, point: Point, radius: float) -> list[SceneObject]:
    """Return the objects worth pointing at within ``radius`` m of ``point``, nearest first."""
    found = []
    for obj in scene.objects:
        if obj.semantic in NOT_LANDMARKS or (obj.semantic == "sign" and "shop" in obj.attributes):
            continue  # a shop's sign repeats the shop's name
        gap = _gap(obj, point)
        if gap <= radius:
            found.append((gap, obj.name, obj))
    return [obj for _, _, obj in sorted(found, key=lambda item: item[:2])]


def describe(obj: SceneObject) -> str:
    """Return a noun phrase for ``obj`` quoting its recorded attributes."""
    a = {k: str(v) for k, v in obj.attributes.items()}
    kind = obj.semantic.replace("_", " ")
    if obj.semantic == "house" and "number" in a:
        street = f" on {a['street']}" if "street" in a else ""
        return f"the {a.get('color', '')} house number {a['number']}{street}".replace("  ", " ")
    if obj.semantic == "shop" and "shop_name" in a:
        return f"{a['shop_name']} (the {a.get('color', '')} shop)".replace("  ", " ")
    if obj.semantic == "sign" and "text" in a:
        return f'the sign reading "{a["text"]}"'
    if obj.semantic == "car" and "plate" in a:
        return f"{_a(a.get('color', ''))} car with plate {a['plate']}".replace("  ", " ")
    if obj.semantic == "tree" and "kind" in a:
        return f"{_a(a['kind'])} tree"
    if obj.semantic == "log":
        return "a fallen log"
    detail = a.get("color") or a.get("material") or ""
    return _a(f"{detail} {kind}".strip())


def area_of(scene: Scene, point: Point) -> SceneObject | None:
    """Return the area floor (an object with a ``kind`` and an ``area``) under ``point``."""
    for obj in scene.objects:
        if "area" in obj.attributes and "kind" in obj.attributes:
            low, high = obj.bounds()
            if low[0] <= point[0] <= high[0] and low[1] <= point[1] <= high[1]:
                return obj
    return None


def compass(origin: Point, target: Point) -> str:
    """Return the compass direction (+y is north) from ``origin`` to ``target``."""
    angle = math.degrees(math.atan2(target[1] - origin[1], target[0] - origin[0]))
    return COMPASS[round(angle / 45) % 8]


def _gap(obj: SceneObject, point: Point) -> float:
    low, high = obj.bounds()
    nearest = np.clip(np.asarray(point, np.float64), low, high)
    return float(np.linalg.norm(nearest - point))


def _centre(obj: SceneObject) -> Point:
    x, y, z = (float(v) for v in obj.center())
    return (x, y, z)


def _region(scene: Scene, point: Point) -> str:
    x0, y0, x1, y1 = scene.bounds
    col = min(2, int(3 * (point[0] - x0) / (x1 - x0)))
    row = min(2, int(3 * (point[1] - y0) / (y1 - y0)))
    names = (
        ("south-west", "south", "south-east"),
        ("west", "central", "east"),
        ("north-west", "north", "north-east"),
    )
    return names[row][col]


def _world_word(scene: Scene) -> str:
    builder = (scene.origin or "").split("(")[0]
    return WORLD_WORDS.get(builder, "area")


def _outfit(outfit: Mapping[str, str]) -> str:
    return (
        f"{_a(outfit['top_color'])} {outfit['top']} and {outfit['bottom_color']} {outfit['bottom']}"
    )


def _floor(surface: str) -> str:
    return {"road": "road", "sidewalk": "pavement"}.get(surface, surface)


def _a(phrase: str) -> str:
    return f"an {phrase}" if phrase[:1].lower() in "aeiou" else f"a {phrase}"
