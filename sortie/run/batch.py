"""A stored, resumable run: suites × repeats with one agent, written to a results store.

``plan_run`` turns a request into the run's jobs and the ones still to do; ``execute`` runs
those and commits each to the store as it finishes. Re-running the same run id therefore
resumes it: nothing finished is run twice, nothing is lost.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

from sortie.agents.base import AGENTS, SupportsPreflight, agent_families, close_agent
from sortie.backends.catalog import DEFAULT_BACKEND
from sortie.core.episode import EpisodeSpec, check_name
from sortie.core.errors import ConfigError, ParameterError, RunAbortedError, did_you_mean
from sortie.core.folders import claim_output
from sortie.core.records import ERROR_REASONS
from sortie.core.records_io import Suite
from sortie.core.run_config import PoseSettings
from sortie.missions.loading import load_suite
from sortie.missions.runtime import Clock
from sortie.run.executor import run_jobs
from sortie.run.fork_server import start_worker_server
from sortie.run.jobs import Job, JobResult, RunSpec, make_jobs
from sortie.run.store import Store

DEFAULT_STORE = Path("runs/sortie.db")
EXECUTORS = ("local", "ray")


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What ``sortie run`` was asked to do."""

    suites: tuple[str, ...]
    """Suite names (packaged) or suite files."""
    agent: str
    """Registered agent name."""
    _: KW_ONLY
    agent_args: Mapping[str, Any] = field(default_factory=dict)
    """Keyword arguments of the agent."""
    repeats: int = 1
    """Times each episode is run, each with its own seed."""
    workers: int = 1
    """Worker processes; 1 runs the episodes in this process."""
    run_id: str | None = None
    """Run to create or resume; None makes a new id from the agent and the time."""
    store: Path = DEFAULT_STORE
    """Results store file."""
    out: Path | None = None
    """Folder for the trajectory records; None puts them beside the store, by run id."""
    clock: str = "sim"
    """Budget clock: ``sim`` or ``latency``."""
    seed: int = 0
    """Run seed; every episode's seed derives from it and the episode's key."""
    retry_errors: bool = False
    """Also re-run the stored episodes that ended in an agent or backend error."""
    max_retries: int = 2
    """Times a job is retried after its worker process died."""
    executor: str = "local"
    """``local`` (a process pool) or ``ray``."""
    ray_address: str | None = None
    """Ray cluster to join; None starts a local Ray instance with ``workers`` CPUs."""
    record_frames: bool = False
    """Store every step's ego RGB image by content hash beside the store."""
    family_settings: Mapping[str, Any] = field(default_factory=dict)
    """The family's settings (``-F name=value``), checked by its settings model; the rest
    take their defaults (``sortie families`` lists them)."""
    limit: int | None = None
    """Run only the first ``limit`` episodes of each suite (part of the stored config)."""
    episodes: tuple[str, ...] = ()
    """Run only these episode ids (part of the stored config); empty: every episode."""
    max_consecutive_errors: int = 5
    """Stop the run after this many episodes in a row end in an error; 0 never stops."""
    backend: str = DEFAULT_BACKEND
    """Registered backend name (see ``sortie backends``); part of the stored config."""
    backend_args: Mapping[str, Any] = field(default_factory=dict)
    """The backend's arguments (``-b key=value``); part of the stored config."""
    camera: str | Mapping[str, Any] | None = None
    """The agent's camera (a preset or ``WxH[@HFOV][/PITCH]``); None: the family's."""
    pose: PoseSettings | None = None
    """How the pose sensor reads, for an agent that reads it; None: exact, world frame."""

    def __post_init__(self) -> None:
        """Refuse a request that no run can follow (every bad field at once), then a bad id.

        Raises:
            ParameterError: a count below its least, an unknown clock or executor, a Ray
                address without Ray, no suite; or an unsafe run id.
        """
        _check(self)
        if self.run_id:
            check_name(self.run_id, "--run-id")


@dataclass(frozen=True, slots=True)
class Plan:
    """A run's id, its jobs and which of them are still to run."""

    run_id: str
    suites: tuple[str, ...]
    records: Path
    jobs: list[Job]
    todo: list[Job]
    family: str
    """The mission family of the run's suites."""


@dataclass(frozen=True, slots=True)
class Selection:
    """The run's suites, checked (unique names, one family), and the episodes chosen to run."""

    suites: dict[str, Suite]
    """The suites by their header name."""
    digests: dict[str, str]
    """Each suite's hash (a changed suite is a changed config)."""
    family: str
    """The mission family of their episodes (a run holds one)."""
    episodes: dict[str, list[EpisodeSpec]]
    """Each suite's episodes to run (``select_episodes``)."""

    @property
    def worlds(self) -> set[str]:
        """Return the world builders of the episodes to run."""
        return {e.world.builder for episodes in self.episodes.values() for e in episodes}


def _claim_records(records: Path, store: Store, run_id: str) -> None:
    """Claim ``records`` for run ``run_id`` of ``store``, refusing another store's run.

    The marker names the store (by file name: stores in one folder differ in it), so a run of
    the same id in a second store beside the first is refused instead of writing over its
    records. A folder marked before stores were named is taken by the store that already
    holds the run (its resume); a new run of another store is refused.
    """
    formerly = f"records of run {run_id}" if store.created(run_id) is not None else None
    made_for = f"records of run {run_id} of store {store.path.name}"
    claim_output(records, made_for, formerly=formerly)


def plan_run(request: RunRequest, store: Store) -> Plan:
    """Resolve the request, record (or check) the run in the store and list the jobs to do.

    One pass down: the suites and their episodes, then the run's parts (the family's settings,
    the agent, the backend, each checked by its owner), then the jobs and their folders; only
    then is the run recorded (the request's own fields were checked when it was made).

    Raises:
        ConfigError: a bad setting, or a run id stored with another config.
        StoreError: the store failed, or another process is writing this run.
    """
    if request.workers > 1 and request.executor == "local":
        start_worker_server()  # its imports go on beside the planning below
    run_id = _run_id(request)
    chosen = choose_episodes(
        request.suites, request.agent, request.backend, request.limit, request.episodes
    )
    run = RunSpec.resolve(
        request.agent,
        request.agent_args,
        family=chosen.family,
        settings=request.family_settings,
        clock=request.clock,
        run_seed=request.seed,
        record_frames=request.record_frames,
        backend=request.backend,
        backend_args=request.backend_args,
        worlds=chosen.worlds,
        pose=request.pose,
        camera=request.camera,
    )
    records = request.out or store.folder / run_id
    jobs = make_jobs(chosen.episodes, run, request.repeats, records, store.folder)
    config = run.config(chosen.digests, request.repeats, request.limit, request.episodes)
    _claim_records(records, store, run_id)  # before the run is stored: refusable
    store.begin_run(run_id, config)
    done = store.keys(run_id) - (store.keys(run_id, True) if request.retry_errors else set())
    todo = [j for j in jobs if j.key not in done]
    return Plan(run_id, tuple(chosen.suites), records, jobs, todo, chosen.family)


def choose_episodes(
    names: Sequence[str],
    agent: str,
    backend: str,
    limit: int | None = None,
    ids: Sequence[str] = (),
) -> Selection:
    """Load the suites ``names`` for a run of ``agent`` on ``backend``; choose their episodes.

    Raises:
        ConfigError: two different suites of one name, several families (or none), a suite
            whose header names another backend, a family the agent does not play, an episode
            id no suite holds, or nothing left to run.
        UnknownNameError: no packaged suite has one of the names.
    """
    suites, digests = _load_suites(names)
    family = _check_one_family(suites)
    _check_suites_backend(suites, backend)
    _check_agent_plays(agent, family, suites)
    return Selection(suites, digests, family, select_episodes(suites, limit, ids))


def _run_id(request: RunRequest) -> str:
    """Return the run id asked for, or a new one from the agent and the time."""
    return request.run_id or f"{request.agent}-{time.strftime('%Y%m%d-%H%M%S')}"


def select_episodes(
    suites: Mapping[str, Suite], limit: int | None = None, ids: Sequence[str] = ()
) -> dict[str, list[EpisodeSpec]]:
    """Return each suite's episodes to run: those in ``ids`` (all if empty), the first ``limit``.

    Raises:
        ConfigError: an id that no suite holds (with the nearest one), or nothing left to run.
    """
    known = [e.episode_id for suite in suites.values() for e in suite.episodes]
    for wanted in ids:
        if wanted not in known:
            hint = did_you_mean(wanted, known)
            example = f" Ids look like {known[0]!r}." if known and not hint else ""
            raise ConfigError(
                f"--episodes: no episode {wanted!r} in {', '.join(suites)}.{hint}{example}"
            )
    chosen = {
        name: [e for e in suite.episodes if not ids or e.episode_id in ids][:limit]
        for name, suite in suites.items()
    }
    if not any(chosen.values()):
        raise ConfigError(f"no episode to run in {', '.join(suites)}")
    return chosen


def _check_suites_backend(suites: Mapping[str, Suite], backend: str) -> None:
    """Refuse suites whose header says they are for another backend (imported suites do)."""
    for name, suite in suites.items():
        wanted = suite.header.settings.get("backend")
        if wanted and wanted != backend:
            raise ConfigError(
                f"suite {name} is for the {wanted!r} backend (its header says so); "
                f"run it with --backend {wanted}, not {backend!r}"
            )


def _check_agent_plays(agent: str, family: str, suites: Mapping[str, Suite]) -> None:
    """Refuse suites of a mission family the agent does not declare it plays."""
    families = agent_families(AGENTS.get(agent))
    if families is not None and family not in families:
        plays = " and ".join(sorted(families))
        raise ConfigError(
            f"agent {agent!r} plays {plays} missions; suite {', '.join(suites)} is {family}"
        )


def _preflight(plan: Plan) -> None:
    """Build the run's agent once and let it check what it needs (its server), if it can."""
    if plan.todo:
        agent = plan.todo[0].run.factory(**plan.todo[0].run.agent.args)
        try:
            if isinstance(agent, SupportsPreflight):
                agent.preflight()
        finally:
            close_agent(agent)


def execute(
    plan: Plan,
    request: RunRequest,
    store: Store,
    on_result: Callable[[JobResult], None] = lambda r: None,
) -> None:
    """Run the plan's jobs, committing each finished episode to the store at once.

    Raises:
        RunAbortedError: ``request.max_consecutive_errors`` episodes in a row ended in an agent
            or backend error; the run stops (what finished is stored).
    """
    try:  # one agent checks its server before any episode (a ConfigError stops all)
        _preflight(plan)
    except Exception:
        store.drop_if_empty(plan.run_id)  # a refused run leaves no empty run behind
        raise
    streak: list[JobResult] = []

    def finished(result: JobResult) -> None:
        store.add(plan.run_id, result)
        on_result(result)
        if result.footer.failure_reason not in ERROR_REASONS:
            streak.clear()
            return
        streak.append(result)
        if 0 < request.max_consecutive_errors <= len(streak):
            raise RunAbortedError(_aborted(plan, request, streak[-1], len(streak)))

    try:
        if request.executor == "ray":
            from sortie.run.ray_executor import run_jobs_on_ray

            run_jobs_on_ray(
                plan.todo, finished, request.workers, request.max_retries, request.ray_address
            )
        else:
            run_jobs(plan.todo, finished, request.workers, request.max_retries)
    except Exception:
        # Refused when its first episode began (an impossible task, a camera an agent
        # refuses): the run stored nothing, so no unexplained empty row is left behind.
        store.drop_if_empty(plan.run_id)
        raise


def _aborted(plan: Plan, request: RunRequest, last: JobResult, count: int) -> str:
    """Say why the run stopped, what the last error was and how to go on."""
    return (
        f"run {plan.run_id} stopped: {count} episodes in a row ended in an error (the "
        f"last, {last.job.key}, {last.footer.failure_reason}: "
        f"{error_headline(last.footer.error or '')}). Finished episodes are kept in "
        f"{request.store}; fix the cause, then resume with --run-id {plan.run_id} "
        "--retry-errors (or raise --max-consecutive-errors, 0 never stops)"
    )


def error_headline(error: str) -> str:
    """Return an error's first line; for a traceback, the line that names the exception."""
    lines = error.strip().splitlines()
    if lines and lines[0].startswith("Traceback"):
        frames = [i for i, line in enumerate(lines) if line[:1].isspace()]
        lines = lines[frames[-1] + 1 :] if frames else lines[1:]
    return lines[0] if lines else "no message"


def _check(request: RunRequest) -> None:
    """Raise one ParameterError naming every field of ``request`` out of its bounds."""
    problems = [
        f"{name} must be at least {least}, got {value}"
        for name, value, least in (
            ("--repeats", request.repeats, 1),
            ("--workers", request.workers, 1),
            ("--max-retries", request.max_retries, 0),
            ("--limit", 1 if request.limit is None else request.limit, 1),
            ("--max-consecutive-errors", request.max_consecutive_errors, 0),
        )
        if value < least
    ]
    if request.clock not in set(Clock):
        problems.append(f"--clock {request.clock!r} is not one of: sim, latency")
    if request.executor not in EXECUTORS:
        problems.append(f"--executor {request.executor!r} is not one of: {', '.join(EXECUTORS)}")
    if request.ray_address and request.executor != "ray":
        problems.append("--ray-address needs --executor ray")
    if not request.suites:
        problems.append("no suite given")
    if problems:
        raise ParameterError("; ".join(problems))


def _check_one_family(suites: dict[str, Suite]) -> str:
    """Return the suites' mission family; refuse several (their metrics differ)."""
    families = {name: {e.family for e in suite.episodes} for name, suite in suites.items()}
    found = set().union(*families.values())
    if len(found) > 1:
        listed = "; ".join(f"{name}: {', '.join(sorted(f))}" for name, f in families.items())
        raise ConfigError(
            f"a run holds one mission family, found {len(found)} ({listed}); "
            "run each family's suites as a run of its own"
        )
    if not found:
        raise ConfigError(f"no episode to run in {', '.join(suites)}")
    return found.pop()


def _load_suites(names: Sequence[str]) -> tuple[dict[str, Suite], dict[str, str]]:
    """Return the suites by their header name and their hashes; refuse two suites of one name."""
    suites: dict[str, Suite] = {}
    digests: dict[str, str] = {}
    for name in names:
        suite = load_suite(name)
        digest = suite_digest(suite)
        suites.setdefault(suite.header.suite, suite)
        if digests.setdefault(suite.header.suite, digest) != digest:
            raise ConfigError(
                f"{name}: another suite called {suite.header.suite!r} is in this "
                "run; suite names must be unique"
            )
    return suites, digests


def suite_digest(suite: Suite) -> str:
    """Return a short hash of the suite's episodes (a changed suite is a changed config)."""
    text = "\n".join(e.model_dump_json() for e in suite.episodes)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
