"""Split a cached oracle run's CPU time per episode: world builds, graph loads, steps, records.

Runs the suites (all five rescue levels, 213 episodes, by default) with the oracle in this
process (one worker) into a fresh store, twice: the first run fills the navigation-graph cache
(a temporary ``SORTIE_CACHE``, unless one is set), the second is timed, after the process has
dropped the worlds and graphs it kept. Named functions are wrapped in CPU timers
(``time.process_time``); each row gives a piece's CPU time per episode, with what it calls
("incl") and without the other named pieces it calls ("excl"). The timers cost a little
themselves (about 1 µs a call).

Run: ``.venv/bin/python bench/bench_oracle_split.py [--suites rescue-l1-v2,...] [--limit N]``;
prints a table.
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

SUITES = ",".join(f"rescue-l{k}-v2" for k in range(1, 6))


class Timers:
    """CPU time of wrapped functions, with and without the other wrapped ones they call."""

    def __init__(self) -> None:
        """Start with nothing timed."""
        self.incl: collections.Counter[str] = collections.Counter()
        self.child: collections.Counter[str] = collections.Counter()
        self.calls: collections.Counter[str] = collections.Counter()
        self._stack: list[float] = []

    def wrap(self, label: str | Callable[..., str], function: Callable) -> Callable:
        """Return ``function`` timed under ``label`` (or ``label(*args)``)."""

        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            name = label(*args) if callable(label) else label
            self._stack.append(0.0)
            start = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent, inner = time.process_time() - start, self._stack.pop()
                self.incl[name] += spent
                self.child[name] += inner
                self.calls[name] += 1
                if self._stack:
                    self._stack[-1] += spent

        return timed


def instrument(timers: Timers) -> None:
    """Wrap the pieces of an episode in ``timers`` (in the modules that call them)."""
    from sortie.missions import runtime
    from sortie.missions.rescue import mission
    from sortie.run import episode, executor, jobs
    from sortie.sim import raycast, shared_worlds
    from sortie.sim.navigation import cache, graph

    executor.run_job = timers.wrap("episode", jobs.run_job)
    jobs.score_record = timers.wrap("scoring", jobs.score_record)
    build = shared_worlds.build_world
    shared_worlds.build_world = timers.wrap(lambda name, *_: f"world build: {name}", build)
    shared_worlds.with_placements = timers.wrap("placements", shared_worlds.with_placements)
    raycast.StaticPart.__init__ = timers.wrap("static part", raycast.StaticPart.__init__)
    raycast.StaticPart._make = timers.wrap("dynamic part", raycast.StaticPart._make)
    load = graph.NavGraph.build.__func__  # type: ignore[attr-defined]
    graph.NavGraph.build = classmethod(timers.wrap("graph load", load))  # type: ignore[assignment]
    cache.load = timers.wrap("graph load: cache read", cache.load)
    runtime.MissionRuntime.reset = timers.wrap("reset", runtime.MissionRuntime.reset)
    runtime.MissionRuntime.step = timers.wrap(
        "step (mission, backend)", runtime.MissionRuntime.step
    )
    images = mission.RescueMission._goal_images
    mission.RescueMission._goal_images = timers.wrap("goal images", images)
    episode._decide = timers.wrap("agent act", episode._decide)
    for hook in ("on_start", "on_step", "on_end"):
        method = getattr(episode.JsonlRecorder, hook)
        setattr(episode.JsonlRecorder, hook, timers.wrap("records", method))


def run(suites: tuple[str, ...], limit: int | None, folder: Path) -> float:
    """Run the suites with the oracle in this process into a store in ``folder``; return CPU s."""
    from sortie.run.batch import RunRequest, execute, plan_run
    from sortie.run.store import Store

    request = RunRequest(suites, "oracle", workers=1, store=folder / "s.db", limit=limit)
    with Store(request.store) as store:
        plan = plan_run(request, store)
        start = time.process_time()
        execute(plan, request, store)
        return time.process_time() - start


def forget_worlds_and_graphs() -> None:
    """Drop the worlds and graphs this process keeps, so the timed run builds and loads its own."""
    from sortie.sim.navigation import cache
    from sortie.sim.shared_worlds import SHARED_WORLDS

    SHARED_WORLDS.clear()
    cache._memory.clear()


def main() -> None:
    """Run the suites once to fill the graph cache, then once timed; print the split."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--suites", default=SUITES)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    suites = tuple(args.suites.split(","))
    with tempfile.TemporaryDirectory() as folder:
        os.environ.setdefault("SORTIE_CACHE", str(Path(folder) / "cache"))
        (Path(folder) / "warm").mkdir()
        run(suites, args.limit, Path(folder) / "warm")
        forget_worlds_and_graphs()
        timers = Timers()
        instrument(timers)
        (Path(folder) / "timed").mkdir()
        total = run(suites, args.limit, Path(folder) / "timed")
    episodes = timers.calls["episode"]
    table = Table(
        title=f"Cached oracle run of {', '.join(suites)}: {episodes} episodes, {total:.1f} CPU s, "
        f"{1000 * total / episodes:.1f} ms an episode (load {os.getloadavg()[0]:.1f})"
    )
    for column in ("piece", "calls", "incl ms/episode", "excl ms/episode"):
        table.add_column(column, justify="left" if column == "piece" else "right")
    for name in sorted(timers.incl, key=lambda n: -timers.incl[n]):
        incl, excl = timers.incl[name], timers.incl[name] - timers.child[name]
        row = (f"{timers.calls[name]:,}", f"{1000 * incl / episodes:.1f}")
        table.add_row(name, *row, f"{1000 * excl / episodes:.1f}")
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
