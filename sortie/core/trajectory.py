"""Trajectory records: a header, one line per step, a footer; stored as JSONL."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from sortie.core.episode import SCHEMA_VERSION, EpisodeSpec, PoseField, Record


class PluginRef(Record):
    """A registered plug-in by name, with the arguments it was built with."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class TrajectoryHeader(Record):
    """What is fixed for the whole episode."""

    kind: str = "header"
    schema_version: int = SCHEMA_VERSION
    episode: EpisodeSpec
    config: dict[str, Any] = Field(default_factory=dict)
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

    kind: str
    target: str | None = None
    detail: str = ""


class StepRecord(Record):
    """One step of an episode."""

    kind: str = "step"
    index: int
    pose: PoseField
    action: dict[str, Any]
    events: list[EventRecord] = Field(default_factory=list)
    stages: dict[str, str] = Field(default_factory=dict)
    clock_sim: float
    clock_latency: float
    holding: str | None = None
    timings: Timings = Field(default_factory=Timings)


class TrajectoryFooter(Record):
    """How the episode ended."""

    kind: str = "footer"
    outcome: str
    failure_reason: str | None = None
    steps: int
