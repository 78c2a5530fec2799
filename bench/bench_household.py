"""Benchmark household episodes: one 20-round oracle episode, and household-v1 x 3 on 2 workers.

Run: ``.venv/bin/python bench/bench_household.py [--repeats 3 --workers 2]``; prints a table.
The first rows time one long task's oracle episode forced to its 20 rounds (the planner keeps
going after it is done) with its world already built: rounds, views, base motion; without
images (what the oracle asks for) and with the four RGB views a vision planner gets.
The second runs ``sortie run household-v1 --agent oracle --repeats N --workers W`` into a
fresh store: wall seconds, and the CPU seconds of this process and its workers.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bench_oracle import cpu_seconds
from rich.console import Console
from rich.table import Table

from sortie.agents.oracle import OracleAgent
from sortie.backends.embedded import EmbeddedBackend
from sortie.cli.run_console import run_with_progress
from sortie.core.actions import Action
from sortie.core.observation import Brief, MissionObservation
from sortie.core.records import PluginRef
from sortie.missions.household.mission import HouseholdMission
from sortie.missions.household.vocabulary import Subtask
from sortie.missions.loading import load_suite
from sortie.run.batch import RunRequest
from sortie.run.episode import run_episode
from sortie.run.jobs import backend_ref, episode_header
from sortie.run.store import Store


class BusyOracle(OracleAgent):
    """The oracle, but once it would say end it drives to the kitchen and back instead."""

    def reset(self, brief: Brief, seed: int) -> None:
        """Start the episode."""
        super().reset(brief, seed)
        self._turn = 0

    def act(self, observation: MissionObservation) -> Action:
        """Return the oracle's subtask, or a go_to once the task is done."""
        action = super().act(observation)
        if isinstance(action, Subtask) and action.action == "end":
            self._turn += 1
            return Subtask("go_to", "kitchen" if self._turn % 2 else "counter", "image_nav")
        return action


def one_episode(sensors: tuple[str, ...]) -> tuple[int, float]:
    """Return the rounds and CPU seconds of a 20-round oracle episode (world built first)."""
    spec = next(e for e in load_suite("household-v1").episodes if e.level == "long")
    backend = EmbeddedBackend(body="manipulator", sensors=sensors)
    backend.reset(spec, 0)
    backend.oracle_view().nav_graph()  # built here, not in the timed part
    agent, mission = BusyOracle(), HouseholdMission(backend)
    agent.attach(backend.oracle_view())
    header = episode_header(spec, PluginRef(name="oracle"), backend_ref("household"))
    started = time.process_time()
    footer = run_episode(mission, agent, header)
    return footer.steps, time.process_time() - started


def whole_suite(repeats: int, workers: int) -> tuple[int, float, float]:
    """Return the episodes, wall and CPU seconds of household-v1 x ``repeats`` with the oracle."""
    folder = Path(tempfile.mkdtemp())
    request = RunRequest(
        ("household-v1",),
        "oracle",
        repeats=repeats,
        workers=workers,
        store=folder / "s.db",
        run_id="bench",
    )
    wall, cpu = time.perf_counter(), cpu_seconds()
    with Store(request.store) as store:
        run_with_progress(request, store, Console(quiet=True))
        episodes = len(store.episodes("bench"))
    wall = time.perf_counter() - wall
    time.sleep(0.5)  # the fork server reaps the workers that have just exited
    return episodes, wall, cpu_seconds() - cpu


def main() -> None:
    """Print one row per measurement."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    table = Table(title="Household episodes (embedded simulator)")
    for column in ("what", "episodes / rounds", "wall s", "CPU s", "target"):
        table.add_column(column, justify="right")
    for sensors, what in (((), "no images (the oracle)"), (("rgb",), "four RGB views a round")):
        rounds, cpu = one_episode(sensors)
        table.add_row(f"one oracle episode, {what}", f"{rounds} rounds", "", f"{cpu:.2f}", "< 1 s")
    episodes, wall, cpu = whole_suite(args.repeats, args.workers)
    what = f"household-v1 x {args.repeats}, {args.workers} workers"
    table.add_row(what, f"{episodes} episodes", f"{wall:.1f}", f"{cpu:.1f}", "< 120 s wall")
    Console().print(table)


if __name__ == "__main__":
    main()
