"""Benchmark the gym envs as RL libraries use them: PPO's split, and vector envs.

Two tables. **PPO**: per family, Stable-Baselines3 PPO (``MultiInputPolicy``, defaults but
``n_steps=256``, one torch thread) trains ``--steps`` steps on the env through
``sortie.missions.gym_wrappers.rl_ready`` (64² RGB camera); the simulator's share is the CPU
time of as many random steps on the same wrapped env over PPO's whole CPU time. **Vector**:
steps/s of the rescue env (64² RGB, random actions) with 1, 4 and 16 copies in one process
(``SyncVectorEnv``) and in subprocesses (``AsyncVectorEnv``); wall time, after the first reset.
CPU time is the process's own (the subprocesses' is not counted: the wall time says it).
**Copies**: CPU per env-step of 16 rescue copies in one ``SyncVectorEnv`` (seeds 0-15), against
one copy (seed 0: the speed issue's ratio) and against the same 16 copies each in its own
``SyncVectorEnv``, run one after another with the same actions (the same frames: what differs
is only that the copies take turns), on the first smoke episode and on the first ten.

Run: ``.venv/bin/python bench/bench_gym.py [--steps 512] [--vector-steps 200]
[--tables ppo,vector,copies]``.
"""

from __future__ import annotations

import argparse
import time
from functools import partial
from typing import Any

import gymnasium
import numpy as np
import torch
from rich.console import Console
from rich.table import Table
from stable_baselines3 import PPO
from stable_baselines3.common.logger import Logger

import sortie  # noqa: F401  (registers the ids)
from sortie.missions.gym_wrappers import rl_ready
from sortie.missions.loading import load_suite

FAMILIES = {
    "rescue": ("sortie/Rescue-v1", "rescue-smoke-v2"),
    "aerial": ("sortie/Aerial-v1", "aerial-smoke-v1"),
    "household": ("sortie/Household-v1", "household-smoke-v1"),
}
CAMERA = "64x64@90"


def make(family: str, episodes: int) -> gymnasium.Env:
    """Return ``family``'s wrapped env over the first ``episodes`` of its smoke suite."""
    env_id, suite = FAMILIES[family]
    chosen = load_suite(suite).episodes[:episodes]
    return rl_ready(gymnasium.make(env_id, episodes=chosen, camera=CAMERA, sensors=("rgb",)))


def random_steps(env: gymnasium.Env, steps: int) -> float:
    """Return the CPU seconds of ``steps`` random steps of ``env`` (resets included)."""
    env.action_space.seed(0)
    start = time.process_time()
    env.reset(seed=0)
    for _ in range(steps):
        *_, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    return time.process_time() - start


def ppo_seconds(env: gymnasium.Env, steps: int) -> float:
    """Return the CPU seconds of PPO learning ``steps`` steps on ``env``."""
    start = time.process_time()
    model = PPO("MultiInputPolicy", env, n_steps=256, seed=0, device="cpu")
    model.set_logger(Logger(None, []))  # no output: SB3's own would make a folder in /tmp a run
    model.learn(steps)
    return time.process_time() - start


def ppo_table(steps: int) -> Table:
    """Return the PPO table: steps/s of training and of the simulator alone, and its share."""
    table = Table("family", "PPO steps/s", "simulator steps/s", "simulator share")
    for family in FAMILIES:
        simulator = random_steps(make(family, 2), steps)
        training = ppo_seconds(make(family, 2), steps)
        share = f"{100 * simulator / training:.0f} %"
        table.add_row(family, f"{steps / training:.0f}", f"{steps / simulator:.0f}", share)
    return table


def vector_rate(copies: int, asynchronous: bool, steps: int) -> float:
    """Return the env steps per wall second of ``copies`` rescue copies."""
    makers = [partial(make, "rescue", 10)] * copies
    envs = (gymnasium.vector.AsyncVectorEnv if asynchronous else gymnasium.vector.SyncVectorEnv)(
        makers
    )
    envs.action_space.seed(0)
    envs.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        envs.step(envs.action_space.sample())
    elapsed = time.perf_counter() - start
    envs.close()
    return copies * steps / elapsed


def vector_table(steps: int) -> Table:
    """Return the vector table: env steps/s by copies, in one process and in subprocesses."""
    table = Table("copies", "SyncVectorEnv steps/s", "AsyncVectorEnv steps/s")
    for copies in (1, 4, 16):
        rates = [vector_rate(copies, asynchronous, steps) for asynchronous in (False, True)]
        table.add_row(str(copies), *(f"{r:.0f}" for r in rates))
    return table


def planned_actions(copies: int, steps: int) -> list[list[Any]]:
    """Return ``steps`` random actions per copy, each copy's drawn from its own seed."""
    space = make("rescue", 1).action_space
    plans = []
    for copy in range(copies):
        space.seed(copy)
        plans.append([space.sample() for _ in range(steps)])
    return plans


def batched(actions: list[Any]) -> Any:
    """Return one vector step's action from its copies' ``actions``."""
    if isinstance(actions[0], dict):
        return {key: np.stack([a[key] for a in actions]) for key in actions[0]}
    return np.stack(actions)


def copies_cpu(episodes: int, plans: list[list[Any]], together: bool) -> float:
    """Return the CPU seconds per env-step of the copies' ``plans`` after their first reset.

    ``together``: the copies in one ``SyncVectorEnv``; else each in its own, all made and
    reset first, then run one after another.
    """
    groups = [range(len(plans))] if together else [range(c, c + 1) for c in range(len(plans))]
    made = [
        gymnasium.vector.SyncVectorEnv([partial(make, "rescue", episodes)] * len(g)) for g in groups
    ]
    for envs, group in zip(made, groups, strict=True):
        envs.reset(seed=group[0])
    spent = 0.0
    for envs, group in zip(made, groups, strict=True):
        actions = [batched([plans[c][s] for c in group]) for s in range(len(plans[0]))]
        start = time.process_time()
        for action in actions:
            envs.step(action)
        spent += time.process_time() - start
    return spent / (len(plans) * len(plans[0]))


def copies_table(steps: int) -> Table:
    """Return the copies table: CPU per env-step of one copy, 16 in turn and 16 together."""
    table = Table("episodes", "1 copy", "16 in turn", "16 together", "÷ 1 copy", "÷ in turn")
    plans = planned_actions(16, steps)
    for episodes in (1, 10):
        one, alone, together = (
            copies_cpu(episodes, plans[:1], True),
            copies_cpu(episodes, plans, False),
            copies_cpu(episodes, plans, True),
        )
        cells = [f"{1e6 * x:.0f} µs" for x in (one, alone, together)]
        table.add_row(str(episodes), *cells, f"{together / one:.2f}", f"{together / alone:.2f}")
    return table


def main() -> None:
    """Print the tables asked for (all three by default)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=512, help="PPO steps per family")
    parser.add_argument("--vector-steps", type=int, default=200, help="vector steps per row")
    parser.add_argument("--tables", default="ppo,vector,copies", help="which tables, by name")
    args = parser.parse_args()
    torch.set_num_threads(1)
    console = Console()
    tables = {"ppo": ppo_table, "vector": vector_table, "copies": copies_table}
    names = args.tables.split(",")
    if not set(names) <= tables.keys():
        parser.error(f"--tables {args.tables!r}: allowed names: {', '.join(tables)}")
    for name in names:
        steps = args.steps if name == "ppo" else args.vector_steps
        console.print(tables[name](steps))


if __name__ == "__main__":
    main()
