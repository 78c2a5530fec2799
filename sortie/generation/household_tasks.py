"""Household task templates: what to ask for, in which words, and what counts as done.

A template reads the house (its rooms, furniture and items) and a random generator, and drafts
one task: the instruction, its attributes, the keypaths (ordered required subtasks; several
for an open-ended task), the goal conditions on the final state, and the objects it mentions
with the names a person might use for them. ``go_to`` steps are not in keypaths (how the
robot gets somewhere is its own business); opening a closed container is, since the task
cannot be done without it. The expert's full plan is derived from the keypaths afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from sortie.generation.rejected import Rejected
from sortie.missions.household.house import House, Thing
from sortie.missions.household.names import KIND_SYNONYMS
from sortie.missions.household.records import (
    GoalCondition,
    KeyStep,
    ObjectRole,
    Relation,
    TaskAttribute,
    TaskObject,
    Verb,
)

FRUIT = ("apple", "banana", "orange")
DRINKWARE = ("mug", "cup", "bottle", "can")
CONVERSATIONAL = (
    "Hey, could you do me a favour? {task} Thanks a lot!",
    "Hi there! When you have a minute: {task} That would help me a lot.",
    "Ugh, what a day. {task} Would you mind?",
    "I'm about to head out, so please: {task} Cheers!",
)


@dataclass
class Draft:
    """A task being written: its words, attributes, keypaths, goals and the objects it names."""

    instruction: str
    attributes: list[TaskAttribute]
    keypaths: list[list[KeyStep]]
    goals: list[GoalCondition] = field(default_factory=list)


Template = Callable[[House, np.random.Generator], Draft]


# --- names --------------------------------------------------------------------------------
def words_for(house: House, thing: Thing) -> str:
    """Return an unambiguous phrase for ``thing``: ``the red mug``, ``the table in the study``."""
    kind = thing.kind.replace("_", " ")
    same_kind = [t for t in house.things.values() if t.kind == thing.kind and t.role is thing.role]
    if len(same_kind) == 1:
        return f"the {kind}"
    if thing.role is ObjectRole.ITEM:
        same_colour = [t for t in same_kind if t.colour == thing.colour]
        if len(same_colour) == 1 and thing.colour:
            return f"the {thing.colour} {kind}"
        return f"the {thing.colour} {thing.material} {kind}".replace("  ", " ")
    room = house.things[thing.room].kind.replace("_", " ") if thing.room in house.things else ""
    return f"the {kind} in the {room}" if room else f"the {kind}"


def unambiguous(house: House, thing: Thing) -> bool:
    """Return whether ``words_for(thing)`` names it alone."""
    phrase = words_for(house, thing)
    return sum(words_for(house, t) == phrase for t in house.things.values()) == 1


def task_objects(house: House, names: Sequence[str]) -> dict[str, TaskObject]:
    """Return the task's object table: each named thing's kind, role and other names."""
    table = {}
    for name in names:
        thing = house.things[name]
        phrase = words_for(house, thing).removeprefix("the ")
        kind = thing.kind.replace("_", " ")
        other = [word for word, k in KIND_SYNONYMS.items() if k == thing.kind]
        names_for = [phrase]
        if phrase == kind:
            names_for += other
        elif thing.role is ObjectRole.ITEM:
            names_for += [f"{phrase.split()[0]} {w}" for w in other]
        table[name] = TaskObject(kind=thing.kind, role=thing.role, names=sorted(set(names_for)))
    return table


def mentioned(draft: Draft) -> list[str]:
    """Return every object a draft's keypaths and goals name, in first-mention order."""
    names: list[str] = []
    for keypath in draft.keypaths:
        for step in keypath:
            names += [n for n in (step.target, step.place) if n]
    for goal in draft.goals:
        names += [n for n in (goal.object, goal.place) if n]
    return list(dict.fromkeys(names))


# --- building blocks ------------------------------------------------------------------------
def _choose(rng: np.random.Generator, things: Sequence[Thing], what: str) -> Thing:
    if not things:
        raise Rejected(f"no {what} in this apartment")
    return things[int(rng.integers(len(things)))]


def movable(house: House) -> list[Thing]:
    """Return the items a task may name (unambiguous, not already held)."""
    return [t for t in house.of_role(ObjectRole.ITEM) if unambiguous(house, t)]


def destinations(house: House, exclude: str | None = None) -> list[Thing]:
    """Return the furniture an item may be taken to (unambiguous, not ``exclude``)."""
    furniture = house.of_role(ObjectRole.RECEPTACLE) + house.of_role(ObjectRole.CONTAINER)
    return [t for t in furniture if t.name != exclude and unambiguous(house, t)]


def relocation(
    house: House, item: Thing, place: Thing, opened: set[str] | None = None
) -> tuple[list[KeyStep], GoalCondition]:
    """Return the required steps to move ``item`` to ``place`` and the goal it meets.

    ``opened`` holds the containers earlier steps of the task opened (updated here), so a
    container is opened once.
    """
    opened = set() if opened is None else opened
    steps = []
    source = house.places[item.name]
    for container in (source.place if source.relation == "inside" else None, place.name):
        if container and house.things[container].role is ObjectRole.CONTAINER:
            if not house.open[container] and container not in opened:
                steps.append(KeyStep(action=Verb.OPEN, target=container))
                opened.add(container)
    steps += [
        KeyStep(action=Verb.PICK, target=item.name),
        KeyStep(action=Verb.PUT, target=item.name, place=place.name),
    ]
    relation = Relation.INSIDE if place.role is ObjectRole.CONTAINER else Relation.ON
    return steps, GoalCondition(relation=relation, object=item.name, place=place.name)


def _preposition(place: Thing) -> str:
    return "in" if place.role is ObjectRole.CONTAINER else "on"


def _away_from(house: House, item: Thing, rng: np.random.Generator) -> Thing:
    return _choose(rng, destinations(house, exclude=house.places[item.name].place), "destination")


# --- the templates ------------------------------------------------------------------------
SHORT = ("Put {i} {p} {f}.", "Move {i} {p} {f}.", "Take {i} and leave it {p} {f}.")


def short_task(house: House, rng: np.random.Generator) -> Draft:
    """Move one item to one place."""
    item = _choose(rng, movable(house), "item")
    place = _away_from(house, item, rng)
    steps, goal = relocation(house, item, place)
    text = SHORT[int(rng.integers(len(SHORT)))]
    instruction = text.format(
        i=words_for(house, item), p=_preposition(place), f=words_for(house, place)
    )
    return Draft(instruction[0].upper() + instruction[1:], [TaskAttribute.SHORT], [steps], [goal])


def long_task(house: House, rng: np.random.Generator) -> Draft:
    """Move three items, in the order given, and close any container opened on the way."""
    items = list(movable(house))
    if len(items) < 3:
        raise Rejected("fewer than three nameable items")
    order = rng.permutation(len(items))[:3]
    steps: list[KeyStep] = []
    goals, parts, opened = [], [], set[str]()
    for k in order:
        item = items[int(k)]
        place = _away_from(house, item, rng)
        moved, goal = relocation(house, item, place, opened)
        steps += moved
        goals.append(goal)
        parts.append(f"{words_for(house, item)} {_preposition(place)} {words_for(house, place)}")
    for name in sorted(opened):
        steps.append(KeyStep(action=Verb.CLOSE, target=name))
        goals.append(GoalCondition(relation=Relation.CLOSED, object=name))
    text = f"First put {parts[0]}, then {parts[1]}, and finally {parts[2]}."
    if opened:
        text += " Close whatever you opened when you are done."
    return Draft(text, [TaskAttribute.LONG], [steps], goals)


def open_ended_task(house: House, rng: np.random.Generator) -> Draft:
    """Move any one item of a group (fruit, something to drink from) to one place."""
    candidates, phrase = _group(house, rng)
    place = _choose(rng, destinations(house), "destination")
    keypaths = [
        relocation(house, item, place)[0]
        for item in candidates[:4]
        if house.places[item.name].place != place.name
    ]
    if len(keypaths) < 2:
        raise Rejected("fewer than two alternatives away from the destination")
    text = f"Put {phrase} {_preposition(place)} {words_for(house, place)}, whichever you like."
    return Draft(text, [TaskAttribute.OPEN_ENDED], keypaths, [])


def _group(house: House, rng: np.random.Generator) -> tuple[list[Thing], str]:
    """Return the items of a group with two or more here (fruit, drinkware), and its words."""
    groups = [(FRUIT, "a piece of fruit"), (DRINKWARE, "something to drink from")]
    first = int(rng.integers(len(groups)))
    for kinds, phrase in groups[first:] + groups[:first]:
        candidates = [t for t in movable(house) if t.kind in kinds]
        if len(candidates) >= 2:
            return candidates, phrase
    raise Rejected("no group of two or more items for an open-ended task")


@dataclass(frozen=True, slots=True)
class Need:
    """A vague request: the item kinds that answer it, where they go, and the words."""

    kinds: tuple[str, ...]
    places: tuple[str, ...]
    text: str


NEEDS = (
    Need(
        ("remote",),
        ("sofa", "coffee_table"),
        "I want to watch TV from the couch, but I can never find the thing that switches "
        "channels. Leave it {p} {f}.",
    ),
    Need(
        ("book",),
        ("bed", "nightstand"),
        "I'd like to read in bed tonight; leave me something to read {p} {f}.",
    ),
    Need(("bottle", "can"), ("fridge",), "I want my drink to be cold when I get back."),
    Need(
        ("plate", "bowl"),
        ("dishwasher", "sink"),
        "The dishes are dirty; get one of them ready for washing.",
    ),
    Need(
        ("glasses",),
        ("desk", "nightstand"),
        "I can't read a thing without my glasses; leave them {p} {f}.",
    ),
    Need(
        ("toothbrush",),
        ("sink",),
        "I need to brush my teeth before bed; get my toothbrush ready {p} {f}.",
    ),
    Need(
        FRUIT,
        ("table", "coffee_table", "counter"),
        "I'm hungry; leave something I can eat {p} {f}.",
    ),
    Need(
        ("towel",),
        ("sink",),
        "I'm going to wash my hands; put something to dry them with {p} {f}.",
    ),
)


def logical_task(house: House, rng: np.random.Generator) -> Draft:
    """Answer a vague request: the item and place are inferred from what it is for."""
    order = rng.permutation(len(NEEDS))
    for k in order:
        need = NEEDS[int(k)]
        items = [t for t in movable(house) if t.kind in need.kinds]
        places = [t for t in destinations(house) if t.kind in need.places]
        if "{f}" not in need.text and len(places) != 1:
            continue  # the words do not say which one: only a lone fitting place will do
        if items and places:
            break
    else:
        raise Rejected("no vague request fits this apartment")
    place = _choose(rng, places, "place")
    keypaths = [
        relocation(house, i, place)[0]
        for i in items[:4]
        if house.places[i.name].place != place.name
    ]
    if not keypaths:
        raise Rejected("every fitting item is already in place")
    attributes = [TaskAttribute.LOGICAL] + ([TaskAttribute.OPEN_ENDED] if len(keypaths) > 1 else [])
    goals = [] if len(keypaths) > 1 else [relocation(house, items[0], place)[1]]
    text = need.text.format(p=_preposition(place), f=words_for(house, place))
    return Draft(text, attributes, keypaths, goals)


def human_style(template: Template) -> Template:
    """Return ``template`` with its instruction said the way people talk."""

    def talk(house: House, rng: np.random.Generator) -> Draft:
        draft = template(house, rng)
        frame = CONVERSATIONAL[int(rng.integers(len(CONVERSATIONAL)))]
        draft.instruction = frame.format(task=draft.instruction)
        draft.attributes = [*draft.attributes, TaskAttribute.HUMAN_STYLE]
        return draft

    return talk


TEMPLATES: dict[str, Template] = {
    "short": short_task,
    "long": long_task,
    "open_ended": open_ended_task,
    "logical": logical_task,
    "short+human_style": human_style(short_task),
    "long+human_style": human_style(long_task),
    "logical+human_style": human_style(logical_task),
}
"""Templates by the attributes their tasks carry (logical ones may add open_ended)."""
