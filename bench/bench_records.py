"""Benchmark reading a long trajectory record and computing all its metrics.

Writes one record of at least ``--steps`` steps (the random agent on the first L5 rescue
episode, its clock budget raised so that it walks that long), then reads it back with the
same checks as a run (``read_trajectory`` with ``check_episode``) and scores it, ``--repeats``
times, first with the columns file the run wrote beside it (``sortie.core.columns``), then
without; prints the best CPU time of each part. Target: under 10 ms for 2,000 steps.

Run: ``.venv/bin/python bench/bench_records.py [--steps 2000] [--repeats 20]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sortie.core.columns import columns_file
from sortie.core.records_io import Suite, read_trajectory
from sortie.missions.loading import load_suite
from sortie.missions.registry import FAMILIES
from sortie.run.jobs import check_episode
from sortie.run.suite import RunSettings, run_suite


def long_record(folder: Path, steps: int) -> Path:
    """Write a record of at least ``steps`` steps into ``folder``; return its path."""
    suite = load_suite("rescue-l5-v2")
    episode = suite.episodes[0]
    mission = {**episode.mission, "budget_s": steps * 0.2 + 1.0}
    episode = episode.model_copy(update={"mission": mission})
    (result,) = run_suite(Suite(suite.header, [episode]), "random", {}, RunSettings(folder))
    return result.path


def best_seconds(work, repeats: int) -> float:  # type: ignore[no-untyped-def]
    """Return the best CPU time of ``repeats`` calls of ``work``."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return min(times)


def timed(path: Path, repeats: int) -> tuple[float, float]:
    """Return the best CPU seconds of reading the record at ``path`` and of scoring it."""
    trajectory = read_trajectory(path, check=check_episode)
    scorer = FAMILIES.get(trajectory.header.episode.family).load_scorer()
    read = best_seconds(lambda: read_trajectory(path, check=check_episode), repeats)
    # Each scoring gets a freshly read record: columns made from the steps on first use are
    # part of scoring a record read without its columns file.
    fresh = [read_trajectory(path, check=check_episode) for _ in range(repeats)]
    score = best_seconds(lambda: scorer(fresh.pop()), repeats)
    return read, score


def main() -> None:
    """Write the record, time reading and scoring it with and without its columns file."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    table = Table(title=f"one record, best of {args.repeats} (CPU time)")
    for column in ("read", "steps", "bytes", "read ms", "metrics ms", "total ms"):
        table.add_column(column, justify="right")
    with tempfile.TemporaryDirectory() as folder:
        path = long_record(Path(folder), args.steps)
        steps = len(read_trajectory(path).steps)
        for how in ("with its columns file", "JSONL alone"):
            read, score = timed(path, args.repeats)
            table.add_row(
                how,
                f"{steps:,}",
                f"{path.stat().st_size:,}",
                f"{read * 1000:.1f}",
                f"{score * 1000:.1f}",
                f"{(read + score) * 1000:.1f}",
            )
            columns_file(path).unlink(missing_ok=True)
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
