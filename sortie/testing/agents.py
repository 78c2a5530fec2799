"""Agent doubles: for testing the runner's fault handling (the household planner: household.py)."""

from __future__ import annotations

import os

from sortie.agents.random_agent import RandomAgent
from sortie.core.observation import Brief


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
