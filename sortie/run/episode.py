"""The episode loop: one short loop; recording and progress are observers passed in."""

from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from sortie.agents.base import Agent
from sortie.core.errors import ConfigError
from sortie.core.records_io import write_atomic
from sortie.core.trajectory import StepRecord, Timings, TrajectoryFooter, TrajectoryHeader
from sortie.missions.runtime import MissionRuntime


class Observer(Protocol):
    """Something that watches an episode: a recorder, a progress bar."""

    def on_start(self, header: TrajectoryHeader) -> None:
        """Called once before the first step."""
        ...

    def on_step(self, record: StepRecord) -> None:
        """Called after every step."""
        ...

    def on_end(self, footer: TrajectoryFooter) -> None:
        """Called once when the episode has ended."""
        ...


def run_episode(runtime: MissionRuntime, agent: Agent, header: TrajectoryHeader,
                observers: Sequence[Observer] = ()) -> TrajectoryFooter:
    """Run one episode to its end and return its footer.

    An agent that raises ends the episode as ``agent_error``; a backend that raises ends it as
    ``backend_error``; both keep the traceback in the footer. Nothing else stops the loop.
    """
    for observer in observers:
        observer.on_start(header)
    error = None
    try:
        observation = runtime.reset(header.episode, header.seed)
    except ConfigError:
        raise
    except Exception:  # noqa: BLE001 - a failing simulator is data, not a crash
        return _finish(runtime, observers, "backend_error", traceback.format_exc(), reset=False)
    assert runtime.brief is not None
    agent.reset(runtime.brief, header.seed)
    while not runtime.done:
        started = time.perf_counter()
        try:
            action = agent.act(observation)
        except Exception:  # noqa: BLE001 - a misbehaving agent produces data
            return _finish(runtime, observers, "agent_error", traceback.format_exc())
        thinking = time.perf_counter() - started
        try:
            observation, record = runtime.step(action, decision_seconds=thinking)
        except ConfigError:
            raise
        except Exception:  # noqa: BLE001
            return _finish(runtime, observers, "backend_error", traceback.format_exc())
        record = record.model_copy(update={"timings": Timings(
            agent=thinking, backend=record.timings.backend, render=record.timings.render)})
        for observer in observers:
            observer.on_step(record)
    return _finish(runtime, observers, None, error)


def _finish(runtime: MissionRuntime, observers: Sequence[Observer], reason: str | None,
            error: str | None, reset: bool = True) -> TrajectoryFooter:
    if reason is not None:
        runtime.abort(reason)
    if reset:
        footer = runtime.footer(error)
    else:
        footer = TrajectoryFooter(outcome="failure", failure_reason=reason, steps=0, error=error)
    for observer in observers:
        observer.on_end(footer)
    return footer


class JsonlRecorder:
    """Writes a trajectory record (header, steps, footer) to one JSONL file.

    The file appears only when the episode has ended (written to a temporary name, then
    renamed), so a killed run never leaves a record that looks complete.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lines: list[str] = []

    def on_start(self, header: TrajectoryHeader) -> None:
        """Start the record."""
        self._lines = [header.model_dump_json()]

    def on_step(self, record: StepRecord) -> None:
        """Add a step line."""
        self._lines.append(record.model_dump_json())

    def on_end(self, footer: TrajectoryFooter) -> None:
        """Add the footer and write the file."""
        self._lines.append(footer.model_dump_json())
        write_atomic(self.path, "\n".join(self._lines) + "\n")
