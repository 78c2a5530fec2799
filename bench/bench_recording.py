"""Benchmark what recording costs per step: no record, the JSONL record, the record plus frames.

Run: ``.venv/bin/python bench/bench_recording.py [--episodes 3] [--agent random]``; prints a
table. The same smoke episodes run three ways on one backend in this process: without any
observer, with the JSONL recorder (what every run does), and with the recorder plus the ego
RGB frame of every step stored by content hash (``--record-frames``, which also makes the
backend render RGB). The ways take turns, three rounds, and each keeps its fastest round, so
a burst of load from elsewhere does not land on one way only.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sortie.backends.embedded import EmbeddedBackend
from sortie.missions.loading import load_suite
from sortie.missions.registry import FAMILIES
from sortie.run.episode import JsonlRecorder, run_episode
from sortie.run.frames import FrameKeeper
from sortie.run.jobs import Job, RunSpec, header_of

WAYS = ("no record", "JSONL record", "record + frames")


def run_way(way: str, jobs: list[Job], folder: Path) -> tuple[int, float]:
    """Run the jobs one way; return (steps, seconds)."""
    sensors = ("rgb",) if way == "record + frames" else jobs[0].run.sensors
    backend = EmbeddedBackend(body="walker", sensors=sensors)
    steps, started = 0, time.perf_counter()
    for job in jobs:
        agent = job.run.factory(**job.run.agent.args)
        runtime = FAMILIES.get(job.episode.family).load_runtime()(backend, clock="sim")
        observers = [] if way == "no record" else [JsonlRecorder(folder / f"{job.key}.jsonl")]
        keep: Callable | None = FrameKeeper(folder) if way == "record + frames" else None
        steps += run_episode(runtime, agent, header_of(job), observers, keep).steps
    seconds = time.perf_counter() - started
    backend.close()
    return steps, seconds


def main() -> None:
    """Time each way and print microseconds per step and the overhead over no record."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--agent", default="random")
    args = parser.parse_args()
    suite = load_suite("rescue-smoke-v2")
    run = RunSpec.resolve(args.agent, {}, family="rescue")
    jobs = [Job("smoke", spec, 0, Path("unused"), run) for spec in suite.episodes[: args.episodes]]
    table = Table(title=f"Recording cost per step: {args.agent}, {len(jobs)} smoke episodes")
    for column in ("way", "steps", "µs/step", "overhead"):
        table.add_column(column, justify="right")
    best: dict[str, tuple[int, float]] = {}
    for _ in range(3):
        for way in WAYS:
            with tempfile.TemporaryDirectory() as folder:
                steps, seconds = run_way(way, jobs, Path(folder))
            best[way] = min(best.get(way, (steps, seconds)), (steps, seconds), key=lambda t: t[1])
    base = None
    for way, (steps, seconds) in best.items():
        per_step = seconds / steps * 1e6
        base = base or per_step
        table.add_row(way, str(steps), f"{per_step:.0f}", f"{per_step / base - 1:+.1%}")
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
