"""What a household episode carries beyond the common EpisodeSpec: its task (docs/household.md)."""

from __future__ import annotations

from pydantic import ValidationError

from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.missions.household.records import HouseholdTask
from sortie.missions.household.skills import expert_skill_problems


def household_task(spec: EpisodeSpec) -> HouseholdTask:
    """Return the validated task of ``spec``, or raise naming the episode and the field.

    What needs no world is checked here, at load: the fields, and that each expert step's
    skill is a skill made for its verb. What needs the world is checked before round one
    (``sortie.missions.household.fit``): building an apartment costs about 0.1 s, too dear
    for every load of a suite or a record.
    """
    try:
        task = HouseholdTask.model_validate(spec.mission)
    except ValidationError as error:
        problems = "; ".join(_problem(e) for e in error.errors())
        raise ConfigError(f"episode {spec.episode_id}: {problems}") from None
    skills = expert_skill_problems(task)
    if skills:
        raise ConfigError(f"episode {spec.episode_id}: mission.{'; mission.'.join(skills[:5])}")
    return task


def _problem(error: object) -> str:
    assert isinstance(error, dict)
    where = ".".join(map(str, error["loc"]))
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"mission.{where}: {message}" if where else f"mission: {message}"
