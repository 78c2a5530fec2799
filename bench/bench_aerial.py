"""Benchmark aerial runs: missions per minute of the oracle over a whole suite, repeats included.

Run: ``.venv/bin/python bench/bench_aerial.py [--suite aerial-v1] [--repeats 3] [--workers 2]
[--agent oracle]``; prints a table. The run goes into a fresh temporary store, as
``sortie run`` would, so worker start-up, world builds, flights, scoring and the store's
writes are all included. Target: aerial-v1 × 3 with the oracle under 2 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store


def main() -> None:
    """Time one stored run and print missions, seconds, missions per minute and success."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--suite", default="aerial-v1")
    parser.add_argument("--agent", default="oracle")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        request = RunRequest(
            (args.suite,),
            args.agent,
            repeats=args.repeats,
            workers=args.workers,
            store=Path(folder) / "s.db",
        )
        with Store(request.store) as store:
            plan = plan_run(request, store)
            started = time.perf_counter()
            execute(plan, request, store)
            seconds = time.perf_counter() - started
            episodes = store.episodes(plan.run_id)
    success = sum(e.outcome == "success" for e in episodes) / len(episodes)
    table = Table(
        title=f"{args.suite} × {args.repeats}, {args.agent}, {args.workers} workers "
        f"({os.cpu_count()} CPUs, load {load:.1f} at start)"
    )
    for column in ("missions", "seconds", "missions/min", "SR"):
        table.add_column(column, justify="right")
    table.add_row(
        str(len(episodes)),
        f"{seconds:.1f}",
        f"{60 * len(episodes) / seconds:.0f}",
        f"{success:.1%}",
    )
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
