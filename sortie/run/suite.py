"""Running a suite of episodes with one agent, in sequence, one trajectory file each.

The simple in-process path (tests, benchmarks, notebooks); ``sortie run`` uses the stored,
resumable batch runner in ``sortie.run.batch`` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sortie.core.episode import EpisodeSpec
from sortie.core.records import TrajectoryFooter
from sortie.core.records_io import Suite
from sortie.run.executor import Backends, backend_for
from sortie.run.jobs import Job, RunSpec, episode_seed, run_job

__all__ = ["EpisodeResult", "RunSettings", "episode_seed", "run_suite"]


@dataclass(frozen=True, slots=True)
class EpisodeResult:
    """One finished episode: where its record is, how it ended, its metrics."""

    episode: EpisodeSpec
    path: Path
    footer: TrajectoryFooter
    metrics: dict[str, float]


@dataclass(frozen=True, slots=True)
class RunSettings:
    """What a run needs besides the suite and the agent."""

    out: Path
    clock: str = "sim"
    seed: int = 0
    family_settings: Mapping[str, Any] = field(default_factory=dict)
    """The family's settings (``-F``); the rest take their defaults."""


def run_suite(
    suite: Suite,
    agent_name: str,
    agent_args: Mapping[str, Any],
    settings: RunSettings,
    on_result: Callable[[EpisodeResult], None] = lambda r: None,
) -> list[EpisodeResult]:
    """Run every episode of ``suite`` with a fresh agent; return the results in order."""
    if not suite.episodes:
        return []
    run = RunSpec.resolve(
        agent_name,
        agent_args,
        family=suite.episodes[0].family,
        settings=settings.family_settings,
        clock=settings.clock,
        run_seed=settings.seed,
    )
    backends: Backends = {}
    results = []
    try:
        for spec in suite.episodes:
            path = settings.out / f"{spec.episode_id.replace('/', '__')}.jsonl"
            job = Job(suite.header.suite, spec, 0, path, run)
            done = run_job(job, backend_for(backends, job))
            results.append(EpisodeResult(spec, path, done.footer, done.metrics))
            on_result(results[-1])
    finally:
        for backend in backends.values():
            backend.close()
    return results
