"""Benchmark the oracle on the rescue suites: the whole run, cold and then with graphs cached.

Runs the suites (all five levels, 213 episodes, by default) with the oracle on ``--workers``
worker processes into a fresh store, as ``sortie run`` would, ``--runs`` times. The first run
starts from an empty navigation-graph cache (a temporary ``SORTIE_CACHE``) and builds every
episode's graph; later runs read them from that cache. Each row gives wall time and CPU time
(this process and its workers), so a machine shared with other jobs shows in the gap.

Run: ``.venv/bin/python bench/bench_oracle.py [--suites rescue-l1-v2,...] [--workers 2]
[--runs 2]``; prints a table. Target: 213 episodes in under 60 s on 2 workers.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store

SUITES = ",".join(f"rescue-l{k}-v2" for k in range(1, 6))


def cpu_seconds() -> float:
    """Return the CPU time (user + system) of this process and of every worker done.

    Workers are forked by the fork server, so their time counts in its children's, not in
    this process's (Linux: read from ``/proc``).
    """
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + _fork_server()


def _fork_server() -> float:
    """Return the fork server's CPU time and its reaped children's (0 when there is none)."""
    from multiprocessing import forkserver

    pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    ticks = sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def one_run(suites: tuple[str, ...], workers: int, folder: Path) -> list[str]:
    """Run the oracle once into a fresh store under ``folder``; return the table cells."""
    request = RunRequest(suites, "oracle", workers=workers, store=folder / "s.db")
    started, cpu = time.perf_counter(), cpu_seconds()
    with Store(request.store) as store:
        plan = plan_run(request, store)
        execute(plan, request, store)
        episodes = store.episodes(plan.run_id)
    time.sleep(0.5)  # the fork server reaps the workers that have just exited
    wall, cpu = time.perf_counter() - started - 0.5, cpu_seconds() - cpu
    success = 100 * sum(e.outcome == "success" for e in episodes) / len(episodes)
    return [
        str(len(episodes)),
        f"{success:.0f}",
        f"{wall:.1f}",
        f"{cpu:.1f}",
        f"{60 * len(episodes) / wall:.0f}",
    ]


def main() -> None:
    """Run the suites ``--runs`` times and print one row per run."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--suites", default=SUITES)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    suites = tuple(args.suites.split(","))
    table = Table(
        title=f"Oracle on {', '.join(suites)}, {args.workers} workers "
        f"({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at start)"
    )
    for column in ("run", "graphs", "episodes", "success %", "wall s", "CPU s", "episodes/min"):
        table.add_column(column, justify="right")
    with tempfile.TemporaryDirectory() as folder:
        os.environ["SORTIE_CACHE"] = str(Path(folder) / "cache")  # the workers inherit it
        for run in range(1, args.runs + 1):
            out = Path(folder) / f"run{run}"
            out.mkdir()
            cells = one_run(suites, args.workers, out)
            table.add_row(str(run), "built" if run == 1 else "cached", *cells)
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
