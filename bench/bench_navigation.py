"""Benchmark the navigation graph: build time and size per world, and route query time.

"build s" casts every ray (an empty cache); "cached s" reads the same graph back from the
disk cache (``sortie.sim.navigation.cache``), as a second run of the same episodes does.
Times are the least CPU time of ``--repeats`` builds (each cold one into an empty cache of
its own). The worlds are the ground worlds unless ``--worlds`` names others (a flight world
at 0.25 m has millions of nodes).

Run: ``.venv/bin/python bench/bench_navigation.py [--worlds a,b] [--cell 0.25] [--repeats 2]``;
prints a table. ``open100`` is a bare 100 m x 100 m floor (the most nodes per square metre).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from sortie.sim.mesh import slab
from sortie.sim.navigation import NavGraph, cache
from sortie.sim.scene import Scene, SceneObject
from sortie.sim.worlds import FLIGHT_WORLDS, WORLDS, build_world


def open_floor(side: float = 100.0) -> Scene:
    """Return a bare square floor of ``side`` metres."""
    half = side / 2
    floor = SceneObject("floor_0", "floor", (slab(-half, -half, half, half, -0.1, 0.0),))
    return Scene([floor], (-half, -half, half, half), origin="open100")


def timed_build(scene: Scene, cell: float) -> tuple[NavGraph, float]:
    """Return the scene's graph and the CPU time it took, nothing kept in memory."""
    cache._memory.clear()  # noqa: SLF001 - every build here must reach the disk or the rays
    start = time.process_time()
    graph = NavGraph.build(scene, cell=cell)
    return graph, time.process_time() - start


def cold_build(scene: Scene, cell: float, repeats: int) -> tuple[NavGraph, float]:
    """Return the scene's graph and the least CPU time of ``repeats`` builds from no cache.

    The first build of a process runs slower than later ones (memory first touched), so a
    single build per world would charge that to whichever world comes first.
    """
    times = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as folder:
            os.environ["SORTIE_CACHE"] = folder
            graph, seconds = timed_build(scene, cell)
            times.append(seconds)
    return graph, min(times)


def measure(scene: Scene, cell: float, queries: int = 20, repeats: int = 2) -> list[str]:
    """Return the table row for one scene: build times, sizes, mean route query time.

    The cold build is the least of ``repeats``; the cached one reads the last cold build's file.
    """
    graph, build = cold_build(scene, cell, repeats)
    with tempfile.TemporaryDirectory() as folder:
        os.environ["SORTIE_CACHE"] = folder
        timed_build(scene, cell)  # a build that leaves the graph on disk
        cached = min(timed_build(scene, cell)[1] for _ in range(repeats))
    rng = np.random.default_rng(0)
    pairs = [(graph.random_node(rng), graph.random_node(rng)) for _ in range(queries)]
    start = time.process_time()
    for a, b in pairs:
        if a is not None and b is not None:
            graph.route(graph.node_position(a), graph.node_position(b))
    query = (time.process_time() - start) / max(len(pairs), 1)
    xmin, ymin, xmax, ymax = scene.bounds
    return [
        scene.origin,
        f"{xmax - xmin:.0f} x {ymax - ymin:.0f}",
        f"{build:.2f}",
        f"{cached:.2f}",
        f"{graph.node_count:,}",
        f"{graph.adjacency.nnz // 2:,}",
        f"{len(graph.doors)}",
        f"{query * 1000:.0f}",
    ]


def main() -> None:
    """Build each world's graph and print the measurements."""
    parser = argparse.ArgumentParser(description=__doc__)
    ground = [name for name in WORLDS.names() if name not in FLIGHT_WORLDS or FLIGHT_WORLDS[name]]
    parser.add_argument("--worlds", default=",".join(ground))
    parser.add_argument("--cell", type=float, default=0.25)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    table = Table(title=f"navigation graph, cell {args.cell} m (CPU time)")
    for column in ("world", "size m", "build s", "cached s", "nodes", "edges", "doors", "route ms"):
        table.add_column(column, justify="right")
    scenes = [build_world(name, 0) for name in args.worlds.split(",") if name]
    for scene in [*scenes, open_floor()]:
        table.add_row(*measure(scene, args.cell, repeats=args.repeats))
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
