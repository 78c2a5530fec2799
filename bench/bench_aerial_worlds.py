"""Benchmark the flight worlds: build time, triangles, and a drone camera's frames per second.

The drone looks from 30 m up, camera pitched -45 degrees, 256² pixels, RGB + depth +
semantic, turning 36 degrees between frames over the middle of the world.

Run: ``.venv/bin/python bench/bench_aerial_worlds.py [--frames N]``; prints a table.
"""

from __future__ import annotations

import argparse
import time

from rich.console import Console
from rich.table import Table

from sortie.sim.camera import CameraSpec
from sortie.sim.render import Renderer
from sortie.sim.worlds import FLIGHT_WORLDS, build_world

DRONE = CameraSpec(256, 256, 90.0, -45.0)


def build_seconds(name: str, repeats: int = 3) -> float:
    """Return the best of ``repeats`` build times of a flight world (seeds 0, 1, ...)."""
    times = []
    for seed in range(repeats):
        start = time.perf_counter()
        build_world(name, seed, FLIGHT_WORLDS[name])
        times.append(time.perf_counter() - start)
    return min(times)


def drone_fps(name: str, frames: int) -> tuple[int, float]:
    """Return the world's triangle count and drone frames per second from 30 m up."""
    scene = build_world(name, 0, FLIGHT_WORLDS[name])
    triangles = sum(part.triangle_count for obj in scene.objects for part in obj.parts)
    renderer = Renderer(scene)
    renderer.render(DRONE, (0.0, 0.0, 30.0), 0.0)  # the first frame builds caches
    start = time.perf_counter()
    for i in range(frames):
        renderer.render(DRONE, (0.0, 0.0, 30.0), 36.0 * i)
    return triangles, frames / (time.perf_counter() - start)


def main() -> None:
    """Measure every flight world and print one table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=50)
    args = parser.parse_args()
    table = Table(title="Flight worlds: build, size, drone camera at 30 m (256², -45°)")
    for column in ("world", "build s", "objects", "triangles", "frames/s"):
        table.add_column(column, justify="right")
    for name in FLIGHT_WORLDS:
        objects = len(build_world(name, 0, FLIGHT_WORLDS[name]).objects)
        triangles, fps = drone_fps(name, args.frames)
        table.add_row(
            name, f"{build_seconds(name):.2f}", f"{objects:,}", f"{triangles:,}", f"{fps:.0f}"
        )
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
