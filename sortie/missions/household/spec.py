"""What a household episode carries beyond the common EpisodeSpec: its task (docs/household.md)."""

from __future__ import annotations

from pydantic import ValidationError

from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.missions.household.records import HouseholdTask


def household_task(spec: EpisodeSpec) -> HouseholdTask:
    """Return the validated task of ``spec``, or raise naming the episode and the field."""
    try:
        return HouseholdTask.model_validate(spec.mission)
    except ValidationError as error:
        problems = "; ".join(_problem(e) for e in error.errors())
        raise ConfigError(f"episode {spec.episode_id}: {problems}") from None


def _problem(error: object) -> str:
    assert isinstance(error, dict)
    where = ".".join(map(str, error["loc"]))
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"mission.{where}: {message}" if where else f"mission: {message}"
