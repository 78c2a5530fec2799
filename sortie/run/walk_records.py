"""A gymnasium walk that writes sortie records: a trained policy scored like a ``sortie run``.

``record_walk`` plans a run in the store as ``sortie run`` would (agent ``gym-policy``, the
env's camera, sensors, clock, backend and settings), walks the run's episodes that are not
stored yet across the copies of a vector env (``sortie.missions.gym_walk``), each with the
seed ``sortie run`` gives it, and has each copy write the record of each episode it walks
(``EpisodeRecorder``). Each finished record is scored from the record alone and stored, so
``sortie report`` shows the policy beside any agent; a walk that stops half way keeps what
finished, and the same call walks the rest.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import gymnasium as gym

from sortie.core.errors import ConfigError
from sortie.core.records_io import write_atomic
from sortie.core.run_config import PoseSettings
from sortie.core.step_lines import line_of
from sortie.missions.gym_walk import WalkedEpisode, WalkPlan, walk_suite
from sortie.run.batch import DEFAULT_STORE, Plan, RunRequest, plan_run
from sortie.run.jobs import Job, header_of, score_record
from sortie.run.store import Store

RUN_FIELDS = ("camera", "clock", "backend", "backend_args", "pose")
"""Env keywords that are the run's own fields; ``sensors`` goes to the agent, the rest of
the keywords but the env-only ones are the family's settings."""
ENV_ONLY = ("render_mode", "max_depth")
"""Env keywords that shape only the gymnasium side (what ``render`` gives, depth clipping)."""


@dataclass(frozen=True, slots=True)
class WalkRecording:
    """Where a recorded walk goes and what it is called."""

    suite: str
    """The suite walked (a packaged name or a file)."""
    policy: str
    """A name for the policy (the run's ``-a policy=``), e.g. ``ppo-aerial-3``."""
    run_id: str | None = None
    store: Path = DEFAULT_STORE
    seed: int = 0
    """The run seed: each episode's seed is the one ``sortie run --seed`` gives it."""
    limit: int | None = None
    """Walk only the suite's first ``limit`` episodes (``sortie run --limit``)."""
    env_args: Mapping[str, Any] = field(default_factory=dict)
    """The env's keywords (as ``gymnasium.make`` takes them), but ``suite``/``episodes``."""


def record_walk(
    env_id: str,
    policy: Callable[[Any], Any],
    recording: WalkRecording,
    *,
    wrap: Callable[[gym.Env[Any, Any]], gym.Env[Any, Any]] | None = None,
    copies: int = 1,
    asynchronous: bool = False,
) -> list[WalkedEpisode]:
    """Walk ``recording.suite`` with ``policy`` and store every episode as a run; return them.

    Args:
        env_id: the env's id (``sortie/Rescue-v1``...).
        policy: maps the vector env's batched observation to its batched action.
        recording: the suite, the run's name and store, the seed and the env's keywords.
        wrap: wraps each bare env as the policy expects (``gym_wrappers.rl_ready``).
        copies: how many copies step together; the records do not depend on it.
        asynchronous: each copy in its own process.

    Raises:
        ConfigError: a keyword the env does not take, or a run id stored with another config.
    """
    for taken in ("suite", "episodes"):
        if taken in recording.env_args:
            raise ConfigError(f"record_walk: env_args[{taken!r}]: the walk takes the suite")
    make = partial(_make_env, env_id, recording.suite, dict(recording.env_args), wrap)
    sensors, position = _probe(make)
    with Store(recording.store) as store:
        plan = plan_run(_run_request(recording, sensors), store)
        walk = _walk_plan(position, plan)
        try:
            return walk_suite(make, policy, copies, asynchronous=asynchronous, plan=walk)
        finally:
            _store_finished(store, plan)  # also after a crash: no finished episode is lost


def _make_env(
    env_id: str,
    suite: str,
    env_args: dict[str, Any],
    wrap: Callable[[gym.Env[Any, Any]], gym.Env[Any, Any]] | None,
) -> gym.Env[Any, Any]:
    """Return one copy of the env, wrapped as the policy expects (a module function: pickles)."""
    env = gym.make(env_id, suite=suite, **env_args)
    return wrap(env) if wrap is not None else env


def _probe(make: Callable[[], gym.Env[Any, Any]]) -> tuple[str, dict[str, int]]:
    """Return the sensors a copy of the env reads (sorted) and each episode's position."""
    env = make()
    try:
        bare: Any = env.unwrapped
        sensors = ",".join(sorted(s.value for s in bare.sensors))
        return sensors, {e.episode_id: k for k, e in enumerate(bare.episodes)}
    finally:
        env.close()


def _run_request(recording: WalkRecording, sensors: str) -> RunRequest:
    """Return the ``sortie run`` request that plays what the env plays."""
    given = dict(recording.env_args)
    run = {name: given.pop(name) for name in RUN_FIELDS if name in given}
    if isinstance(run.get("pose"), Mapping):
        run["pose"] = PoseSettings.model_validate(run["pose"])
    for name in (*ENV_ONLY, "sensors"):
        given.pop(name, None)
    return RunRequest(
        (recording.suite,),
        "gym-policy",
        agent_args={"policy": recording.policy, "sensors": sensors},
        store=recording.store,
        run_id=recording.run_id,
        seed=recording.seed,
        limit=recording.limit,
        family_settings={k: v for k, v in given.items() if v is not None},
        **run,
    )


def _walk_plan(position: Mapping[str, int], plan: Plan) -> WalkPlan:
    """Return the walk of the run's episodes not stored yet, each recorded by its copy."""
    indices = tuple(position[job.episode.episode_id] for job in plan.todo)
    records = {
        position[job.episode.episode_id]: (str(job.record), line_of(header_of(job)))
        for job in plan.todo
    }
    seeds = tuple(job.seed for job in plan.todo)
    return WalkPlan(indices, seeds, partial(_recorded, records))


def _recorded(
    records: Mapping[int, tuple[str, str]], walk: gym.Env[Any, Any], copy: int
) -> gym.Env[Any, Any]:
    """Return a copy's walk wrapped by its recorder (a module function, so it pickles)."""
    return EpisodeRecorder(walk, records)


class EpisodeRecorder(gym.Wrapper[Any, Any, Any, Any]):
    """Writes the record of each walked episode: its header, the mission's step lines, its end.

    The record is written when the episode ends (as ``JsonlRecorder`` does: a temporary name,
    then renamed), so a walk killed mid-episode leaves no record that looks complete.
    """

    def __init__(self, env: gym.Env[Any, Any], records: Mapping[int, tuple[str, str]]) -> None:
        """Record the walk's episodes ``records`` names: position -> (path, header line)."""
        super().__init__(env)
        self.records = records
        self._lines: list[str] | None = None
        self._path: Path | None = None
        self._started = 0.0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Start the next episode; start its record if the walk counts it."""
        observation, info = self.env.reset(seed=seed, options=options)
        chosen = self.records.get(int(info["walk_index"]))
        self._path, self._lines = (Path(chosen[0]), [chosen[1]]) if chosen else (None, None)
        self._started = time.perf_counter()
        return observation, info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        """Step; add the mission's step line, and write the record when the episode ends."""
        observation, reward, terminated, truncated, info = self.env.step(action)
        mission_env = self.env.unwrapped
        if self._lines is not None and self._path is not None:
            self._lines.append(mission_env.last_line)  # type: ignore[attr-defined]
            if terminated or truncated:
                self._lines.append(line_of(mission_env.mission.footer()))  # type: ignore[attr-defined]
                _write_record(self._path, self._lines, time.perf_counter() - self._started)
                self._lines = None
        return observation, reward, terminated, truncated, info


def _write_record(path: Path, lines: list[str], wall_seconds: float) -> None:
    """Write a record, and beside it the episode's wall time (the store's row keeps it)."""
    write_atomic(path, "\n".join(lines) + "\n")
    write_atomic(_wall_file(path), f"{wall_seconds!r}\n")


def _wall_file(record: Path) -> Path:
    return record.with_suffix(".wall")


def _store_finished(store: Store, plan: Plan) -> None:
    """Score and store each planned episode whose record was written."""
    for job in plan.todo:
        if job.record.is_file():
            store.add(plan.run_id, score_record(job, _wall_seconds(job)))


def _wall_seconds(job: Job) -> float:
    """Return the wall time the copy measured for the episode (0 if it is not there)."""
    wall = _wall_file(job.record)
    seconds = float(wall.read_text()) if wall.is_file() else 0.0
    wall.unlink(missing_ok=True)
    return seconds
