"""Benchmark the embedded simulator: build time, steps per second, raw Embree throughput.

Steps per second are measured per sensor set with 1 and 2 processes; raw Embree primary-ray
throughput on the same scene makes the renderer's overhead a ratio.

Run: ``.venv/bin/python bench/bench_sim.py [--worlds a,b] [--steps N]``; prints a table.
"""

from __future__ import annotations

import argparse
import multiprocessing
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from sortie.diagnostics.gallery import valid_pose
from sortie.sim.camera import CameraSpec, world_rays
from sortie.sim.raycast import RayCaster
from sortie.sim.worlds import WORLDS, build_world

SENSOR_SETS = {
    "rgb+depth+sem 128²": (128, ("rgb", "depth", "semantic")),
    "rgb+depth+sem 256²": (256, ("rgb", "depth", "semantic")),
    "depth 128²": (128, ("depth",)),
    "no sensors": (128, ()),
}


def steps_per_second(job: tuple[str, int, tuple[str, ...], int]) -> float:
    """Return walker steps/s in one process for (world, size, sensors, steps)."""
    from sortie.diagnostics.gallery import measure_steps

    world, size, sensors, steps = job
    return measure_steps(world, 0, steps, size, sensors)


def parallel_steps(
    world: str, size: int, sensors: tuple[str, ...], steps: int, processes: int
) -> float:
    """Return total steps/s of ``processes`` processes stepping at once."""
    if processes == 1:
        return steps_per_second((world, size, sensors, steps))
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        return sum(pool.map(steps_per_second, [(world, size, sensors, steps)] * processes))


def raw_embree_frames_per_second(world: str, size: int = 128, frames: int = 100) -> float:
    """Return frames/s of bare Embree primary rays (no shading, no bodies) from a valid pose."""
    scene = build_world(world, 0)
    pose = valid_pose(scene, 0)
    caster = RayCaster(scene)
    embree = caster._static_embree  # noqa: SLF001 - the bare engine is what we compare to
    spec = CameraSpec(size, size, 90.0)
    origins = np.tile(np.float32([pose.x, pose.y, pose.z + 1.6]), (size * size, 1))
    rays = [world_rays(spec, pose.yaw + i * 3.6) for i in range(frames)]
    start = time.perf_counter()
    for dirs in rays:
        embree.run(origins, dirs, output=1)
    return frames / (time.perf_counter() - start)


def build_seconds(world: str, repeats: int = 3) -> float:
    """Return the best of ``repeats`` build times of a world."""
    times = []
    for seed in range(repeats):
        start = time.perf_counter()
        build_world(world, seed)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    """Measure every world and print one table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--worlds", default=",".join(WORLDS.names()))
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    table = Table(title="Embedded simulator, walker steps per second (1 process / 2 processes)")
    for column in ["world", "build s", "embree 128² frames/s", *SENSOR_SETS, "overhead ×"]:
        table.add_column(column, justify="right")
    for world in args.worlds.split(","):
        cells, one_core = [], {}
        for label, (size, sensors) in SENSOR_SETS.items():
            steps = args.steps * (10 if not sensors else 1)
            single = parallel_steps(world, size, sensors, steps, 1)
            double = parallel_steps(world, size, sensors, steps, 2)
            one_core[label] = single
            cells.append(f"{single:,.0f} / {double:,.0f}")
        raw = raw_embree_frames_per_second(world)
        overhead = raw / one_core["rgb+depth+sem 128²"]
        table.add_row(
            world, f"{build_seconds(world):.2f}", f"{raw:,.0f}", *cells, f"{overhead:.2f}"
        )
    Console(width=200).print(table)


if __name__ == "__main__":
    main()
