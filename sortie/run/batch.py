"""A stored, resumable run: suites × repeats with one agent, written to a results store.

``plan_run`` turns a request into the run's jobs and the ones still to do; ``execute`` runs
those and commits each to the store as it finishes. Re-running the same run id therefore
resumes it: nothing finished is run twice, nothing is lost.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sortie.agents.base import SupportsPreflight
from sortie.core.errors import ConfigError, ParameterError
from sortie.core.records_io import Suite, read_suite
from sortie.missions.rescue.mission import Triggers
from sortie.missions.runtime import Clock
from sortie.run.executor import run_jobs
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
    triggers: str = "assisted"
    """``assisted`` or ``native`` interactions."""
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
    judge: str = "exact"
    """The judge of aerial reports: ``exact``, ``embedding`` or ``llm``."""


@dataclass(frozen=True, slots=True)
class Plan:
    """A run's id, its jobs and which of them are still to run."""

    run_id: str
    suites: tuple[str, ...]
    records: Path
    jobs: list[Job]
    todo: list[Job]


def find_suite(name: str) -> Suite:
    """Return the suite file at path ``name``, or the packaged suite called ``name``."""
    path = Path(name)
    if path.exists():
        return read_suite(path)
    try:
        from sortie.suites import load_suite
    except ImportError:
        raise ConfigError(f"suite {name!r}: no such file, and no packaged suites") from None
    return load_suite(name)


def plan_run(request: RunRequest, store: Store) -> Plan:
    """Resolve the request, record (or check) the run in the store and list the jobs to do.

    Raises:
        ConfigError: a bad setting, or a run id stored with another config.
    """
    _check(request)
    suites = _load_suites(request.suites)
    family = _check_one_family(suites)
    run = RunSpec.resolve(request.agent, request.agent_args, request.clock, request.triggers,
                          request.seed, request.record_frames, request.judge)  # fmt: skip
    config = {**run.config(family), "repeats": request.repeats,
              "suites": {name: _digest(suite) for name, suite in suites.items()}}  # fmt: skip
    run_id = request.run_id or f"{request.agent}-{time.strftime('%Y%m%d-%H%M%S')}"
    store.begin_run(run_id, config)
    records = request.out or store.folder / run_id
    jobs = [job for name, suite in suites.items() for job in make_jobs(
        name, suite.episodes, run, request.repeats, records / name / request.agent,
        store.folder)]
    done = store.keys(run_id) - (store.keys(run_id, True) if request.retry_errors else set())
    return Plan(run_id, tuple(suites), records, jobs, [j for j in jobs if j.key not in done])


def execute(plan: Plan, request: RunRequest, store: Store,
            on_result: Callable[[JobResult], None] = lambda r: None) -> None:
    """Run the plan's jobs, committing each finished episode to the store at once."""
    if plan.todo:  # one agent checks its server before any episode (a ConfigError stops all)
        agent = plan.todo[0].run.factory(**plan.todo[0].run.agent.args)
        if isinstance(agent, SupportsPreflight):
            agent.preflight()

    def finished(result: JobResult) -> None:
        store.add(plan.run_id, result)
        on_result(result)

    if request.executor == "ray":
        from sortie.run.ray_executor import run_jobs_on_ray

        run_jobs_on_ray(plan.todo, finished, request.workers, request.max_retries,
                        request.ray_address)  # fmt: skip
    else:
        run_jobs(plan.todo, finished, request.workers, request.max_retries)


def _check(request: RunRequest) -> None:
    problems = [f"{name} must be at least {least}, got {value}" for name, value, least in (
        ("--repeats", request.repeats, 1), ("--workers", request.workers, 1),
        ("--max-retries", request.max_retries, 0)) if value < least]  # fmt: skip
    if request.clock not in set(Clock):
        problems.append(f"--clock {request.clock!r} is not one of: sim, latency")
    if request.triggers not in set(Triggers):
        problems.append(f"--triggers {request.triggers!r} is not one of: assisted, native")
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
        raise ConfigError(f"a run holds one mission family, found {len(found)} ({listed}); "
                          "run each family's suites as a run of its own")  # fmt: skip
    return found.pop() if found else "rescue"


def _load_suites(names: tuple[str, ...]) -> dict[str, Suite]:
    """Return the suites by their header name, refusing two different suites of one name."""
    suites: dict[str, Suite] = {}
    for name in names:
        suite = find_suite(name)
        known = suites.setdefault(suite.header.suite, suite)
        if _digest(known) != _digest(suite):
            raise ConfigError(f"{name}: another suite called {suite.header.suite!r} is in this "
                              "run; suite names must be unique")  # fmt: skip
    return suites


def _digest(suite: Suite) -> str:
    """Return a short hash of the suite's episodes (a changed suite is a changed config)."""
    text = "\n".join(e.model_dump_json() for e in suite.episodes)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
