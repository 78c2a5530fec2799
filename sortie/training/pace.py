"""How patient the training loop is on this machine, and the lines it prints as it goes.

A model served on a CPU answers as fast as the CPU is free: on a machine shared with other
work, the same answer takes as many times longer as there are runnable processes per core.
The loop's two waits (one answer, a server's start) therefore default to what suits an idle
machine, 300 s each, times the machine's load per core when that is more than 1, measured
when the loop starts; either can be set instead (``--answer-timeout``, ``--start-timeout``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from sortie.run.jobs import JobResult

IDLE_WAIT = 300.0
"""Seconds one answer or one server start may take on an idle machine."""


def machine_load() -> float:
    """Return the runnable processes per core over the last minute (1.0 if it cannot be told)."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return 1.0
    return load / (os.cpu_count() or 1)


@dataclass(frozen=True, slots=True)
class Waits:
    """The loop's waits, seconds: one answer of homiebot's, one server's start."""

    answer: float
    start: float

    def describe(self, load: float) -> str:
        """Return one line saying the waits and the load they were scaled by."""
        return (
            f"waits: {self.answer:.0f} s per answer, {self.start:.0f} s for a server to start "
            f"(machine load {load:.1f} per core)"
        )


def scaled_waits(answer: float | None, start: float | None, load: float) -> Waits:
    """Return the waits: those given, else ``IDLE_WAIT`` times ``load`` when it is above 1."""
    scaled = IDLE_WAIT * max(1.0, load)
    return Waits(scaled if answer is None else answer, scaled if start is None else start)


def episode_line(done: int, total: int, result: JobResult) -> str:
    """Return the line said when a scoring episode ends: which, how, how long."""
    footer = result.footer
    why = f" ({footer.failure_reason})" if footer.failure_reason else ""
    return (
        f"episode {done}/{total} {result.job.episode.episode_id}: "
        f"{footer.outcome.value}{why}, {footer.steps} steps, {result.wall_seconds:.0f} s"
    )
