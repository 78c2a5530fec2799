"""Episode jobs: one (suite, episode, agent, repeat) each, run anywhere with a backend.

A job carries everything a worker process needs, so it runs the same in the main process, in
a pool worker or (later) on a cluster; its seed depends only on the run seed and its key.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sortie.agents.base import (
    AGENTS,
    Agent,
    SupportsOracle,
    SupportsPinnedArgs,
    close_agent,
)
from sortie.backends.base import Backend, SupportsOracleView
from sortie.backends.catalog import DEFAULT_BACKEND, Needs, resolve_backend
from sortie.core.episode import EpisodeSpec, check_name
from sortie.core.errors import ConfigError, ParameterError
from sortie.core.observation import image_sensors
from sortie.core.records import (
    FailureReason,
    Outcome,
    Timings,
    TrajectoryFooter,
    TrajectoryHeader,
)
from sortie.core.records_io import Written, read_trajectory, write_columns
from sortie.core.registry import check_arguments
from sortie.core.run_config import EpisodeConfig, PluginRef, PoseSettings, RunConfig
from sortie.core.version import VERSION
from sortie.missions.family import FamilySettings
from sortie.missions.pose_sensor import pose_settings_for
from sortie.missions.registry import FAMILIES, check_episode
from sortie.missions.runtime import MissionRuntime
from sortie.run.episode import JsonlRecorder, run_episode
from sortie.run.frames import FrameKeeper


def episode_seed(run_seed: int, episode_id: str, repeat: int = 0) -> int:
    """Return a seed derived from the run seed and the job's key (stable across machines)."""
    digest = hashlib.sha256(f"{run_seed}/{episode_id}/{repeat}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


def job_key(suite: str, episode_id: str, repeat: int) -> str:
    """Return the key that names a job within a run: ``suite/episode_id/repeat``."""
    return f"{suite}/{episode_id}/{repeat}"


@dataclass(frozen=True, slots=True)
class RunSpec:
    """What every job of a run shares: the agent, the family's settings, the backend, the seed."""

    agent: PluginRef
    factory: Callable[..., Agent] = field(compare=False)
    """The agent class; pickled by reference, so a worker imports it instead of looking it up."""
    family: str
    """The mission family of the run's suites (a run holds one)."""
    settings: FamilySettings
    """The family's settings, validated once by its model: the runtime of every job is given
    this instance, and every header and the stored config its JSON form."""
    sensors: tuple[str, ...] = ()
    clock: str = "sim"
    run_seed: int = 0
    record_frames: bool = False
    """Store every step's ego RGB image (rendered even if the agent does not look at it)."""
    backend: str = DEFAULT_BACKEND
    """The registered name of the backend every job runs on."""
    backend_args: Mapping[str, Any] = field(default_factory=dict)
    """The backend's own arguments (``-b key=value``), checked and converted."""
    pose: PoseSettings | None = None
    """How the pose sensor reads, when the agent reads it (None: it does not)."""
    camera: Mapping[str, Any] | None = None
    """The run's own camera (every ``CameraSpec`` field); None: the family's."""

    @classmethod
    def resolve(
        cls,
        agent: str,
        args: Mapping[str, Any],
        *,
        family: str,
        settings: Mapping[str, Any] | None = None,
        clock: str = "sim",
        run_seed: int = 0,
        record_frames: bool = False,
        backend: str = DEFAULT_BACKEND,
        backend_args: Mapping[str, Any] | None = None,
        worlds: Iterable[str] = (),
        pose: PoseSettings | None = None,
        camera: str | Mapping[str, Any] | None = None,
    ) -> RunSpec:
        """Resolve a run's parts in one pass, each by its owner, raising on the first refusal.

        The family parses its ``settings`` (``-F name=value``); the agent registry creates the
        agent from ``args`` (a probe, to learn its sensors); the backend catalog checks the
        backend's arguments and that it can run the family's missions on ``worlds`` (the
        episodes' world builders) for those sensors. ``pose`` says how the pose sensor reads
        (None: exact, in the world frame), for an agent that reads it. ``camera`` is the
        run's own camera (a preset or ``WxH[@HFOV][/PITCH]``, or fields), over the family's.

        Raises:
            ParameterError: ``pose`` given for an agent that does not read the pose sensor, or
                a camera that is not one.
        """
        described = FAMILIES.get(family)
        parsed = described.parse_settings(settings or {})
        args, sensors, message_pixels = _probed(agent, args, record_frames)
        own = described.own_camera(camera) if camera is not None else None
        needs = described.needs(sensors, worlds, own)
        _check_message_size(agent, message_pixels, sensors, own or described.own_camera({}))
        return cls(
            PluginRef(name=agent, args=dict(args)),
            AGENTS.get(agent),
            family,
            parsed,
            sensors,
            clock,
            run_seed,
            record_frames,
            backend,
            resolve_backend(backend, backend_args or {}, needs),
            pose_settings_for(f"agent {agent!r}", sensors, pose),
            own,
        )

    def backend_for(self, family: str) -> PluginRef:
        """Return the backend a job of ``family`` runs on: the family's body, the run's sensors."""
        return backend_ref(family, self.sensors, self.backend, self.backend_args, self.camera)

    def config(
        self,
        suites: Mapping[str, str] | None = None,
        repeats: int = 1,
        limit: int | None = None,
        episodes: Iterable[str] = (),
    ) -> RunConfig:
        """Return what decides the results (stored with the run, compared on resume).

        ``suites`` maps each suite's name to its hash; ``limit`` and ``episodes`` are the
        episode selection (None and empty: every episode).
        """
        return RunConfig(
            **self.play_fields(),
            agent=self.agent,
            backend=self.backend_for(self.family),
            family=self.family,
            suites=dict(suites or {}),
            repeats=repeats,
            limit=limit,
            episodes=tuple(sorted(episodes)),
            record_frames=self.record_frames,
        )

    def play_fields(self) -> dict[str, Any]:
        """Return the fields of ``PlayConfig`` (the run's config and every header share them)."""
        fields = {
            "clock": self.clock,
            "settings": self.settings.model_dump(mode="json"),
            "run_seed": self.run_seed,
        }
        return fields | ({"pose": self.pose} if self.pose is not None else {})


def check_agent_args(agent: str, factory: Callable[..., Any], args: Mapping[str, Any]) -> None:
    """Check ``args`` against the agent factory's signature (``**kwargs`` takes any name).

    The registry's one checker (``check_arguments``), for an agent already looked up (the
    agent server's); a run creates its agent through ``AGENTS.create``, which checks the same.

    Raises:
        ParameterError: an argument the agent does not take (with a near name, if one is, and
            the ones it does take), or a required one missing.
    """
    check_arguments(f"agent {agent!r}", factory, args, flag="-a")


@dataclass(frozen=True, slots=True)
class Job:
    """One episode of one suite with the run's agent, repeat ``repeat``, recorded at ``record``."""

    suite: str
    episode: EpisodeSpec
    repeat: int
    record: Path
    run: RunSpec
    frames: Path | None = None
    """Folder of the run's frame store (the store's folder) when frames are recorded."""

    @property
    def key(self) -> str:
        """Return the job's key within its run."""
        return job_key(self.suite, self.episode.episode_id, self.repeat)

    @property
    def seed(self) -> int:
        """Return the episode seed (the same however and wherever the job runs)."""
        return episode_seed(self.run.run_seed, self.episode.episode_id, self.repeat)


@dataclass(frozen=True, slots=True)
class JobResult:
    """A finished job: how it ended, its metrics (recomputed from the record), its timings."""

    job: Job
    footer: TrajectoryFooter
    metrics: dict[str, float]
    timings: Timings
    """Seconds spent in the agent, the backend and rendering, summed over the steps."""
    wall_seconds: float
    attempts: int = 1


def make_jobs(
    episodes: Mapping[str, Sequence[EpisodeSpec]],
    run: RunSpec,
    repeats: int,
    records: Path,
    frames: Path | None = None,
) -> list[Job]:
    """Return every job of a run, suite by suite and repeat by repeat.

    A suite's records go to ``records/<suite>/<agent>`` (``suite_folder``); ``frames`` is the
    frame store's folder, used when the run records frames.

    Raises:
        ParameterError: a suite name, the agent's name or an episode id that cannot name a
            folder or a record file.
    """
    keep = frames if run.record_frames else None
    jobs: list[Job] = []
    for suite, specs in episodes.items():
        folder = suite_folder(records, suite, run.agent.name)
        jobs += [
            Job(suite, spec, repeat, record_path(folder, spec.episode_id, repeat), run, keep)
            for repeat in range(repeats)
            for spec in specs
        ]
    return jobs


def suite_folder(records: Path, suite: str, agent: str) -> Path:
    """Return a suite's records folder, ``records/<suite>/<agent>``, checked to stay inside.

    Raises:
        ParameterError: the suite's or the agent's name is not a safe name.
        ConfigError: the folder would lie outside ``records`` (never, for checked names).
    """
    folder = records / check_name(suite, "suite name") / check_name(agent, "agent name")
    if not folder.resolve().is_relative_to(records.resolve()):
        raise ConfigError(f"suite {suite!r}: its records folder {folder} is outside {records}")
    return folder


def record_path(folder: Path, episode_id: str, repeat: int) -> Path:
    """Return the record file of an episode's repeat: ``<id, / as __>__r<repeat>.jsonl``.

    Raises:
        ParameterError: a part of the id is not a safe name (see ``check_name``).
        ConfigError: the path would lie outside ``folder`` (never, for a checked id).
    """
    parts = [check_name(part, f"episode id {episode_id!r}: part") for part in episode_id.split("/")]
    path = folder / f"{'__'.join(parts)}__r{repeat}.jsonl"
    if not path.resolve().is_relative_to(folder.resolve()):
        raise ConfigError(f"episode {episode_id!r}: its record {path} is outside {folder}")
    return path


def run_job(job: Job, backend: Backend) -> JobResult:
    """Run one job on ``backend`` with a fresh agent, write its record and score it."""
    started = time.perf_counter()
    agent: Agent = job.run.factory(**job.run.agent.args)
    try:
        written = _play(job, backend, agent)
    finally:
        close_agent(agent)  # its connections go now, not when the collector finds them
    return score_record(job, time.perf_counter() - started, written)


def _play(job: Job, backend: Backend, agent: Agent) -> Written | None:
    """Run the job's episode with ``agent`` on ``backend``; return its record as written."""
    runtime = run_runtime(job, backend)
    if isinstance(agent, SupportsOracle):
        if not isinstance(backend, SupportsOracleView):
            raise ConfigError(
                f"agent {job.run.agent.name!r} is an oracle: it needs a backend "
                f"with an oracle view, and {type(backend).__name__} has none"
            )
        agent.attach(backend.oracle_view())
    keep = FrameKeeper(job.frames) if job.frames is not None else None
    recorder = JsonlRecorder(job.record)
    run_episode(runtime, agent, header_of(job), [recorder], keep)
    return recorder.written


def run_runtime(job: Job, backend: Backend) -> MissionRuntime:
    """Return the rules of the job's family over ``backend``, with the run's family settings.

    The runtime gives the pose sensor's reading when the run's agent reads it.
    """
    runtime = mission_runtime(job.episode.family, backend, job.run.clock, job.run.settings)
    runtime.pose_settings = job.run.pose
    return runtime


def mission_runtime(
    family: str, backend: Backend, clock: str, settings: FamilySettings
) -> MissionRuntime:
    """Return ``family``'s rules over ``backend`` with its (already validated) ``settings``."""
    runtime: Callable[..., MissionRuntime] = FAMILIES.get(family).load_runtime()
    return runtime(backend, clock=clock, settings=settings)


def record_failure(job: Job, reason: FailureReason, error: str, attempts: int) -> JobResult:
    """Record a job that could not run (e.g. its worker kept dying) as failed with ``reason``."""
    recorder = JsonlRecorder(job.record)
    recorder.on_start(header_of(job))
    recorder.on_end(
        TrajectoryFooter(outcome=Outcome.ERROR, failure_reason=reason, steps=0, error=error)
    )
    result = score_record(job, 0.0, recorder.written)
    return JobResult(job, result.footer, result.metrics, result.timings, 0.0, attempts)


def _probed(
    agent: str, args: Mapping[str, Any], record_frames: bool
) -> tuple[dict[str, Any], tuple[str, ...], int | None]:
    """Make the agent once (a probe) and return what a run learns from it.

    Its arguments with any it pins, its sensors (and RGB when frames are recorded) and the most
    pixels its messages carry (None: no cap). The probe is closed again: a remote agent asked
    its server for its sensors.
    """
    probe = AGENTS.create(agent, args, flag="-a")
    try:
        pinned = probe.pinned_args() if isinstance(probe, SupportsPinnedArgs) else {}
        sensors = tuple(sorted(set(probe.sensors) | ({"rgb"} if record_frames else set())))
        return {**args, **pinned}, sensors, getattr(probe, "message_pixels", None)
    finally:
        close_agent(probe)


def _check_message_size(
    agent: str, limit: int | None, sensors: Iterable[str], camera: Mapping[str, Any]
) -> None:
    """Refuse a camera whose images cannot reach an agent that gets them in messages.

    Raises:
        ParameterError: one observation's images pass the agent's ``message_pixels``
            (``limit``; None: no cap).
    """
    images = len(image_sensors(sensors))
    pixels = camera["width"] * camera["height"] * images
    if limit is not None and pixels > limit:
        raise ParameterError(
            f"agent {agent!r} gets its images in messages of at most {limit:,} pixels; "
            f"{images} images of {camera['width']}x{camera['height']} are {pixels:,}: "
            "choose a smaller --camera or fewer images"
        )


def backend_ref(
    family: str,
    sensors: Iterable[str] = (),
    backend: str = DEFAULT_BACKEND,
    args: Mapping[str, Any] | None = None,
    camera: Mapping[str, Any] | None = None,
) -> PluginRef:
    """Return backend ``backend`` for ``family``: the family's body and camera, ``sensors``.

    ``args`` are the backend's own (already checked) arguments; the stored run config and
    every record header carry them with the name. ``camera``: the run's own (None: the
    family's, which is written only where the family fixes one).
    """
    described = FAMILIES.get(family)
    harness: dict[str, Any] = {"body": described.body, "sensors": image_sensors(sensors)}
    chosen = camera if camera is not None else described.camera
    if chosen is not None:
        harness["camera"] = dict(chosen)
    return PluginRef(name=backend, args={**(args or {}), **harness})


def backend_needs(family: str, sensors: Iterable[str], worlds: Iterable[str]) -> Needs:
    """Return what ``family``'s missions ask of a backend, for an agent seeing ``sensors``."""
    return FAMILIES.get(family).needs(sensors, worlds)


def header_of(job: Job) -> TrajectoryHeader:
    """Return the record header of ``job``."""
    config = EpisodeConfig(**job.run.play_fields(), suite=job.suite, repeat=job.repeat)
    return episode_header(
        job.episode, job.run.agent, job.run.backend_for(job.episode.family), config
    )


def episode_header(
    episode: EpisodeSpec,
    agent: PluginRef,
    backend: PluginRef,
    config: EpisodeConfig | None = None,
) -> TrajectoryHeader:
    """Return the record header of one episode run: the one place headers are made.

    ``config`` says how it was played, the family's settings every one given (a run's
    headers); None: a header that says nothing of it (the defaults, run seed 0).
    """
    config = config or EpisodeConfig()
    return TrajectoryHeader(
        episode=episode,
        agent=agent,
        backend=backend,
        config=config,
        seed=episode_seed(config.run_seed, episode.episode_id, config.repeat),
        code_version=VERSION,
    )


def score_record(job: Job, wall_seconds: float, written: Written | None = None) -> JobResult:
    """Read the job's record back and compute its metrics from it alone.

    ``written``: the record as the job's recorder has just written it, read from memory
    (``read_trajectory``), the same bytes as the file.
    """
    trajectory = read_trajectory(job.record, check=check_episode, written=written)
    if not trajectory.read_with_columns:  # the recorder could not vouch for its lines
        write_columns(job.record, trajectory)  # later reads (rescore, reports) load them
    failed = trajectory.footer.failed_decision  # a decision that raised took time too
    agent, backend, render = (sum(column) for column in trajectory.columns.timings.T.tolist())
    timings = Timings(
        agent=agent + (failed.agent_seconds if failed else 0.0), backend=backend, render=render
    )
    scorer = FAMILIES.get(job.episode.family).load_scorer()
    return JobResult(job, trajectory.footer, scorer(trajectory), timings, wall_seconds)
