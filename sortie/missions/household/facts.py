"""What a household episode's footer records: how it ended and the final state."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from sortie.core.facts import Facts, read_facts
from sortie.missions.household.skills import Profile, Setting

if TYPE_CHECKING:
    from sortie.core.trajectory import Trajectory


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
    setting: Setting | None = None
    """The execution setting: ``privileged`` or ``sensor-only``."""
    skills: Profile | None = None
    """The skills' success model: ``default`` or ``perfect``."""
    held: str | None = None
    """The item in the gripper at the end."""
    places: dict[str, PlaceFacts] = Field(default_factory=dict)
    """Every item's place at the end."""
    open: dict[str, bool] = Field(default_factory=dict)
    """Every container's state at the end (True: open)."""


def household_facts(trajectory: Trajectory) -> HouseholdFacts:
    """Return the facts of a household record (checked to be one)."""
    return read_facts(trajectory, HouseholdFacts, "household")
