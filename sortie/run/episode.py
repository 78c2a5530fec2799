"""The episode loop: one short loop; recording and progress are observers passed in."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from sortie.agents.base import Agent, StepOutput, SupportsStepOutput
from sortie.core.columns import StepRow
from sortie.core.errors import ConfigError
from sortie.core.observation import MissionObservation
from sortie.core.records import (
    FailedDecision,
    FailureReason,
    ModelCallRecord,
    Outcome,
    StepRecord,
    TrajectoryFooter,
    TrajectoryHeader,
)
from sortie.core.records_io import Written, write_record
from sortie.core.step_lines import StepDraft, line_of
from sortie.missions.runtime import AgentSaid, MissionRuntime

T = TypeVar("T")
BACKEND_ERROR = FailureReason.BACKEND_ERROR


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


def run_episode(
    runtime: MissionRuntime,
    agent: Agent,
    header: TrajectoryHeader,
    observers: Sequence[Observer] = (),
    keep_frames: Callable[[MissionObservation], dict[str, str]] | None = None,
) -> TrajectoryFooter:
    """Run one episode to its end and return its footer.

    ``keep_frames`` stores a step's images and returns their hashes for the step record.

    An agent that raises ends the episode as ``agent_error``; a backend that raises ends it as
    ``backend_error``; both keep the traceback in the footer. Nothing else stops the loop.
    """
    for observer in observers:
        observer.on_start(header)
    try:
        reset = runtime.reset
        observation = _guard(BACKEND_ERROR, reset, header.episode, header.seed)
    except _Failed as failed:
        return _finish(runtime, observers, failed, started=False)
    try:
        _guard(FailureReason.AGENT_ERROR, agent.reset, runtime.brief, header.seed)
        output_of = _output_reader(agent)
        told = [_step_taker(observer) for observer in observers]
        advance = runtime.advance
        while not runtime.done:
            started = time.perf_counter()
            action = _decide(agent, observation, started)
            thinking = time.perf_counter() - started
            if output_of is None:  # an agent that says nothing
                charged, said = thinking, AgentSaid(thinking)
            else:
                output = output_of()
                stated = output.decision_seconds
                charged = thinking if stated is None else stated
                said = AgentSaid(thinking, output.text, output.calls)
            observation, draft = _guard(BACKEND_ERROR, advance, action, charged, said)
            if keep_frames is not None:  # the frames' hashes: known once the step is made
                draft.frames = keep_frames(observation)
            # The step's values checked as its record's model would (a NaN the backend reported
            # ends the episode): writing its line does it.
            _guard(BACKEND_ERROR, draft.line)
            for tell in told:
                tell(draft)
    except _Failed as failed:
        return _finish(runtime, observers, failed)
    return _finish(runtime, observers, None)


@runtime_checkable
class DraftObserver(Protocol):
    """An observer that takes a step as its draft (``StepDraft``), not as a built record.

    The recorder is one: it keeps the step's line and row, so no step's model is built.
    """

    def on_draft(self, draft: StepDraft) -> None:
        """Called after every step, once the draft's line is written (its values checked)."""
        ...


def _step_taker(observer: Observer) -> Callable[[StepDraft], None]:
    """Return what hands ``observer`` each step: its draft, or its built record.

    Asked once an episode (a check against a runtime protocol is not free).
    """
    if isinstance(observer, DraftObserver):
        return observer.on_draft
    return lambda draft: observer.on_step(draft.record())


class _Failed(Exception):
    """The agent or the backend raised: the episode ends with ``reason`` and the traceback."""

    def __init__(self, reason: FailureReason, calls: tuple[ModelCallRecord, ...] = ()) -> None:
        super().__init__(reason)
        self.reason, self.trace = reason, traceback.format_exc()
        self.calls = calls
        """The model calls of the failed call, if it failed on a model server."""
        self.decision: FailedDecision | None = None


def _guard(reason: FailureReason, call: Callable[..., T], *args: Any) -> T:
    """Return ``call(*args)``; turn any error but a bad-input one into ``_Failed(reason)``."""
    try:
        return call(*args)
    except ConfigError:
        raise  # bad input or a misuse of the API: a bug to report, not episode data
    except Exception as error:  # noqa: BLE001 - a misbehaving agent or simulator produces data
        # A model client's error carries the calls it made (``ModelCallError.calls``); read
        # by duck type, so running an episode does not import the model client.
        calls = tuple(c for c in getattr(error, "calls", ()) if isinstance(c, ModelCallRecord))
        raise _Failed(reason, calls) from None


def _decide(agent: Agent, observation: Any, started: float) -> Any:
    """Return the agent's action; if it raises, keep the decision's time and model calls."""
    try:
        return _guard(FailureReason.AGENT_ERROR, agent.act, observation)
    except _Failed as failed:
        seconds = time.perf_counter() - started
        failed.decision = FailedDecision(agent_seconds=seconds, model_calls=list(failed.calls))
        raise


def _output_reader(agent: Agent) -> Callable[[], StepOutput] | None:
    """Return what reads the agent's words and model calls after each of its actions.

    None: the agent says nothing of them. Asked once an episode: a check against a runtime
    protocol looks up the agent's attributes one by one, which cost more than the rest of a
    step's record.
    """
    if isinstance(agent, SupportsStepOutput):
        return lambda: _guard(FailureReason.AGENT_ERROR, _checked_output, agent)
    return None


def _checked_output(agent: SupportsStepOutput) -> StepOutput:
    """Return the agent's output once its words and calls are of the kinds a record keeps.

    Checked here, as the agent's doing: the step's record is made inside the runtime's step,
    where a bad field would read as the backend's failure.
    """
    output = agent.step_output()
    if output.text is not None and not isinstance(output.text, str):
        raise TypeError(f"step_output(): text must be a str or None, got {type(output.text)}")
    for call in output.calls:
        if not isinstance(call, ModelCallRecord):
            raise TypeError(f"step_output(): calls must be ModelCallRecords, got {type(call)}")
    return output


def _finish(
    runtime: MissionRuntime,
    observers: Sequence[Observer],
    failed: _Failed | None,
    started: bool = True,
) -> TrajectoryFooter:
    if failed is None:
        footer = runtime.footer()
    elif started:
        runtime.abort(failed.reason)
        footer = runtime.footer(failed.trace)
        footer = footer.model_copy(update={"failed_decision": failed.decision})
    else:
        footer = TrajectoryFooter(
            outcome=Outcome.ERROR, failure_reason=failed.reason, steps=0, error=failed.trace
        )
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
        self._lines: list[bytes] = []
        self._steps: list[StepRow] = []
        self._readable = True
        """Whether every step line so far reads back by how it was written."""
        self.written: Written | None = None
        """The record as written at the episode's end (its bytes and columns), for scoring."""

    def on_start(self, header: TrajectoryHeader) -> None:
        """Start the record."""
        self._lines, self._steps = [line_of(header).encode()], []
        self._readable = True

    def on_step(self, record: StepRecord) -> None:
        """Add a step line."""
        self._lines.append(line_of(record).encode())
        self._steps.append(StepRow.of(record))
        self._readable = False  # a model's line: scanned at the end

    def on_draft(self, draft: StepDraft) -> None:
        """Add a step line, written from the step's draft (the same bytes as its record's)."""
        self._lines.append(draft.line())
        self._steps.append(draft.row())
        self._readable = self._readable and draft.readable()

    def on_end(self, footer: TrajectoryFooter) -> None:
        """Add the footer and write the file, with its columns (see ``write_record``)."""
        self._lines.append(line_of(footer).encode())
        self.written = write_record(self.path, self._lines, self._steps, self._readable)
