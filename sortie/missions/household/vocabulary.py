"""The household family's own words: the subtask action, its step record, its observation part.

A planner names subtasks (``Subtask``) rather than moving a body; each step record keeps the
round as the executor ran it (``HouseholdStep.part``, a ``RoundRecord``); after each round the
planner sees four views and the executor's answer (``observation.HouseholdObservation``, sent
as ``messages.HouseholdMessage``). They are declared here and added to the words records and
the wire read (``sortie.core.vocabulary.WORDS``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sortie.core.actions import FamilyAction
from sortie.core.records import StepPart, StepRecord
from sortie.core.vocabulary import WORDS, Vocabulary
from sortie.missions.household.messages import OBSERVATION_PART
from sortie.missions.household.records import RoundRecord


@dataclass(frozen=True, slots=True)
class Subtask(FamilyAction):
    """A household planner's subtask: ``action`` on ``target`` (optionally at ``place``)."""

    action: str
    target: str
    skill: str
    place: str | None = None


class HouseholdStep(StepRecord):
    """A household step: one planner round, kept whole in ``part`` (stored as ``round``)."""

    part_model: ClassVar[type[StepPart] | None] = RoundRecord


def round_of(step: StepRecord) -> RoundRecord | None:
    """Return the planner round a step record keeps (None: not a household step, or none)."""
    part = step.part
    return part if isinstance(part, RoundRecord) else None


VOCABULARY = WORDS.declare(
    Vocabulary(
        "household",
        actions={"subtask": Subtask},
        step_record=HouseholdStep,
        observation=OBSERVATION_PART,
    )
)
"""The household family's words."""
