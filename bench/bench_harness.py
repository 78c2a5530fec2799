"""Benchmark what the harness costs per step next to the simulator it drives.

Runs episodes through ``run_suite`` (mission rules, the runtime, the step record written and
scored, as ``sortie run`` does in a worker) and sums, in CPU time: the backend's own step,
the agent's ``act``, the episode's reset (the world built) and the whole episode loop
(``run_episode``). What the loop costs beyond the backend's step and the agent's act is the
loop's own cost per step; with scoring the record after the episode (reading it back), spread
over its steps, it is the harness's own cost per step, and "ratio" sets that against the
backend's step. The speed issue's target: a ratio of at most 1. Agents that see no images make
the backend step sensorless.

Timing every step costs time too (two clock reads and a wrapper a call: about 4 µs a step, as
much as a fifth of the harness), so each repeat runs the suite twice: once with only the
episodes timed (the loop, the reset, the scoring: a few calls an episode), once with the
backend's steps and the agent's acts timed as well. The loop's own cost is the first run's
loop less the second run's steps and acts, each of those less what a timed call that does
nothing measures ("timer µs/call": the clock's own share inside the window). Each figure is
the median of the repeats: the loop's is a difference of two runs, whose smallest would be
the luckiest pair.

Run: ``.venv/bin/python bench/bench_harness.py [--suite rescue-l5-v2] [--limit 10]
[--agents random,oracle] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from sortie.agents.base import Agent
from sortie.backends.embedded import EmbeddedBackend
from sortie.core.records_io import Suite
from sortie.missions.loading import load_suite
from sortie.missions.runtime import MissionRuntime
from sortie.run import jobs
from sortie.run.suite import RunSettings, run_suite

PARTS = ("loop", "backend step", "agent act", "reset", "scoring")


@contextmanager
def timing(owner: Any, name: str, part: str, spent: dict[str, float]) -> Iterator[None]:
    """Add the CPU time of every call of ``owner.name`` to ``spent[part]`` while inside."""
    original = getattr(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            spent[part] += time.process_time() - start
            spent[f"{part} calls"] += 1

    setattr(owner, name, timed)
    try:
        yield
    finally:
        setattr(owner, name, original)


def measure(suite: Suite, agent: str, bias: float) -> tuple[dict[str, float], int]:
    """Run ``suite`` with ``agent`` twice; return CPU seconds per part and the steps taken.

    ``bias`` is what a timed call that does nothing measures (``timer_bias``).
    """
    plain, steps = _run(suite, agent, per_step=False)
    timed, timed_steps = _run(suite, agent, per_step=True)
    if timed_steps != steps:  # the two runs must be the same episodes, step for step
        raise RuntimeError(f"{agent}: {steps} steps, then {timed_steps} in the timed run")
    spent = {part: plain[part] for part in ("reset", "scoring")}
    for part in ("backend step", "agent act"):
        spent[part] = timed[part] - bias * timed[f"{part} calls"]
    spent["loop"] = plain["loop"] - spent["backend step"] - spent["agent act"] - plain["reset"]
    return spent, steps


def _run(suite: Suite, agent: str, per_step: bool) -> tuple[dict[str, float], int]:
    """Run ``suite`` with ``agent``, timing its episodes (and with ``per_step`` their steps)."""
    spent: dict[str, float] = defaultdict(float)
    steps = 0
    with (
        _loops_timed(spent, per_step),
        timing(EmbeddedBackend, "step", "backend step", spent) if per_step else nullcontext(),
        timing(MissionRuntime, "reset", "reset", spent),
        timing(jobs, "score_record", "scoring", spent),
        tempfile.TemporaryDirectory() as folder,
    ):
        for result in run_suite(suite, agent, {}, RunSettings(Path(folder))):
            steps += result.footer.steps
    return spent, steps


def timer_bias(calls: int = 200_000) -> float:
    """Return the CPU seconds a timed call of a function that does nothing adds up to."""

    class Idle:
        def call(self) -> None:
            """Do nothing."""

    spent: dict[str, float] = defaultdict(float)
    idle = Idle()
    with timing(Idle, "call", "idle", spent):
        for _ in range(calls):
            idle.call()
    return spent["idle"] / calls


@contextmanager
def _loops_timed(spent: dict[str, float], per_step: bool) -> Iterator[None]:
    """Time each episode loop ``run_job`` runs (and with ``per_step`` its agent's acts)."""
    original = jobs.run_episode

    def run_episode(runtime: MissionRuntime, agent: Agent, *args: Any, **kwargs: Any) -> Any:
        act = agent.act

        def timed_act(*act_args: Any) -> Any:
            start = time.process_time()
            try:
                return act(*act_args)
            finally:
                spent["agent act"] += time.process_time() - start
                spent["agent act calls"] += 1

        if per_step:
            agent.act = timed_act  # type: ignore[method-assign]
        start = time.process_time()
        try:
            return original(runtime, agent, *args, **kwargs)
        finally:
            spent["loop"] += time.process_time() - start

    jobs.run_episode = run_episode  # type: ignore[assignment]
    try:
        yield
    finally:
        jobs.run_episode = original  # type: ignore[assignment]


def main() -> None:
    """Time the parts of a run per agent; print µs a step and ms an episode."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="rescue-l5-v2")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--agents", default="random,oracle")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    loaded = load_suite(args.suite)
    suite = Suite(loaded.header, loaded.episodes[: args.limit])
    bias = timer_bias()
    table = Table(
        title=f"{args.suite}, {len(suite.episodes)} episodes, median of {args.repeats}; "
        f"timer {bias * 1e6:.2f} µs/call"
    )
    for column in ("agent", "steps", "loop µs/step", "+ scoring µs/step", "backend step µs"):
        table.add_column(column, justify="right")
    table.add_column("ratio", justify="right")
    table.add_column("act µs", justify="right")
    table.add_column("reset ms/ep", justify="right")
    table.add_column("scoring ms/ep", justify="right")
    for agent in args.agents.split(","):
        runs = [measure(suite, agent, bias) for _ in range(args.repeats)]
        steps = runs[0][1]
        best = {part: statistics.median(run[0][part] for run in runs) for part in PARTS}
        per_step = {part: best[part] / steps * 1e6 for part in PARTS}
        per_episode = {part: best[part] / len(suite.episodes) * 1e3 for part in PARTS}
        harness = per_step["loop"] + per_step["scoring"]
        table.add_row(
            agent,
            f"{steps:,}",
            f"{per_step['loop']:.1f}",
            f"{harness:.1f}",
            f"{per_step['backend step']:.1f}",
            f"{harness / per_step['backend step']:.2f}",
            f"{per_step['agent act']:.1f}",
            f"{per_episode['reset']:.1f}",
            f"{per_episode['scoring']:.1f}",
        )
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
