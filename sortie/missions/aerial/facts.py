"""What an aerial episode's footer records: the report, the verdict, the task actions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from sortie.core.facts import Facts, read_facts
from sortie.missions.aerial.vocabulary import TaskActionKind
from sortie.missions.clock import Clock

if TYPE_CHECKING:
    from sortie.core.trajectory import Trajectory


class VerdictFacts(Facts):
    """A report judge's verdict, as stored."""

    judge: str
    """Name of the judge that gave it (``exact``, ``embedding``, ``llm``...)."""
    match: bool
    """Whether the report matched the expected answer."""
    score: float
    """How close the report came, 0..1."""
    detail: str = ""
    """The judge's explanation, if any."""


class TaskActionFacts(Facts):
    """One task action (``land``, ``drop_payload``, ``collect_sample``) carried out."""

    kind: TaskActionKind
    """The action's kind."""
    step: int
    """The step (1-based) it was carried out at."""
    at_goal: bool
    """Whether the body was within τ_d of the goal on every axis at that moment."""


class AerialFacts(Facts):
    """What an aerial episode's footer records about how it ended."""

    report: str | None = None
    """The last non-empty report the agent gave (None: it never reported)."""
    verdict: VerdictFacts | None = None
    """The judge's verdict on ``report``; None for missions that expect no answer."""
    judge: str | None = None
    """The name of the run's report judge."""
    success_by_type: dict[str, bool] = Field(default_factory=dict)
    """Each mission type's success rule, decided at the end of the flight."""
    ended_by: str | None = None
    """``done`` or ``land`` if the agent ended the flight, None if the steps ran out."""
    task_actions: list[TaskActionFacts] = Field(default_factory=list)
    """Every task action other than ``done``, in order."""
    start_distance: float | None = None
    """3D distance (m) from the start to the goal position (d_0)."""
    final_distance: float | None = None
    """3D distance (m) from the final position to the goal position."""
    step_budget: int | None = None
    """T_max, the mission's step budget."""
    clock: Clock | None = None
    """The clock recorded as the mission clock: ``sim`` or ``latency``."""


def aerial_facts(trajectory: Trajectory) -> AerialFacts:
    """Return the facts of an aerial record (checked to be one)."""
    return read_facts(trajectory, AerialFacts, "aerial")
