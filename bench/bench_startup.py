"""Benchmark start-up: the CPU time of a command or import before any work is done.

Run: ``.venv/bin/python bench/bench_startup.py [--repeats 5] [--tree PATH]``; prints a table.
Each row runs in a fresh interpreter (as a user's shell or a spawned worker does), after one
uncounted run that writes the bytecode caches (``PYTHONDONTWRITEBYTECODE`` is cleared for the
children). CPU is the children's user + system time (``getrusage``), the median of the
repeats; wall is the median wall time. ``--tree`` times another checkout of sortie (its folder
goes first on ``PYTHONPATH``), e.g. main's before a change. Other processes on the machine
distort the figures; the title shows the load average.

Workers forked by the fork server are its children, not the run's, so a run on workers is
timed by its wall time, and a worker's start by its own CPU clock: the CPU a worker has spent
when it is ready for its first rescue job, spawned (a fresh interpreter importing sortie) or
forked from the fork server (``sortie.run.fork_server.worker_context``).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

RUN = ["-m", "sortie.cli", "run", "rescue-l1-v2", "--agent", "oracle", "--store", "{store}"]
"""The one-episode run's command (a fresh store each time)."""
CASES = {
    "sortie --help": ["-m", "sortie.cli", "--help"],
    "import sortie": ["-c", "import sortie"],
    "import sortie; gymnasium.make(Rescue-v1)": [
        "-c",
        "import sortie, gymnasium; gymnasium.make('sortie/Rescue-v1', suite='rescue-smoke-v2')",
    ],
    "a worker's imports (executor + embedded backend)": [
        "-c",
        "import sortie.run.executor, sortie.backends.embedded",
    ],
    "sortie run rescue-l1-v2 --agent oracle --limit 1": [*RUN, "--limit", "1"],
}
WORKERS = {
    "the same, 2 episodes on --workers 2 (wall only)": [*RUN, "--limit", "2", "--workers", "2"],
}
"""Cases whose workers are forked by the fork server: their CPU is not the run's children's."""
PROBE = """
import multiprocessing, os, sys, time
from concurrent.futures import ProcessPoolExecutor

def ready():
    import sortie.backends.embedded, sortie.run.executor  # what a rescue job needs first
    return time.process_time()

if __name__ == "__main__":
    from sortie.run import executor
    if sys.argv[1] == "spawn":
        context = multiprocessing.get_context("spawn")
    else:
        from sortie.run.fork_server import worker_context
        context = worker_context()
    pool = ProcessPoolExecutor(
        1, mp_context=context, initializer=executor._start_worker, initargs=(os.getpid(),)
    )
    print(pool.submit(ready).result())
    pool.shutdown()
"""
"""Prints the CPU seconds a worker spent from its start to being ready for a rescue job."""


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run ``python args`` once; return its CPU seconds (user + system) and wall seconds."""
    with tempfile.TemporaryDirectory() as folder:
        filled = [a.replace("{store}", str(Path(folder) / "s.db")) for a in args]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(  # in an empty folder: the current one would go first on sys.path
            [sys.executable, *filled], env=env, check=True, capture_output=True, cwd=folder
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def worker_ready(how: str, env: dict[str, str]) -> float:
    """Return the CPU seconds one worker (``spawn`` or ``server``) takes to be ready."""
    with tempfile.TemporaryDirectory() as folder:
        probe = Path(folder) / "probe.py"
        probe.write_text(PROBE)
        done = subprocess.run(
            [sys.executable, str(probe), how], env=env, check=True, capture_output=True, text=True
        )
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    """Time every case and print its median CPU and wall time."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tree", type=Path, default=None, help="another sortie checkout")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if args.tree:
        env["PYTHONPATH"] = os.pathsep.join([str(args.tree.resolve()), env.get("PYTHONPATH", "")])
    tree = args.tree or Path(__file__).resolve().parents[1]
    table = Table(
        title=f"start-up of {tree}: median of {args.repeats} ({os.cpu_count()} CPUs, load "
        f"{os.getloadavg()[0]:.1f} at start)"
    )
    for column in ("what", "CPU s", "wall s"):
        table.add_column(column, justify="right")
    for name, case in CASES.items():
        timed(case, env)  # writes the bytecode caches; not counted
        runs = [timed(case, env) for _ in range(args.repeats)]
        cpu = statistics.median(r[0] for r in runs)
        wall = statistics.median(r[1] for r in runs)
        table.add_row(name, f"{cpu:.3f}", f"{wall:.3f}")
    for name, case in WORKERS.items():
        timed(case, env)
        wall = statistics.median(timed(case, env)[1] for _ in range(args.repeats))
        table.add_row(name, "", f"{wall:.3f}")
    for how in ("spawn", "server"):
        try:
            cpu = statistics.median(worker_ready(how, env) for _ in range(args.repeats))
        except subprocess.CalledProcessError:  # a tree without a fork server
            continue
        table.add_row(f"a worker ready for its first job ({how})", f"{cpu:.3f}", "")
    Console().print(table)


if __name__ == "__main__":
    main()
