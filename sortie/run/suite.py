"""Running a suite of episodes with one agent, in sequence, one trajectory file each."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sortie
from sortie.agents.base import AGENTS, Agent, SupportsOracle
from sortie.backends.embedded import EmbeddedBackend
from sortie.core.episode import EpisodeSpec
from sortie.core.records_io import Suite, read_trajectory
from sortie.core.trajectory import PluginRef, TrajectoryFooter, TrajectoryHeader
from sortie.metrics.rescue import score_rescue
from sortie.missions.registry import FAMILIES
from sortie.run.episode import JsonlRecorder, run_episode


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
    triggers: str = "assisted"
    seed: int = 0


def episode_seed(run_seed: int, episode_id: str, repeat: int = 0) -> int:
    """Return a seed derived from the run seed and the job's key (stable across machines)."""
    digest = hashlib.sha256(f"{run_seed}/{episode_id}/{repeat}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


def run_suite(suite: Suite, agent_name: str, agent_args: Mapping[str, Any],
              settings: RunSettings,
              on_result: Callable[[EpisodeResult], None] = lambda r: None) -> list[EpisodeResult]:
    """Run every episode of ``suite`` with a fresh agent; return the results in order."""
    factory = AGENTS.get(agent_name)
    probe: Agent = factory(**agent_args)
    backend = EmbeddedBackend(body="walker", sensors=probe.sensors)
    results = []
    for spec in suite.episodes:
        agent: Agent = factory(**agent_args)
        result = _run_one(spec, agent, PluginRef(name=agent_name, args=dict(agent_args)),
                          backend, settings)  # fmt: skip
        on_result(result)
        results.append(result)
    backend.close()
    return results


def _run_one(spec: EpisodeSpec, agent: Agent, agent_ref: PluginRef, backend: EmbeddedBackend,
             settings: RunSettings) -> EpisodeResult:
    runtime = FAMILIES.get(spec.family)(backend, clock=settings.clock,
                                        triggers=settings.triggers)  # fmt: skip
    if isinstance(agent, SupportsOracle):
        agent.attach(backend.oracle_view())
    header = TrajectoryHeader(
        episode=spec, agent=agent_ref,
        backend=PluginRef(name="embedded", args={"body": "walker",
                                                 "sensors": sorted(agent.sensors)}),
        config={"clock": settings.clock, "triggers": settings.triggers,
                "run_seed": settings.seed},
        seed=episode_seed(settings.seed, spec.episode_id), code_version=sortie.__version__,
    )  # fmt: skip
    path = settings.out / f"{spec.episode_id.replace('/', '__')}.jsonl"
    footer = run_episode(runtime, agent, header, [JsonlRecorder(path)])
    return EpisodeResult(spec, path, footer, score_rescue(read_trajectory(path)))
