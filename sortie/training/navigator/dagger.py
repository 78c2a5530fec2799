"""DAgger's rollouts: the navigator plays training episodes, the oracle labels what it visits.

Each step of a rollout the navigator (the real agent, loaded from the round's checkpoint)
chooses an action, and the rescue oracle, given the privileged ``OracleView`` of the same
world as a run attaches it, says what it would do from there. The oracle is made afresh each
step, so its label is a plan from where the learner stands, not the rest of a plan the
learner has left. With probability ``beta`` the oracle's action is the one carried out (DAgger's
mixture; the draw is seeded), else the navigator's. Every visited step, labelled, becomes
training data; the rollout ends with the episode or after ``max_steps``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sortie.agents.baselines import OracleOptions
from sortie.agents.navigator import NavigatorAgent, policy
from sortie.agents.rescue_oracle import RescueOracle
from sortie.backends.base import Backend, SupportsOracleView
from sortie.backends.catalog import build_from_ref
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.core.records import Outcome
from sortie.run.jobs import RunSpec, episode_seed, mission_runtime
from sortie.training.navigator.data import Sequence

PROGRESS_SECONDS = 20.0
"""Longest time between two progress lines during a round's rollouts."""


@dataclass(frozen=True, slots=True)
class RolloutSettings:
    """How the learner's rollouts are played."""

    camera: str
    """The run camera (``--camera``), as the demos were rendered."""
    beta: float
    """Chance that a step carries out the oracle's action instead of the navigator's."""
    max_steps: int
    """Steps after which a rollout stops (the episode's own budget may end it sooner)."""
    seed: int
    """Seeds the episodes and the mixture's draws (with the round)."""


@dataclass(frozen=True, slots=True)
class RoundData:
    """A round's labelled rollouts and how the navigator did in them."""

    sequences: list[Sequence]
    successes: int
    agreement: float
    """Share of visited steps where the navigator chose the oracle's action class."""


def dagger_round(
    checkpoint: Path,
    episodes: list[EpisodeSpec],
    settings: RolloutSettings,
    round_index: int,
    echo: Callable[[str], object],
) -> RoundData:
    """Roll the checkpoint's navigator out on ``episodes``; return the oracle-labelled steps."""
    worlds = {e.world.builder for e in episodes}
    args = {"checkpoint": str(checkpoint)}
    spec = RunSpec.resolve(
        "navigator", args, family="rescue", camera=settings.camera, worlds=worlds
    )
    backend = build_from_ref(spec.backend_for("rescue"))
    agent = NavigatorAgent(str(checkpoint))
    rng = np.random.default_rng([settings.seed, round_index])
    out, successes, agreed, last = [], 0, 0, time.monotonic()
    try:
        for done, episode in enumerate(episodes, 1):
            seed = episode_seed(settings.seed, episode.episode_id, round_index)
            sequence, success, same = _rollout(spec, backend, agent, episode, seed, rng, settings)
            if len(sequence):
                out.append(sequence)
            successes, agreed = successes + success, agreed + same
            if time.monotonic() - last >= PROGRESS_SECONDS or done == len(episodes):
                echo(f"  round {round_index}: {done}/{len(episodes)} rollouts, {successes} done")
                last = time.monotonic()
    finally:
        backend.close()
    steps = sum(len(s) for s in out)
    return RoundData(out, successes, agreed / steps if steps else 0.0)


def _rollout(
    spec: RunSpec,
    backend: Backend,
    agent: NavigatorAgent,
    episode: EpisodeSpec,
    seed: int,
    rng: np.random.Generator,
    settings: RolloutSettings,
) -> tuple[Sequence, bool, int]:
    """Play one episode; return its labelled steps, whether it succeeded, steps agreed on."""
    if not isinstance(backend, SupportsOracleView):
        raise ConfigError(f"DAgger needs a backend with an oracle view; {backend!r} has none")
    runtime = mission_runtime("rescue", backend, spec.clock, spec.settings)
    observation = runtime.reset(episode, seed)
    assert runtime.brief is not None
    brief, view, size = runtime.brief, backend.oracle_view(), agent.net.shape.size
    agent.reset(brief, seed)
    views: list[np.ndarray] = []
    carrying: list[float] = []
    labels: list[int] = []
    same = 0
    while not runtime.done and len(labels) < settings.max_steps:
        expert = RescueOracle(view, brief, OracleOptions()).act(observation)
        learner = agent.act(observation)
        label = policy.label_of(expert)
        views.append(policy.view_input(observation.frames.rgb, observation.frames.depth, size))
        carrying.append(float(observation.carrying))
        labels.append(label)
        same += policy.label_of(learner) == label
        observation, _ = runtime.step(expert if rng.random() < settings.beta else learner)
    sequence = Sequence(
        episode.episode_id,
        np.stack(views) if views else np.zeros((0, 4, size, size), np.float32),
        np.array(carrying, np.float32),
        np.array(labels, np.int64),
        policy.goal_inputs(brief, size),
    )
    return sequence, runtime.outcome is Outcome.SUCCESS, same
