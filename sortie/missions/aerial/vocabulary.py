"""The aerial family's own words: task actions and the events of clamping and carrying them out.

Flight itself is a shared action (``sortie.core.actions.Fly``, a multirotor body's motion);
what only an aerial mission asks for is declared here and added to the words records and the
wire read (``sortie.core.vocabulary.WORDS``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from sortie.core.actions import FamilyAction
from sortie.core.vocabulary import WORDS, Vocabulary


class TaskActionKind(StrEnum):
    """Task actions of an aerial mission."""

    LAND = "land"
    DROP_PAYLOAD = "drop_payload"
    COLLECT_SAMPLE = "collect_sample"
    DONE = "done"


@dataclass(frozen=True, slots=True)
class TaskAction(FamilyAction):
    """Execute one task action of an aerial mission, reporting ``report`` with it."""

    kind: TaskActionKind
    report: str | None = None


class AerialEvent(StrEnum):
    """What happens in an aerial step besides the shared events."""

    CLAMPED = "clamped"
    """A magnitude outside its limits was clamped (the detail says from what)."""
    TASK_ACTION = "task_action"
    """A task action (land, drop_payload, collect_sample) was carried out."""


VOCABULARY = WORDS.declare(Vocabulary("aerial", actions={"task": TaskAction}, events=AerialEvent))
"""The aerial family's words."""
