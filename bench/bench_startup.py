"""Benchmark start-up: the CPU time of a command or import before any work is done.

Run: ``.venv/bin/python bench/bench_startup.py [--repeats 5] [--tree PATH]``; prints a table.
Each row runs in a fresh interpreter (as a user's shell or a spawned worker does), after one
uncounted run that writes the bytecode caches (``PYTHONDONTWRITEBYTECODE`` is cleared for the
children). CPU is the children's user + system time (``getrusage``), the median of the
repeats; wall is the median wall time. ``--tree`` times another checkout of sortie (its folder
goes first on ``PYTHONPATH``), e.g. main's before a change. Other processes on the machine
distort the figures; the title shows the load average.
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
    "sortie run rescue-l1-v2 --agent oracle --limit 1": [
        "-m",
        "sortie.cli",
        "run",
        "rescue-l1-v2",
        "--agent",
        "oracle",
        "--limit",
        "1",
        "--store",
        "{store}",
    ],
}


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
    Console().print(table)


if __name__ == "__main__":
    main()
