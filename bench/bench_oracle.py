"""Benchmark the oracle on the rescue suites: episodes per minute per level, one process.

Run: ``.venv/bin/python bench/bench_oracle.py [--suites rescue-l1-v1,...]``; prints a table.
Each episode pays for its own world, the navigation graph the oracle plans on, the steps
and the trajectory record; the table splits out the graph builds.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sortie.run.suite import RunSettings, run_suite
from sortie.sim.navigation import graph
from sortie.suites import load_suite

SUITES = ",".join(f"rescue-l{k}-v1" for k in range(1, 6))


def timed_graph_builds() -> list[float]:
    """Wrap ``NavGraph.build`` so every call's duration is recorded; return the list."""
    durations: list[float] = []
    original = graph.NavGraph.build.__func__  # type: ignore[attr-defined]

    def build(cls, *args, **kwargs):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        result = original(cls, *args, **kwargs)
        durations.append(time.perf_counter() - start)
        return result

    graph.NavGraph.build = classmethod(build)  # type: ignore[method-assign, assignment]
    return durations


def main() -> None:
    """Run the oracle over each suite and print one row per suite."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--suites", default=SUITES)
    args = parser.parse_args()
    graphs = timed_graph_builds()
    table = Table(title="Oracle on the rescue suites (one process)")
    for column in (
        "suite",
        "episodes",
        "success %",
        "steps",
        "seconds",
        "episodes/min",
        "graph builds s",
    ):
        table.add_column(column, justify="right")
    total_seconds, total_episodes = 0.0, 0
    for name in args.suites.split(","):
        suite, before = load_suite(name), len(graphs)
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as out:
            results = run_suite(suite, "oracle", {}, RunSettings(Path(out)))
        seconds = time.perf_counter() - start
        total_seconds, total_episodes = total_seconds + seconds, total_episodes + len(results)
        success = 100.0 * sum(r.footer.outcome == "success" for r in results) / len(results)
        steps = sum(r.footer.steps for r in results)
        table.add_row(
            name,
            str(len(results)),
            f"{success:.0f}",
            str(steps),
            f"{seconds:.1f}",
            f"{60 * len(results) / seconds:.1f}",
            f"{sum(graphs[before:]):.1f}",
        )
    table.add_row(
        "all",
        str(total_episodes),
        "",
        "",
        f"{total_seconds:.1f}",
        f"{60 * total_episodes / total_seconds:.1f}",
        f"{sum(graphs):.1f}",
    )
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
