"""Typed footer facts: the end state each mission family writes for its metrics.

A family's runtime builds one of these models at the end of an episode and dumps it into
``TrajectoryFooter.facts`` (a plain dict, so the record stays plain JSON). Metrics read facts
back only through ``facts_of`` (or the typed ``rescue_facts`` / ``aerial_facts``), which
validates them: a misspelt or unknown key is a ``ConfigError`` naming the record, never a
silent default.

Records written before a field existed still read: every field has a default, and a field
that was added later defaults to None (meaning "not recorded"). A footer written for a job
that never ran (its worker kept dying) has no facts at all and reads as all defaults.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sortie.core.errors import ConfigError

if TYPE_CHECKING:
    from sortie.core.records_io import Trajectory

Point = tuple[float, float, float]


class Facts(BaseModel):
    """Base of the facts models: frozen, and strict about unknown keys."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    def as_record(self) -> dict[str, Any]:
        """Return the facts as the plain dict stored in the footer."""
        return self.model_dump(mode="json")


class RescueFacts(Facts):
    """What a rescue episode's footer records about how it ended."""

    picked_up: bool = False
    """The casualty was picked up at some point (S2 done)."""
    dropped_in_zone: bool = False
    """The casualty was put down within the hand-off radius of the stretcher (S4 done)."""
    final_to_casualty: float | None = None
    """Horizontal distance (m) from the agent's final position to ``casualty_point``."""
    final_to_stretcher: float | None = None
    """Horizontal distance (m) from the agent's final position to ``stretcher_point``."""
    casualty_point: Point | None = None
    """Where the casualty was at the end, ``[x, y, z]`` (its base point): the point that
    ``final_to_casualty`` and the ``rescuebench-code`` scores measure to. None in records
    written before it was recorded."""
    stretcher_point: Point | None = None
    """The stretcher's base point ``[x, y, z]``, the point ``final_to_stretcher`` measures to.
    None in records written before it was recorded."""
    triggers: str | None = None
    """The trigger mode of the run: ``assisted`` or ``native``."""
    clock: str | None = None
    """The clock the budget was counted on: ``sim`` or ``latency``."""


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

    kind: str
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
    clock: str | None = None
    """The clock recorded as the mission clock: ``sim`` or ``latency``."""


class PlaceFacts(Facts):
    """Where an item is: ``on`` or ``inside`` furniture, ``held``, or on the ``floor``."""

    relation: str
    place: str | None = None


class HouseholdFacts(Facts):
    """What a household episode's footer records: how it ended and the final state."""

    ended: bool = False
    """The planner issued ``end``."""
    rounds: int = 0
    """Planner rounds taken, ``end`` included (PLWSR's L_agent)."""
    setting: str | None = None
    """The execution setting: ``privileged`` or ``sensor-only``."""
    skills: str | None = None
    """The skills' success model: ``default`` or ``perfect``."""
    held: str | None = None
    """The item in the gripper at the end."""
    places: dict[str, PlaceFacts] = Field(default_factory=dict)
    """Every item's place at the end."""
    open: dict[str, bool] = Field(default_factory=dict)
    """Every container's state at the end (True: open)."""


F = TypeVar("F", bound=Facts)


def _facts_as(trajectory: Trajectory, kind: type[F], family: str) -> F:
    """Return the footer facts of a ``family`` record, validated by ``kind``.

    Raises:
        ConfigError: a record of another family, or facts with an unknown key or a value of
            the wrong type (the message names the record and the field).
    """
    if trajectory.header.episode.family != family:
        raise ConfigError(
            f"{_name(trajectory)}: expected a {family} record, got a "
            f"{trajectory.header.episode.family} one"
        )
    try:
        return kind.model_validate(trajectory.footer.facts)
    except ValidationError as error:
        problems = "; ".join(
            f"footer.facts.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()
        )
        raise ConfigError(f"{_name(trajectory)}: {problems}") from None


def rescue_facts(trajectory: Trajectory) -> RescueFacts:
    """Return the facts of a rescue record (``facts_of``, checked to be rescue facts)."""
    return _facts_as(trajectory, RescueFacts, "rescue")


def aerial_facts(trajectory: Trajectory) -> AerialFacts:
    """Return the facts of an aerial record (``facts_of``, checked to be aerial facts)."""
    return _facts_as(trajectory, AerialFacts, "aerial")


def household_facts(trajectory: Trajectory) -> HouseholdFacts:
    """Return the facts of a household record (``facts_of``, checked to be household facts)."""
    return _facts_as(trajectory, HouseholdFacts, "household")


def _name(trajectory: Trajectory) -> str:
    header = trajectory.header
    return (
        f"record of episode {header.episode.episode_id!r} (agent {header.agent.name!r}, "
        f"seed {header.seed})"
    )
