"""Benchmark the gym envs as RL libraries use them: PPO's split, and vector envs.

Two tables. **PPO**: per family, Stable-Baselines3 PPO (``MultiInputPolicy``, defaults but
``n_steps=256``, one torch thread) trains ``--steps`` steps on the env through
``sortie.missions.gym_wrappers.rl_ready`` (64² RGB camera); the simulator's share is the CPU
time of as many random steps on the same wrapped env over PPO's whole CPU time. **Vector**:
steps/s of the rescue env (64² RGB, random actions) with 1, 4 and 16 copies in one process
(``SyncVectorEnv``) and in subprocesses (``AsyncVectorEnv``); wall time, after the first reset.
CPU time is the process's own (the subprocesses' is not counted: the wall time says it).

Run: ``.venv/bin/python bench/bench_gym.py [--steps 512] [--vector-steps 200]``.
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import gymnasium
import torch
from rich.console import Console
from rich.table import Table
from stable_baselines3 import PPO

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


def main() -> None:
    """Print both tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=512, help="PPO steps per family")
    parser.add_argument("--vector-steps", type=int, default=200, help="vector steps per row")
    args = parser.parse_args()
    torch.set_num_threads(1)
    console = Console()
    console.print(ppo_table(args.steps))
    console.print(vector_table(args.vector_steps))


if __name__ == "__main__":
    main()
