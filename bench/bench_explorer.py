"""Benchmark the explorer: its own decision rate (``act`` alone) and whole steps per second.

Runs the explorer over the hand-made room episode, or over the episodes of a suite file, and
prints per episode the steps, the agent's steps per second (time inside ``act``) and the
episode's steps per second (rendering and physics included).

Run: ``.venv/bin/python bench/bench_explorer.py [--suite FILE] [--limit N] [--nomem]``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sortie.agents.explorer import ExplorerAgent, NoMemoryExplorer
from sortie.backends.embedded import EmbeddedBackend
from sortie.core.episode import EpisodeSpec
from sortie.core.records_io import read_suite
from sortie.missions.rescue.mission import RescueMission
from sortie.testing.episodes import room_rescue


def measure(spec: EpisodeSpec, agent: ExplorerAgent) -> list[str]:
    """Run one episode; return its table row."""
    runtime = RescueMission(EmbeddedBackend(body="walker", sensors=agent.sensors))
    observation = runtime.reset(spec, 0)
    assert runtime.brief is not None
    agent.reset(runtime.brief, 0)
    thinking, steps, started = 0.0, 0, time.perf_counter()
    while not runtime.done:
        tick = time.perf_counter()
        action = agent.act(observation)
        thinking += time.perf_counter() - tick
        observation, _ = runtime.step(action)
        steps += 1
    total = time.perf_counter() - started
    outcome = runtime.footer().outcome
    return [
        spec.episode_id,
        str(outcome),
        str(steps),
        f"{steps / thinking:.0f}",
        f"{steps / total:.0f}",
    ]


def main() -> None:
    """Parse the arguments, run, print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--suite", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=5)
    parser.add_argument("--nomem", action="store_true")
    args = parser.parse_args()
    episodes = read_suite(args.suite).episodes[: args.limit] if args.suite else [room_rescue()]
    table = Table("episode", "outcome", "steps", "agent steps/s", "episode steps/s")
    for spec in episodes:
        table.add_row(*measure(spec, NoMemoryExplorer() if args.nomem else ExplorerAgent()))
    Console().print(table)


if __name__ == "__main__":
    main()
