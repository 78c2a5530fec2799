"""Trajectory records: a header, one line per step, a footer; stored as JSONL.

Layout versions (``TrajectoryHeader.schema_version``):

- 1: statuses, event kinds and outcomes as free strings; an episode ended by an agent or
  backend error had outcome ``failure``.
- 2 (now): statuses, event kinds and outcomes are enums; an episode ended by an agent or
  backend error has outcome ``error`` (so it can never be mistaken for a scored attempt).
  ``sortie.core.records_io.read_trajectory`` upgrades version 1 records as it reads them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Union

from pydantic import BaseModel, ConfigDict, Field

from sortie.core.episode import EpisodeSpec, PoseField, Record
from sortie.core.household import RoundRecord
from sortie.core.observation import EventKind
from sortie.core.run_config import EpisodeConfig, PluginRef
from sortie.core.serialize import action_models

RECORD_SCHEMA_VERSION = 2
"""Version of the trajectory record layout written now (see the module docstring)."""


class Outcome(StrEnum):
    """How an episode ended."""

    SUCCESS = "success"
    FAILURE = "failure"
    """The agent tried and did not succeed: a scored attempt."""
    ERROR = "error"
    """The harness, the agent's code or the backend failed: not a scored attempt."""


class FailureReason(StrEnum):
    """Why the episode loop itself ended an episode (families add their own reasons)."""

    AGENT_ERROR = "agent_error"
    """The agent raised (or its worker could not run it)."""
    BACKEND_ERROR = "backend_error"
    """The backend raised, or the worker running the episode kept dying."""


ERROR_REASONS = frozenset(FailureReason)
"""Failure reasons that mean the harness, not the agent's skill, ended the episode."""


class StageStatus(StrEnum):
    """Where a stage stands."""

    PENDING = "pending"
    ACTIVE = "active"
    DONE = "done"


class TrajectoryHeader(Record):
    """What is fixed for the whole episode."""

    kind: str = "header"
    schema_version: int = RECORD_SCHEMA_VERSION
    episode: EpisodeSpec
    config: EpisodeConfig = Field(default_factory=EpisodeConfig)
    """How the episode was played: the clock, the family's settings, the run seed, the suite
    and the repeat (``sortie.core.run_config``)."""
    agent: PluginRef
    backend: PluginRef
    seed: int
    code_version: str


class Timings(Record):
    """Wall-clock seconds spent in one step, by part."""

    agent: float = 0.0
    backend: float = 0.0
    render: float = 0.0


class EventRecord(Record):
    """An event as stored: its kind, the object involved and a detail."""

    kind: EventKind
    target: str | None = None
    detail: str = ""


class ModelCallRecord(Record):
    """One call an agent made to a model server while deciding a step."""

    model: str
    latency: float
    """Seconds from request to answer (on a replay: the latency recorded when it was made)."""
    tokens_in: int = 0
    tokens_out: int = 0
    attempts: int = 1
    """HTTP attempts, retries included."""
    cached: bool = False
    """Answered from the response cache instead of the server."""
    error: str | None = None
    """Kind of failure (``rate_limit``, ``server``, ``timeout``, ``connection``, ``format``...)."""


class RecordedActionBase(BaseModel):
    """Base of the recorded actions: frozen, strict about fields, every number as sent."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=True)


RECORDED_ACTIONS = action_models(RecordedActionBase, int | float | None)
"""The record's form of each action type: its fields, numbers exactly as the agent sent them
(an integer stays one; a non-finite number is written, and read back, as null)."""
RecordedAction: Any = Annotated[
    Union[tuple(RECORDED_ACTIONS.values())],  # noqa: UP007  (a union of the derived models)
    Field(discriminator="type"),
]


class StepRecord(Record):
    """One step of an episode, as the mission saw it after the action."""

    kind: str = "step"
    index: int
    pose: PoseField
    action: RecordedAction
    """The action the agent sent, typed (``sortie.core.actions``; ``type`` names it)."""
    events: list[EventRecord] = Field(default_factory=list)
    stages: dict[str, StageStatus] = Field(default_factory=dict)
    """Status of every stage after this step."""
    stage: str | None = None
    """The stage active during this step (None once all are done)."""
    target_distance: float | None = None
    """Horizontal distance to the active stage's target after this step."""
    collisions: int = 0
    """Collisions counted in this step (0 or 1: a contact counts once, then a cooldown)."""
    clock_sim: float
    clock_latency: float
    holding: str | None = None
    timings: Timings = Field(default_factory=Timings)
    agent_output: str | None = None
    """What the agent said about this step (reasoning, raw model text), if anything."""
    model_calls: list[ModelCallRecord] = Field(default_factory=list)
    """The model calls made to decide this step's action."""
    frames: dict[str, str] = Field(default_factory=dict)
    """With ``--record-frames``: the sha256 of each sensor's image (PNG), by sensor name."""
    round: RoundRecord | None = None
    """A household step is one planner round: the subtask, its attempts and their outcome."""


class StageRecord(Record):
    """How one stage went: distances to its target, effort, and whether it was done."""

    name: str
    status: StageStatus
    target: str | None = None
    d_init: float | None = None
    d_best: float | None = None
    d_final: float | None = None
    steps: int = 0
    clock_sim: float = 0.0
    clock_latency: float = 0.0
    collisions: int = 0
    started_step: int | None = None
    done_step: int | None = None


class FailedDecision(Record):
    """The agent's last decision, which raised instead of returning an action."""

    agent_seconds: float = Field(ge=0)
    """Seconds spent in it, waiting on a model server and its retries included."""
    model_calls: list[ModelCallRecord] = Field(default_factory=list)
    """The model calls it made, the failed ones included (each with its error kind)."""


class TrajectoryFooter(Record):
    """How the episode ended."""

    kind: str = "footer"
    outcome: Outcome
    failure_reason: str | None = None
    """A ``FailureReason`` or the family's own reason (e.g. ``timeout_s2``); None on success."""
    steps: int
    clock_sim: float = 0.0
    clock_latency: float = 0.0
    stages: list[StageRecord] = Field(default_factory=list)
    facts: dict[str, Any] = Field(default_factory=dict)
    """Family-specific end state that metrics read (e.g. ``picked_up``, final distances)."""
    error: str | None = None
    """Traceback or message when the episode ended in an error."""
    failed_decision: FailedDecision | None = Field(default=None, exclude_if=lambda v: v is None)
    """When the agent raised: the time and model calls of that last decision (left out of
    the record otherwise, so records of episodes that ended normally are unchanged)."""
