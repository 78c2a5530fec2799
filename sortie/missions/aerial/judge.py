"""Judges of aerial reports: does what the agent reported match the expected answer?

The default ``exact`` judge is deterministic and offline: it normalises both texts for the
kind of answer (a number, a licence plate, a colour, a label, free text), maps synonyms, and
allows small misspellings through rapidfuzz. Every verdict says which judge gave it and its
score, and is stored in the record's footer. Two more judges register lazily: ``embedding``
(``judge_embedding.py``, the ``judge`` extra) and ``llm`` (``judge_llm.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from rapidfuzz import fuzz

from sortie.core.registry import Registry
from sortie.missions.aerial.spec import AnswerKind


@dataclass(frozen=True, slots=True)
class Verdict:
    """A judge's decision on one report."""

    judge: str
    match: bool
    score: float
    """How close the report came, 0..1 (1: exact after normalisation)."""
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        """Return the verdict as a plain dict (for the record)."""
        return asdict(self)


Judge = Callable[[str | None, str, AnswerKind], Verdict]

NUMBER_WORDS = {
    word: index
    for index, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}

COLOUR_SYNONYMS = {
    "gray": "grey",
    "silver": "grey",
    "charcoal": "grey",
    "crimson": "red",
    "maroon": "red",
    "scarlet": "red",
    "navy": "blue",
    "azure": "blue",
    "cyan": "blue",
    "teal": "green",
    "lime": "green",
    "olive": "green",
    "golden": "yellow",
    "gold": "yellow",
    "beige": "white",
    "ivory": "white",
    "cream": "white",
    "violet": "purple",
    "magenta": "pink",
    "tan": "brown",
    "orange-red": "orange",
}
"""Colour words folded onto the palette's names."""

LABEL_SYNONYMS = {
    "automobile": "car",
    "vehicle": "car",
    "sedan": "car",
    "hatchback": "car",
    "suv": "car",
    "lorry": "truck",
    "pickup": "truck",
    "van": "truck",
    "stag": "deer",
    "doe": "deer",
    "fawn": "deer",
    "human": "person",
    "man": "person",
    "woman": "person",
    "pedestrian": "person",
    "people": "person",
    "helipad": "landing pad",
    "tank": "water tank",
    "panel": "solar panel",
    "box": "crate",
    "sculpture": "statue",
    "monument": "statue",
    "tower": "pylon",
    "rhinoceros": "rhino",
    "elephants": "elephant",
    "zebras": "zebra",
    "giraffes": "giraffe",
}
"""Label words folded onto the scene's class and kind names."""

COLOURS = frozenset(
    {
        "red",
        "blue",
        "green",
        "yellow",
        "white",
        "black",
        "grey",
        "orange",
        "purple",
        "pink",
        "brown",
    }
)
"""Colour names after folding; a colour report naming two of them is a hedge."""

FUZZY_THRESHOLD = 85.0
"""rapidfuzz ratio (0–100) from which a near-miss counts as a match: one wrong character in
a seven-character plate scores 85.7."""


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)?", text.lower())


def _numbers(text: str) -> set[float]:
    found = {float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", text)}
    return found | {float(NUMBER_WORDS[w]) for w in _words(text) if w in NUMBER_WORDS}


def _judge_number(report: str, expected: str) -> tuple[bool, float]:
    # Exactly the expected numbers: a report that hedges ("2, 3 or 4") names others too.
    wanted, said = _numbers(expected), _numbers(report)
    match = bool(wanted) and said == wanted
    return match, 1.0 if match else 0.0


def _judge_plate(report: str, expected: str) -> tuple[bool, float]:
    plate = re.sub(r"[^A-Z0-9]", "", expected.upper())
    said = re.sub(r"[^A-Z0-9]", "", report.upper())
    # The plate may sit inside a sentence: align it with the best window of the report, but
    # only when the report is long enough to hold it (a lone "K" must not match "KX427Q").
    score = fuzz.partial_ratio(plate, said) if len(said) >= len(plate) else fuzz.ratio(plate, said)
    return score >= FUZZY_THRESHOLD, score / 100.0


def _folded(words: list[str], synonyms: dict[str, str]) -> str:
    return " ".join(synonyms.get(w, w) for w in words)


def _judge_words(
    report: str, expected: str, synonyms: dict[str, str], rivals: frozenset[str] = frozenset()
) -> tuple[bool, float]:
    said, wanted = _folded(_words(report), synonyms), _folded(_words(expected), synonyms)
    if not wanted or set(said.split()) & (rivals - set(wanted.split())):
        return False, 0.0  # nothing expected, or the report also names a rival (hedging)
    if f" {wanted} " in f" {said} ":
        return True, 1.0
    score = fuzz.partial_ratio(wanted, said) if len(wanted) >= 4 else 0.0
    return score >= FUZZY_THRESHOLD, score / 100.0


def _judge_text(report: str, expected: str) -> tuple[bool, float]:
    said, wanted = " ".join(_words(report)), " ".join(_words(expected))
    if wanted and f" {wanted} " in f" {said} ":
        return True, 1.0
    # The whole expected text must be in the report, give or take a misspelling: a report
    # of a few of its words ("Harbour" for "Harbour Bakery") is not the answer.
    score = fuzz.partial_ratio(wanted, said) if len(said) >= len(wanted) else 0.0
    return score >= FUZZY_THRESHOLD, score / 100.0


def exact_judge(report: str | None, expected: str, kind: AnswerKind) -> Verdict:
    """Return whether ``report`` states ``expected``, normalised for ``kind``."""
    if not report or not report.strip():
        return Verdict("exact", False, 0.0, "no report")
    if kind is AnswerKind.NUMBER:
        match, score = _judge_number(report, expected)
    elif kind is AnswerKind.PLATE:
        match, score = _judge_plate(report, expected)
    elif kind is AnswerKind.COLOUR:
        match, score = _judge_words(report, expected, COLOUR_SYNONYMS, COLOURS)
    elif kind is AnswerKind.LABEL:
        match, score = _judge_words(report, expected, LABEL_SYNONYMS)
    else:
        match, score = _judge_text(report, expected)
    return Verdict("exact", match, round(score, 4), f"{kind.value}: expected {expected!r}")


JUDGES: Registry[Judge] = Registry("judge")
JUDGES.add("exact", "sortie.missions.aerial.judge:exact_judge")
# The embedding judge needs the `judge` extra; the llm judge reads SORTIE_JUDGE_* settings.
JUDGES.add("embedding", "sortie.missions.aerial.judge_embedding:embedding_judge", extra="judge")
JUDGES.add("llm", "sortie.missions.aerial.judge_llm:llm_judge")
JUDGES.add_entry_points("sortie.judges")  # judges of installed packages (docs/plugins.md)
