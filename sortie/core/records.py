"""Trajectory records: a header, one line per step, a footer; stored as JSONL.

Layout versions (``TrajectoryHeader.schema_version``):

- 1: statuses, event kinds and outcomes as free strings; an episode ended by an agent or
  backend error had outcome ``failure``.
- 2 (now): statuses, event kinds and outcomes are enums; an episode ended by an agent or
  backend error has outcome ``error`` (so it can never be mistaken for a scored attempt).
  ``sortie.core.records_io.read_trajectory`` upgrades version 1 records as it reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, field_validator

from sortie.core.episode import EpisodeSpec, PoseField, Record
from sortie.core.run_config import EpisodeConfig, PluginRef
from sortie.core.serialize import action_model
from sortie.core.vocabulary import WORDS

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
    """An event as stored: its kind, the object involved and a detail.

    ``kind`` is a declared event kind (``sortie.core.vocabulary``): core's ``EventKind`` or a
    family's own; it reads back as that enum's member.
    """

    kind: StrEnum
    target: str | None = None
    detail: str = ""

    @field_validator("kind", mode="before")
    @classmethod
    def _declared(cls, value: Any) -> StrEnum:
        if isinstance(value, StrEnum) and WORDS.event(value.value) is value:
            return value
        if isinstance(value, StrEnum):
            raise ValueError(f"event kind {value.value!r} is undeclared ({type(value).__name__})")
        if not isinstance(value, str):
            raise ValueError(f"an event kind is a string, got {type(value).__name__}")
        return WORDS.event(value)


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
    # The eight below are left out of the record while they hold their defaults, so a call
    # answered at its first attempt by the model asked for, without prices, in the format
    # set, writes the same bytes as before they existed.
    waited: float = Field(default=0.0, ge=0, exclude_if=lambda value: not value)
    """Seconds of ``latency`` spent waiting before retries: the backoff, a Retry-After, a
    health check after a time-out."""
    failed_time: float = Field(default=0.0, ge=0, exclude_if=lambda value: not value)
    """Seconds of ``latency`` spent in attempts that failed (a time-out costs its time-out);
    ``latency - waited - failed_time`` is the server's answer time."""
    served: str | None = Field(default=None, exclude_if=lambda value: value is None)
    """The model the server said it served, when that is not ``model`` (the name typed)."""
    cost: float | None = Field(default=None, ge=0, exclude_if=lambda value: value is None)
    """What the call's tokens cost at the prices given (``price_in``, ``price_out``); None:
    no prices given."""
    format: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The structured-output mode asked in, when a refusal moved it from the one set."""
    finish_reason: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """Why the answer ended, when not ``stop`` (``length``: cut at the token limit)."""
    reasoning: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The model's thinking, sent apart from the answer or in a ``<think>`` block (cut)."""
    chat_template: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The chat template that served the call: stated by the user, or told by the server."""


class StepPart(Record):
    """Base of a family's own record of a step (``StepRecord.part``): what generic code asks it.

    Reports and replays know nothing of a family's part but these two answers.
    """

    def path(self) -> list[tuple[float, float, float]]:
        """Return where the body went within the step, in order, before its end pose."""
        return []

    def verdict(self) -> str:
        """Return the step's outcome in a few words: a replay must reproduce it ("": none)."""
        return ""


class RecordedActionBase(BaseModel):
    """Base of the recorded actions: frozen, strict about fields, every number as sent."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=True)

    type: str
    """The action type's declared name (each derived model narrows it to its own)."""


RECORDED_NUMBERS: Any = int | float | None
"""How a recorded action keeps an agent's numbers: exactly as sent (an integer stays one; a
non-finite number is written, and read back, as null)."""


def recorded_action(data: Mapping[str, Any]) -> RecordedActionBase:
    """Return ``data`` as the record's form of its action type (``type`` names it)."""
    kind = data.get("type")
    if not isinstance(kind, str):
        raise ValueError(f"an action needs a type name, got {kind!r}")
    model = action_model(kind, RecordedActionBase, RECORDED_NUMBERS)
    recorded: RecordedActionBase = model.model_validate(data)  # type: ignore[assignment]
    return recorded


class StepRecord(Record):
    """One step of an episode, as the mission saw it after the action.

    A family whose steps carry more (household: the planner's round) declares a subclass that
    sets ``part_model`` (its ``Vocabulary.step_record``); readers pick the model by the
    record's family (``step_model``).
    """

    part_model: ClassVar[type[StepPart] | None] = None
    """The model of ``part`` in this family's steps (None: its steps carry none)."""

    model_config = ConfigDict(
        validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )

    kind: str = "step"
    index: int
    pose: PoseField
    action: SerializeAsAny[RecordedActionBase]
    """The action the agent sent, typed by its declared action type (``type`` names it)."""
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
    part: SerializeAsAny[StepPart] | None = Field(
        default=None, validation_alias="round", serialization_alias="round"
    )
    """The family's own record of the step, if its ``step_record`` declares one. Stored as
    ``round``: the name record schema 2 gave it, when a household round was the only kind."""

    @field_validator("action", mode="before")
    @classmethod
    def _declared_action(cls, value: Any) -> Any:
        return recorded_action(value) if isinstance(value, Mapping) else value

    @field_validator("part", mode="before")
    @classmethod
    def _family_part(cls, value: Any) -> Any:
        if value is None:
            return value
        if cls.part_model is None:
            raise ValueError(
                "these steps carry no part (round): expected null (a family's steps are read "
                "with its own model, sortie.core.records.step_model(family))"
            )
        if isinstance(value, cls.part_model):
            return value
        return cls.part_model.model_validate(value)


def step_model(family: str) -> type[StepRecord]:
    """Return the step record model of ``family``'s records (its own, or the shared one)."""
    declared = WORDS.step_record(family)
    return declared if declared is not None else StepRecord


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
