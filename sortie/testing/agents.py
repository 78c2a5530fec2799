"""Agent doubles: for testing the runner's fault handling, and a scripted household planner."""

from __future__ import annotations

import os
from collections.abc import Sequence

from sortie.agents.random_agent import RandomAgent
from sortie.core.actions import Action
from sortie.core.observation import Brief, MissionObservation, Sensor
from sortie.missions.household.vocabulary import Subtask


class DyingAgent(RandomAgent):
    """A random agent whose whole process dies at ``reset``, the first ``times`` times.

    Deaths are claimed as marker files ``<marker>.<n>``, so they are counted across the worker
    processes of a run (and a replaced worker does not die again once all are claimed).
    """

    name = "dying"

    def __init__(self, marker: str, times: int | str = 1) -> None:
        """Die ``times`` times in all, counted with files named after ``marker``."""
        super().__init__()
        self.marker, self.times = marker, int(times)

    def reset(self, brief: Brief, seed: int) -> None:
        """Exit the process without cleanup if a death is left to claim; else play at random."""
        for number in range(self.times):
            try:
                os.close(os.open(f"{self.marker}.{number}", os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                continue
            os._exit(17)  # like a segfault in a simulator: no exception, no cleanup
        super().reset(brief, seed)


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
