"""What an aerial instruction asks for, read with keyword rules.

The instruction names one thing to find (its semantic class), maybe colours, and either a
question (plate, number, colour, species, kind, text, count), a task action, a patrol, or
nothing (an inspection). Street names, addresses and compass sides cannot be seen from the
air by this agent, so they are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from sortie.agents.explorer.perception import clue_colours
from sortie.missions.aerial.vocabulary import TaskActionKind


class Question(StrEnum):
    """What the report must say."""

    NONE = "none"
    PLATE = "plate"
    NUMBER = "number"
    COLOUR = "colour"
    SPECIES = "species"
    KIND = "kind"
    TEXT = "text"
    COUNT = "count"


CLASS_WORDS = {
    "water tower": "water_tank",
    "water tank": "water_tank",
    "tank": "water_tank",
    "landing pad": "landing_pad",
    "helipad": "landing_pad",
    "pad": "landing_pad",
    "solar panel": "solar_panel",
    "solar": "solar_panel",
    "panel": "solar_panel",
    "power line": "pylon",
    "pylon": "pylon",
    "car": "car",
    "vehicle": "car",
    "house": "house",
    "building": "building",
    "sign": "sign",
    "statue": "statue",
    "animal": "animal",
    "zebra": "animal",
    "elephant": "animal",
    "rhino": "animal",
    "giraffe": "animal",
    "deer": "animal",
    "crate": "crate",
    "payload": "crate",
    "water": "water",
    "pond": "water",
    "river": "water",
    "waterhole": "water",
    "pool": "water",
    "fence": "fence",
    "road": "road",
    "street": "road",
    "avenue": "road",
}
"""Words (singular) naming a semantic class; the longest match wins where words overlap."""
_CLASS_RE = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, CLASS_WORDS), key=len, reverse=True)) + r")(?:e?s)?\b"
)
_LANDMARKS = frozenset({"road", "fence"})
"""Classes that place a target rather than being one ("the car parked on Oak Street")."""
_QUESTIONS = (
    (Question.PLATE, r"\b(?:licen[cs]e|number plate|plate|registration)\b"),
    (Question.COUNT, r"\bhow many\b|\bcount\b|\bnumber of (?!the\b|its\b)"),
    (Question.COLOUR, r"\bcolou?r\b"),
    (Question.SPECIES, r"\bspecies\b|\bwhat (?:kind of )?animal\b"),
    (Question.KIND, r"\bdepict|\bfigure, a horse\b|\bkind of\b"),
    (Question.NUMBER, r"\bnumber\b(?! \d)"),  # "building number 12" names, not asks
    (
        Question.TEXT,
        r"\bread\b|\bwritten\b|\bsays?\b|\bstencil|\blabel\b|\btext\b|\bword\b"
        r"|\bname\b",
    ),
)
_TASKS = (
    (TaskActionKind.LAND, r"\bland\b|\blanding\b(?! pad)|\bbring the drone down\b"),
    (TaskActionKind.DROP_PAYLOAD, r"\bpayload\b|\bdrop\b|\bdeliver\b"),
    (TaskActionKind.COLLECT_SAMPLE, r"\bsample\b"),
)
_ALTITUDE = re.compile(r"(\d+(?:\.\d+)?)\s*m(?:etres|eters)?\s+altitude")


@dataclass(frozen=True, slots=True)
class Goal:
    """What an instruction asks the agent to do.

    Attributes:
        target: the semantic class to find, or None when no known class is named.
        colours: colour words that qualify the target (``the red car``).
        question: what to report.
        task: the task action to carry out at the target, if any.
        patrol: whether the instruction asks for a patrol.
        altitude: the patrol altitude the instruction gives, metres, if any.
        counted: for a patrol that counts, the class counted along the way.
        roof: whether a colour question is about the target's roof (its topmost surface).
    """

    target: str | None
    colours: tuple[str, ...] = ()
    question: Question = Question.NONE
    task: TaskActionKind | None = None
    patrol: bool = False
    altitude: float | None = None
    counted: str | None = None
    roof: bool = False


def parse_instruction(text: str) -> Goal:
    """Return the goal an aerial instruction describes."""
    lower = " ".join(text.lower().replace("-", " ").split())
    classes = [CLASS_WORDS[m.group(1)] for m in _CLASS_RE.finditer(lower)]
    task = next((kind for kind, rule in _TASKS if re.search(rule, lower)), None)
    question = next((q for q, rule in _QUESTIONS if re.search(rule, lower)), Question.NONE)
    if task is not None:
        question = Question.NONE  # "drop the payload by the MED crate" asks nothing
    if re.search(r"\bpatrol\b", lower):
        return _patrol(lower, classes, question)
    target = _target(classes, task)
    roof = question is Question.COLOUR and bool(re.search(r"\broof\b", lower))
    return Goal(target, _target_colours(lower, target), question, task, roof=roof)


def _target(classes: list[str], task: TaskActionKind | None) -> str | None:
    """Return the first class named, skipping places (roads) and the payload itself."""
    if task is TaskActionKind.COLLECT_SAMPLE:
        return "water"
    things = [c for c in classes if c not in _LANDMARKS]
    if task is TaskActionKind.DROP_PAYLOAD and len(things) > 1 and things[0] == "crate":
        things = things[1:] if "crate" in things[1:] else things  # "the payload ... the crate"
    return things[0] if things else (classes[0] if classes else None)


def _target_colours(lower: str, target: str | None) -> tuple[str, ...]:
    """Return the colour words that qualify the target (``colour`` itself is no colour)."""
    return clue_colours(lower) if target is not None else ()


def _patrol(lower: str, classes: list[str], question: Question) -> Goal:
    """Return a patrol goal: follow the named line (road by default), maybe count on it."""
    altitude = _ALTITUDE.search(lower)
    follow = next((c for c in classes if c in ("road", "fence", "pylon", "water")), "road")
    counted = None
    if question is Question.COUNT:
        match = re.search(r"how many (\w+)", lower)
        counted = CLASS_WORDS.get(match.group(1).rstrip("s")) if match else None
    return Goal(
        follow,
        (),
        question if counted else Question.NONE,
        None,
        True,
        float(altitude.group(1)) if altitude else None,
        counted,
    )
