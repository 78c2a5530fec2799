"""Replaying a stored record: the observation before every step, checked against the record.

Runs are deterministic (same seed, same world, same actions, same outcome), so a record and
the run's settings give back each observation the agent was shown. Each replayed step is
compared with the stored one (pose, and for a household round its status and code); the
first difference is an error naming the record and the step, never silently other data.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

from sortie.backends.base import Backend, OracleView, SupportsOracleView
from sortie.backends.catalog import HARNESS_ARGS, build_from_ref
from sortie.core.errors import ConfigError
from sortie.core.observation import Brief, MissionObservation
from sortie.core.pose import Pose
from sortie.core.records import StepRecord
from sortie.core.run_config import RunConfig
from sortie.core.serialize import action_from_dict
from sortie.core.trajectory import Trajectory
from sortie.missions.family import FamilySettings
from sortie.missions.registry import FAMILIES
from sortie.missions.runtime import MissionRuntime
from sortie.run.jobs import backend_ref, mission_runtime

POSE_TOLERANCE = 1e-6
"""Metres (and degrees) a replayed pose may differ from the stored one."""


@dataclass(frozen=True, slots=True)
class ReplayedStep:
    """One step of a replay: what the agent saw before it, and the step as stored."""

    observation: MissionObservation
    record: StepRecord
    brief: Brief
    pose: Pose
    """Where the agent was before the step."""
    oracle: OracleView | None = None
    """The privileged view of the replayed world (None: the backend has none), for exports
    that label the visited states with the expert's choice."""


def replay(
    trajectory: Trajectory,
    path: Path,
    run_config: RunConfig,
    sensors: Collection[str],
) -> Iterator[ReplayedStep]:
    """Yield each step of the record at ``path`` with the observation before it.

    The record's header says how the episode was played (its clock and family settings);
    ``run_config``, the run's stored configuration, is read only for records made before
    headers held the settings. ``sensors`` are the images to render (they do not change what
    happens).

    Raises:
        ConfigError: the run was not on the embedded simulator, or a step does not replay as
            recorded (another sortie version, or a damaged record).
    """
    header = trajectory.header
    if header.backend.name != "embedded":
        raise ConfigError(
            f"{path}: recorded on backend {header.backend.name!r}; export replays records "
            "on the embedded simulator only"
        )
    runtime, backend = _runtime(trajectory, run_config, sensors)
    try:
        observation = runtime.reset(header.episode, header.seed)
        assert runtime.brief is not None
        charged = 0.0
        oracle = backend.oracle_view() if isinstance(backend, SupportsOracleView) else None
        for step in trajectory.steps:
            yield ReplayedStep(observation, step, runtime.brief, backend.pose(), oracle)
            action = action_from_dict(step.action.model_dump())
            observation, again = runtime.step(action, step.clock_latency - charged)
            _check_same(path, step, again)
            charged = step.clock_latency
    finally:
        backend.close()


def _runtime(
    trajectory: Trajectory, run_config: RunConfig, sensors: Collection[str]
) -> tuple[MissionRuntime, Backend]:
    header = trajectory.header
    own = {k: v for k, v in header.backend.args.items() if k not in HARNESS_ARGS}
    # The run's own camera, if it had one: the frames are what the agent saw.
    camera = header.backend.args.get("camera")
    backend = build_from_ref(
        backend_ref(header.episode.family, sorted(sensors), header.backend.name, own, camera)
    )
    settings = _settings(trajectory, run_config)
    runtime = mission_runtime(header.episode.family, backend, header.config.clock, settings)
    runtime.pose_settings = header.config.pose  # the pose sensor read as in the run, if it was
    return runtime, backend


def _settings(trajectory: Trajectory, run_config: RunConfig) -> FamilySettings:
    """Return the family settings the episode was played with, from its header if it says.

    Parsed by the family's model, as a run parses them: the runtime is given that instance.
    """
    config = trajectory.header.config
    family = FAMILIES.get(trajectory.header.episode.family)
    if config.settings is not None:
        given = config.settings
    else:  # a record from before headers held the settings: under their old keys
        older = {**(config.model_extra or {}), **(run_config.model_extra or {})}
        given = {k: v for k, v in older.items() if k in family.settings.model_fields}
    return family.parse_settings({k: v for k, v in given.items() if v is not None})


def _check_same(path: Path, stored: StepRecord, again: StepRecord) -> None:
    where = f"{path}: step {stored.index}"
    drift = max(
        abs(a - b) for a, b in zip(stored.pose.as_list(), again.pose.as_list(), strict=True)
    )
    if not math.isfinite(drift) or drift > POSE_TOLERANCE:
        raise ConfigError(
            f"{where} does not replay: pose {stored.pose.as_list()} recorded, "
            f"{again.pose.as_list()} replayed (made by another sortie version?)"
        )
    if stored.part is not None and again.part is not None:
        recorded, replayed = stored.part.verdict(), again.part.verdict()
        if recorded != replayed:
            raise ConfigError(f"{where} does not replay: {recorded} recorded, {replayed} replayed")
