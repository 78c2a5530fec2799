"""The household family's test double: a planner that names scripted subtasks."""

from __future__ import annotations

from collections.abc import Sequence

from sortie.core.actions import Action
from sortie.core.observation import Brief, MissionObservation, Sensor
from sortie.missions.household.vocabulary import Subtask


class ScriptedPlanner:
    """A test double of a household planner: it names the given subtasks in order, then end.

    Each subtask is ``(action, target, skill)`` or ``(action, target, skill, place)``; the
    planner's words are passed on as written, so a script can name unknown actions, skills
    or objects to test the executor's refusals.
    """

    name = "scripted-planner"
    families = frozenset({"household"})
    sensors: frozenset[Sensor] = frozenset()

    def __init__(self, script: Sequence[Sequence[str]] = ()) -> None:
        """Remember the script."""
        self.script = [tuple(s) for s in script]
        self._next = 0

    def reset(self, brief: Brief, seed: int) -> None:
        """Start the script again."""
        self._next = 0

    def act(self, observation: MissionObservation) -> Action:
        """Return the next scripted subtask, or end when the script is done."""
        if self._next >= len(self.script):
            return Subtask("end", "", "")
        action, target, skill, *place = self.script[self._next]
        self._next += 1
        return Subtask(action, target, skill, place[0] if place else None)
