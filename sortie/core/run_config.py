"""A run's configuration, typed: what the results store keeps of a run, what a record's header says.

As inspect_ai keeps an eval's ``EvalSpec`` and ``EvalConfig``, sortie keeps two models, one
per place a configuration is written, with every field documented once and spelt one way:

- ``RunConfig``: the store's ``runs.config`` (JSON, keys sorted): what decides a run's
  results; written when the run begins, compared when it resumes.
- ``EpisodeConfig``: ``TrajectoryHeader.config``: how one episode of the run was played.

The fields both hold (the clock, the family's settings, the run seed) are defined once, in
``PlayConfig``, which both extend. Readers use attributes, never string keys.

What older sorties wrote still reads:

- a store row naming the run seed ``seed`` (before the configuration was typed) reads as
  ``run_seed`` (``RunConfig``'s validator; the row itself is never rewritten, so a resumed
  run compares its own configuration with the row as read);
- a row or header from before runs recorded the family's settings has ``settings`` None, and
  its settings under their old keys (``triggers``, ``judge``, ``setting``, ``skills``) kept as
  extra fields, which ``sortie.export.replay`` reads;
- a header written without a configuration (an imported record) reads with the defaults and
  writes back as it was, ``{}`` (``EpisodeConfig`` writes only the fields it was given).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from sortie.core.episode import Record


class PluginRef(Record):
    """A registered plug-in by name, with the arguments it was built with."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class PoseSettings(BaseModel):
    """How the pose sensor reads, for an agent that asks for it (``Sensor.POSE``).

    Like habitat-lab's GPS and compass: a position in metres and a heading in degrees. The
    noise is declared, not hidden: every step each of x, y and z gets its own zero-mean
    Gaussian error of ``position_noise`` metres (standard deviation) and the heading one of
    ``heading_noise`` degrees, drawn from a generator seeded by the episode's seed, so the same
    seed reads the same noisy poses. Exact (both 0) by default.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    frame: Literal["world", "start"] = "world"
    """``world``: the episode's own coordinates (x, y, z, yaw counter-clockwise from +x), as
    MissionBench tells its drone; ``start``: relative to the body's pose at the start, x ahead,
    y to the left, the heading from the start's (habitat-lab's episodic GPS and compass)."""
    position_noise: float = Field(default=0.0, ge=0.0, le=100.0)
    """Standard deviation of each position axis' error, metres."""
    heading_noise: float = Field(default=0.0, ge=0.0, le=180.0)
    """Standard deviation of the heading's error, degrees."""


class PlayConfig(BaseModel):
    """How a run's episodes are played: the fields a run's config and each header share."""

    # Extra keys are kept, not refused: stores and records of older sorties hold keys this
    # one no longer writes (see the module docstring), and they must still read.
    model_config = ConfigDict(frozen=True, extra="allow", allow_inf_nan=False)

    clock: str = "sim"
    """Which clock the budget is counted on: ``sim`` or ``latency``."""
    settings: dict[str, Any] | None = None
    """The family's settings, every one given, in their JSON form (the family's settings
    model reads them back); None: written before runs recorded them."""
    run_seed: int = 0
    """The run seed; each episode's seed derives from it and the episode's key."""
    # Left out while None, as rows and headers were written before the pose sensor existed:
    # a run whose agent reads no pose writes the same bytes as before.
    pose: PoseSettings | None = Field(default=None, exclude_if=lambda value: value is None)
    """How the pose sensor reads; None: the agent does not read it."""


class EpisodeConfig(PlayConfig):
    """How one episode was played, as its record's header says (``TrajectoryHeader.config``)."""

    suite: str = ""
    """The name of the suite the episode was run from."""
    repeat: int = 0
    """Which repeat of the episode this was (0 for the first)."""

    @model_serializer(mode="wrap")
    def _as_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Only the fields given are written, in declaration order: a run's header gives all
        # five, and a header made without a configuration (an imported record) stays {}.
        written: dict[str, Any] = handler(self)
        return {name: value for name, value in written.items() if name in self.model_fields_set}


class RunConfig(PlayConfig):
    """What decides a run's results: stored with the run, compared when it is resumed."""

    agent: PluginRef
    """The agent's registered name and its arguments."""
    backend: PluginRef
    """The backend's registered name and its arguments, the family's body and camera and the
    sensors rendered among them."""
    family: str
    """The mission family of the run's suites."""
    suites: dict[str, str] = Field(default_factory=dict)
    """Each suite's name and a hash of its episodes (a changed suite is a changed run)."""
    repeats: int = 1
    """Times each episode is run, each with its own seed."""
    # The three below are left out of the row while they hold their defaults, as rows have
    # always been written: a row of a run that used none of them stays as it was.
    limit: int | None = Field(default=None, exclude_if=lambda value: value is None)
    """Only the first ``limit`` episodes of each suite are run (None: all)."""
    episodes: tuple[str, ...] = Field(default=(), exclude_if=lambda value: not value)
    """Only these episode ids are run, sorted (empty: all)."""
    record_frames: bool = Field(default=False, exclude_if=lambda value: not value)
    """Every step's ego RGB image is stored."""

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: Any) -> Any:
        # Migrated on read: rows written before this model named the run seed "seed".
        if isinstance(data, dict) and "seed" in data and "run_seed" not in data:
            data = {**data, "run_seed": data["seed"]}
            del data["seed"]
        return data
