"""Typed footer facts: the base of the end state each mission family writes for its metrics.

A family's runtime builds its facts model (``missions/<family>/facts.py``) at the end of an
episode and dumps it into ``TrajectoryFooter.facts`` (a plain dict, so the record stays plain
JSON). Metrics read facts back only through ``read_facts`` (the families' ``rescue_facts``,
``aerial_facts``, ``household_facts``), which validates them: a misspelt or unknown key is a
``ConfigError`` naming the record, never a silent default.

Records written before a field existed still read: every field has a default, and a field
that was added later defaults to None (meaning "not recorded"). A footer written for a job
that never ran (its worker kept dying) has no facts at all and reads as all defaults.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from sortie.core.errors import ConfigError

if TYPE_CHECKING:
    from sortie.core.trajectory import Trajectory

Point = tuple[float, float, float]


class Facts(BaseModel):
    """Base of the facts models: frozen, and strict about unknown keys."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    def as_record(self) -> dict[str, Any]:
        """Return the facts as the plain dict stored in the footer."""
        return self.model_dump(mode="json")


F = TypeVar("F", bound=Facts)


def read_facts(trajectory: Trajectory, kind: type[F], family: str) -> F:
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


def _name(trajectory: Trajectory) -> str:
    header = trajectory.header
    return (
        f"record of episode {header.episode.episode_id!r} (agent {header.agent.name!r}, "
        f"seed {header.seed})"
    )
