"""Benchmark the local executor: episodes per second against worker count.

Run: ``.venv/bin/python bench/bench_workers.py [--suite rescue-smoke-v2[,...]]
[--agents oracle,explorer] [--workers 1,2] [--executor local|ray] [--command] [--repeats 1]``;
prints a table (``--suite`` takes one suite or several, comma-separated: ``a,b``). Each cell
is one stored run into a fresh temporary store, so it includes starting the pool (workers
import sortie and build their backend). With ``--command`` a cell is the whole ``sortie run``
command instead, timed from its launch to its exit: what a user waits for, its own imports
and the run's planning included. With ``--repeats`` each cell keeps its fastest repeat, the
worker counts taken in turn. Other processes on the machine distort the figures; the table
shows the load average.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store


def timed_run(
    suites: tuple[str, ...], agent: str, workers: int, executor: str = "local"
) -> tuple[int, float]:
    """Run ``agent`` on ``suites`` with ``workers`` into a temporary store; return (n, seconds)."""
    with tempfile.TemporaryDirectory() as folder:
        request = RunRequest(
            suites, agent, workers=workers, store=Path(folder) / "s.db", executor=executor
        )
        with Store(request.store) as store:
            plan = plan_run(request, store)
            start = time.perf_counter()
            execute(plan, request, store)
            return len(plan.jobs), time.perf_counter() - start


def timed_command(
    suites: tuple[str, ...], agent: str, workers: int, executor: str = "local"
) -> tuple[int, float]:
    """Time a whole ``sortie run`` of ``agent`` on ``suites``; return (episodes, wall seconds)."""
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "s.db"
        command = [sys.executable, "-m", "sortie.cli", "run", *suites, "--agent", agent]
        command += ["--workers", str(workers), "--executor", executor, "--store", str(store)]
        start = time.perf_counter()
        subprocess.run(command, cwd=folder, check=True, capture_output=True)
        seconds = time.perf_counter() - start
        with Store(store) as opened:
            return len(opened.episodes(opened.runs()[0])), seconds


def main() -> None:
    """Time every (agent, worker count) pair and print episodes per second and speed-up."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--suite", default="rescue-smoke-v2", help="a suite, or several: a,b")
    parser.add_argument("--agents", default="oracle,explorer")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--executor", default="local", choices=("local", "ray"))
    parser.add_argument("--command", action="store_true", help="time whole sortie run commands")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    timed = timed_command if args.command else timed_run
    load = os.getloadavg()[0]
    table = Table(
        title=f"{args.suite}: episodes/s by workers, {args.executor} executor, "
        f"{'whole commands' if args.command else 'runs'}, best of {args.repeats} "
        f"({os.cpu_count()} CPUs, load {load:.1f} at start)"
    )
    for column in ("agent", "workers", "episodes", "seconds", "episodes/s", "speed-up"):
        table.add_column(column, justify="right")
    counts = [int(w) for w in args.workers.split(",")]
    suites = tuple(s.strip() for s in args.suite.split(","))
    for agent in args.agents.split(","):
        best: dict[int, tuple[int, float]] = {}
        for _ in range(args.repeats):
            for workers in counts:
                count, seconds = timed(suites, agent, workers, args.executor)
                if workers not in best or seconds < best[workers][1]:
                    best[workers] = (count, seconds)
        base = None
        for workers in counts:
            count, seconds = best[workers]
            base = base or seconds
            table.add_row(
                agent,
                str(workers),
                str(count),
                f"{seconds:.1f}",
                f"{count / seconds:.2f}",
                f"{base / seconds:.2f}x",
            )
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
