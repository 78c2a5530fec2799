"""Benchmark the ground worlds' builds: the builder, then the ray caster's static part.

Each world is built for ``--seeds`` seeds (1, 2, ...) after one uncounted build (seed 0, which
fills the process's kept tables and fonts), as a run worker builds one world per episode;
"builder" is ``build_world``, "+ static part" adds the ray caster's tables of the built scene
(``StaticPart``: what a backend pays besides the builder before an episode's first step). CPU
time (``time.process_time``), the mean over the seeds, then the median over ``--rounds``.

Run: ``.venv/bin/python bench/bench_worlds.py [--seeds 10] [--rounds 3] [--tree PATH]``; prints
a table. ``--tree`` times another checkout beside this one (its folder goes first on
``PYTHONPATH``), e.g. the tree before a change, each round in a fresh interpreter per tree,
the trees alternately; the ratio is this tree's time over the other's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

WORLDS = ("flexible_room", "suburb", "street", "forest", "campus", "tower", "station")
"""The rescue suites' worlds (``sortie.missions.rescue.spec.LEVELS``)."""


def measure(worlds: tuple[str, ...], seeds: int) -> dict[str, tuple[float, float]]:
    """Return per world the mean CPU ms of its builds and of its builds plus static parts."""
    from sortie.sim.raycast import StaticPart
    from sortie.sim.worlds import build_world

    times = {}
    for name in worlds:
        StaticPart(build_world(name, 0))
        built, static = 0.0, 0.0
        for seed in range(1, seeds + 1):
            start = time.process_time()
            scene = build_world(name, seed)
            middle = time.process_time()
            StaticPart(scene)
            built += middle - start
            static += time.process_time() - middle
        times[name] = (1000 * built / seeds, 1000 * (built + static) / seeds)
    return times


def measure_in(tree: Path, worlds: tuple[str, ...], seeds: int) -> dict[str, list[float]]:
    """Return ``measure``'s answer from a fresh interpreter importing sortie from ``tree``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")])
    command = [sys.executable, __file__, "--child", "--seeds", str(seeds), "--worlds"]
    out = subprocess.run([*command, ",".join(worlds)], env=env, capture_output=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    """Time each world's builds in this tree (and ``--tree``), print one row per world."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worlds", default=",".join(WORLDS))
    parser.add_argument("--tree", type=Path, default=None, help="another sortie checkout")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    worlds = tuple(args.worlds.split(","))
    if args.child:
        print(json.dumps(measure(worlds, args.seeds)))
        return
    here = Path(__file__).resolve().parents[1]
    trees = [args.tree.resolve(), here] if args.tree else [here]
    rounds: dict[Path, list[dict[str, list[float]]]] = {tree: [] for tree in trees}
    load = os.getloadavg()[0]
    for _ in range(args.rounds):
        for tree in trees:
            rounds[tree].append(measure_in(tree, worlds, args.seeds))
    table = Table(
        title=f"World builds, CPU ms, mean of {args.seeds} seeds, median of {args.rounds} rounds "
        f"({os.cpu_count()} CPUs, load {load:.1f} to {os.getloadavg()[0]:.1f})"
    )
    table.add_column("world")
    for tree in trees:
        table.add_column(f"{tree.name}: builder", justify="right")
        table.add_column("+ static part", justify="right")
    if args.tree:
        table.add_column("ratio", justify="right")
    for name in worlds:
        cells, totals = [], []
        for tree in trees:
            built = statistics.median(r[name][0] for r in rounds[tree])
            total = statistics.median(r[name][1] for r in rounds[tree])
            cells += [f"{built:.1f}", f"{total:.1f}"]
            totals.append((built, total))
        if args.tree:
            (b0, t0), (b1, t1) = totals
            cells.append(f"{b1 / b0:.2f} / {t1 / t0:.2f}")
        table.add_row(name, *cells)
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
