"""From a planner's words to a scene object: exact names, the task's synonyms, described kinds.

A planner may name a thing by its scene name (``mug_1``), by one of the task's names for it
(``the red cup``), or by a description: a kind with colour or material words (``red mug``,
``refrigerator``). A description that fits several things means the nearest one, as EMMOE's
executor does; the robot's own position decides, so the same words may mean another mug in
another room. A task's name for an object is meant to pick out one thing: when the words are
the task's name for several things the skill may act on (two "cabinet in the dining room"),
``AmbiguousName`` names them, and the executor refuses the round (F2) rather than guess.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sortie.missions.household.house import Thing
from sortie.missions.household.records import TaskObject, normalise

KIND_SYNONYMS: dict[str, str] = {
    "refrigerator": "fridge",
    "freezer": "fridge",
    "cupboard": "cabinet",
    "closet": "wardrobe",
    "couch": "sofa",
    "settee": "sofa",
    "worktop": "counter",
    "countertop": "counter",
    "kitchen counter": "counter",
    "dining table": "table",
    "bookshelf": "shelf",
    "bookcase": "shelf",
    "basin": "sink",
    "night stand": "nightstand",
    "bedside table": "nightstand",
    "television stand": "tv_stand",
    "tv stand": "tv_stand",
    "coffee table": "coffee_table",
    "writing desk": "desk",
    "microwave oven": "microwave",
    "dish washer": "dishwasher",
    "living room": "living_room",
    "lounge": "living_room",
    "dining room": "dining_room",
    "office": "study",
    "hall": "hallway",
    "corridor": "hallway",
    "cellphone": "phone",
    "mobile phone": "phone",
    "smartphone": "phone",
    "television remote": "remote",
    "remote control": "remote",
    "notebook computer": "laptop",
    "frying pan": "pan",
    "saucepan": "pot",
    "spectacles": "glasses",
    "soap bar": "soap",
}
"""Words for kinds that are not the kind's own name (a kind is also named with spaces)."""


class AmbiguousName(ValueError):
    """The planner's words are the task's name for several things: which one is not said."""

    def __init__(self, words: str, candidates: list[str]) -> None:
        self.words, self.candidates = words, candidates
        super().__init__(f"{words!r} names several things ({', '.join(candidates)})")


def resolve(
    text: str,
    things: dict[str, Thing],
    task_objects: dict[str, TaskObject],
    distance: Callable[[str], float],
    allowed: Iterable[str] | None = None,
) -> Thing | None:
    """Return the thing ``text`` names, or None if nothing fits.

    Args:
        text: the planner's words.
        things: every nameable thing of the house by scene name.
        task_objects: the task's objects with their other names.
        distance: the robot's distance to a thing by name (the nearest fitting one is meant).
        allowed: the names the skill can act on (sensor-only: what the robot has seen); None
            allows every thing.

    Raises:
        AmbiguousName: the words are the task's name for several allowed things.
    """
    pool = things if allowed is None else {n: things[n] for n in allowed if n in things}
    stripped = text.strip()
    if stripped in pool:
        return pool[stripped]
    wanted = normalise(stripped)
    named = [
        name
        for name, entry in task_objects.items()
        if name in pool and wanted in {normalise(n) for n in entry.names}
    ]
    if len(named) > 1:
        raise AmbiguousName(stripped, sorted(named))
    if named:
        return pool[named[0]]
    fitting = [t for t in pool.values() if _describes(wanted, t)]
    return min(fitting, key=lambda t: (distance(t.name), t.name)) if fitting else None


def _describes(words: str, thing: Thing) -> bool:
    """Return whether ``words`` are the thing's kind, with only its colour or material before."""
    for kind_words in _kind_words(thing.kind):
        if words == kind_words:
            return True
        if words.endswith(" " + kind_words):
            extra = set(words[: -len(kind_words)].split())
            if extra and extra <= {thing.colour.lower(), thing.material.lower()}:
                return True
    return False


def _kind_words(kind: str) -> list[str]:
    own = kind.replace("_", " ")
    return [own, *(word for word, k in KIND_SYNONYMS.items() if k == kind)]
