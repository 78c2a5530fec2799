"""An evaluation walk of an env's episodes across the copies of a vector env.

Training draws episodes at random (``MissionEnv.reset``: a seed picks episode ``seed % n``, so
copies seeded ``s, s+1, ...`` start different ones). Evaluation wants each episode exactly
once: ``SuiteWalk`` gives copy ``c`` of ``N`` the episodes ``c, c+N, c+2N, ...`` in order, and
``walk_suite`` steps a ``SyncVectorEnv`` or ``AsyncVectorEnv`` of such copies until every
copy has walked its share, returning one ``WalkedEpisode`` per episode in suite order.

Episode ``k`` is reset with seed ``seed + k``, so a walk's results do not depend on the number
of copies. A ``WalkPlan`` narrows the walk to some episodes with given seeds and wraps each
copy: ``sortie.run.walk_records.record_walk`` uses it to write sortie records into a store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv, VectorEnv

from sortie.core.errors import ConfigError

DONE = -1
"""``info["walk_index"]`` of a reset once the copy's share is walked (the episode is a replay)."""


@dataclass(frozen=True, slots=True)
class WalkedEpisode:
    """One episode of a walk: which it was, the copy that ran it, and how it ended."""

    index: int
    """Position of the episode in the env's list."""
    episode_id: str
    copy: int
    steps: int
    reward: float
    """The episode's summed reward."""
    outcome: str | None
    failure_reason: str | None


@dataclass(frozen=True, slots=True)
class WalkPlan:
    """Which of the env's episodes a walk runs, the seed of each, and what wraps each copy."""

    indices: tuple[int, ...]
    """Positions in the env's episode list, walked in this order across the copies."""
    seeds: tuple[int, ...]
    """Each walked episode's own seed (``options["episode_seed"]``), in ``indices``' order."""
    wrap: Callable[[gym.Env[Any, Any], int], gym.Env[Any, Any]] | None = None
    """Called with each copy's walk and its number; returns the env the vector env steps."""


class SuiteWalk(gym.Wrapper[Any, Any, Any, Any]):
    """Copy ``copy`` of ``copies``: each reset starts its next episode of the walk."""

    def __init__(
        self,
        env: gym.Env[Any, Any],
        copy: int,
        copies: int,
        seed: int = 0,
        plan: WalkPlan | None = None,
    ) -> None:
        """Wrap ``env`` (a sortie env, or a wrapper of one) as copy ``copy`` of ``copies``.

        Episode ``k`` runs with seed ``seed + k`` (a seed given to ``reset`` is not used:
        a vector env gives each copy its own, which would tie results to the copies).
        ``plan`` walks only its episodes instead, each with its own seed.

        Raises:
            ConfigError: ``copy`` is not within ``0..copies-1``.
        """
        super().__init__(env)
        if not 0 <= copy < copies:
            raise ConfigError(f"SuiteWalk: copy {copy} of {copies}; allowed: 0..{copies - 1}")
        self.episodes = env.unwrapped.episodes  # type: ignore[attr-defined]
        walked = plan.indices if plan is not None else range(len(self.episodes))
        self.share = walked[copy::copies]
        self.seeds = dict(zip(plan.indices, plan.seeds, strict=True)) if plan is not None else {}
        self.walk_seed = seed
        self._walked = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Start the copy's next episode; ``info["walk_index"]`` is its index, or ``DONE``."""
        index = self.share[self._walked] if self._walked < len(self.share) else DONE
        self._walked += 1
        # Once the share is walked, the copy replays its last episode (its steps are not
        # counted) until the other copies are done too.
        run = index if index != DONE else (self.share or [0])[-1]
        given = {"episode": self.episodes[run]}
        if run in self.seeds:
            given["episode_seed"] = self.seeds[run]
        observation, info = self.env.reset(
            seed=self.walk_seed + run, options={**(options or {}), **given}
        )
        return observation, {**info, "walk_index": index}


def walk_suite(
    make_env: Callable[[], gym.Env[Any, Any]],
    policy: Callable[[Any], Any],
    copies: int = 1,
    *,
    asynchronous: bool = False,
    seed: int = 0,
    plan: WalkPlan | None = None,
) -> list[WalkedEpisode]:
    """Run each of the env's episodes once across ``copies`` copies; return them in order.

    Args:
        make_env: builds one copy (every call the same env, e.g. a ``gymnasium.make``).
        policy: maps the vector env's batched observation to its batched action.
        copies: how many copies step together.
        asynchronous: each copy in its own process (``AsyncVectorEnv``), else one process.
        seed: the walk's seed; episode ``k`` runs with ``seed + k``.
        plan: walk only these episodes, with these seeds, each copy wrapped (None: all).
    """
    if copies < 1:
        raise ConfigError(f"walk_suite: copies is {copies}; allowed: 1 or more")
    makers = [partial(_walker, make_env, c, copies, seed, plan) for c in range(copies)]
    vector = AsyncVectorEnv if asynchronous else SyncVectorEnv
    envs = vector(makers, autoreset_mode=AutoresetMode.NEXT_STEP)
    try:
        return _walk(envs, policy)
    finally:
        envs.close()


def _walker(
    make_env: Callable[[], gym.Env[Any, Any]],
    copy: int,
    copies: int,
    seed: int,
    plan: WalkPlan | None,
) -> gym.Env[Any, Any]:
    """Return copy ``copy`` of ``copies`` of the walk (a module function, so it pickles)."""
    walk = SuiteWalk(make_env(), copy, copies, seed, plan)
    return plan.wrap(walk, copy) if plan is not None and plan.wrap is not None else walk


def _walk(envs: VectorEnv[Any, Any, Any], policy: Callable[[Any], Any]) -> list[WalkedEpisode]:
    """Step ``envs`` until every copy has walked its share; return the episodes in order."""
    observation, info = envs.reset()
    copies = envs.num_envs
    current, ids = list(info["walk_index"]), list(info["episode_id"])
    rewards, steps = np.zeros(copies), np.zeros(copies, int)
    restarting = np.zeros(copies, bool)
    walked: list[WalkedEpisode] = []
    while any(index != DONE for index in current):
        observation, reward, terminated, truncated, info = envs.step(policy(observation))
        for c in range(copies):
            if restarting[c]:  # this step reset copy c (next-step autoreset)
                current[c], ids[c] = int(info["walk_index"][c]), str(info["episode_id"][c])
                rewards[c], steps[c], restarting[c] = 0.0, 0, False
                continue
            rewards[c] += reward[c]
            steps[c] += 1
            restarting[c] = terminated[c] or truncated[c]
            if restarting[c] and current[c] != DONE:
                walked.append(_walked(info, c, int(current[c]), ids[c], steps, rewards))
    return sorted(walked, key=lambda e: e.index)


def _walked(
    info: dict[str, Any], c: int, index: int, episode_id: str, steps: Any, rewards: Any
) -> WalkedEpisode:
    """Return the episode copy ``c`` just ended, from the vector env's step ``info``."""
    outcome, reason = info["outcome"][c], info["failure_reason"][c]
    return WalkedEpisode(
        index,
        episode_id,
        c,
        int(steps[c]),
        float(rewards[c]),
        None if outcome is None else str(outcome),
        None if reason is None else str(reason),
    )
