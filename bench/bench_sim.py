"""Benchmark the embedded simulator: build time, steps per second, bare Embree throughput.

For each world of the set: the build time (best of 3 seeds), bare Embree primary rays at
128² from the same pose (no shading, no body) through embreex and through packets, and walker
steps per second of the embedded backend per sensor set (128², 256², and the seeds' 640² and
1920×1080), random turns at 1 m/s. Each rate is
measured ``--repeats`` times: in CPU time (``time.process_time``) each step or frame keeps
its fastest repeat, which leaves out the moments other jobs took the core; the wall-time
rate next to it is the fastest whole repeat, so a machine shared with other jobs shows in
the gap. "raster" is bare rasterised frames
(``sortie.sim.raster``: the hits, with its unsure pixels cast), which is what the camera uses
when the extension is built. "% of packets" is the full RGB + depth + semantic step rate at
128² over the bare packet frame rate, both measured in this run. The title names the CPU,
its widest vector extension and the Embree kernels asked for (``SORTIE_EMBREE_ISA``).

World sets: ``ground`` (default, the seven ground worlds), ``flight`` (the five flight
worlds, with their flight parameters; a start pose in a world over 150 m across comes from a
1 m graph, not a 0.25 m one of millions of nodes), or names separated by commas.

Run: ``.venv/bin/python bench/bench_sim.py [--worlds ground] [--steps 300] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import numpy as np
from embreex import rtcore_scene
from embreex.mesh_construction import TriangleMesh
from rich.console import Console
from rich.table import Table

from sortie.backends.embedded import EmbeddedBackend
from sortie.core.actions import Move
from sortie.core.episode import EpisodeSpec, WorldSpec
from sortie.core.pose import Pose
from sortie.sim import packets, raster
from sortie.sim.camera import CameraSpec, world_rays
from sortie.sim.navigation import NavGraph
from sortie.sim.raycast import RayCaster
from sortie.sim.worlds import FLIGHT_WORLDS, WORLDS, build_world

ALL_THREE = ("rgb", "depth", "semantic")
SENSOR_SETS = {
    "rgb+depth+sem 128²": ((128, 128), ALL_THREE),
    "rgb+depth+sem 256²": ((256, 256), ALL_THREE),
    "rgb+depth+sem 640²": ((640, 640), ALL_THREE),
    "rgb+depth+sem 1920×1080": ((1920, 1080), ALL_THREE),
    "depth 128²": ((128, 128), ("depth",)),
    "no sensors": ((128, 128), ()),
}
"""Each set's camera size (the seeds' too: RescueBench's 640², MissionBench's 1920×1080, both
at 90° here so that only the pixels change) and the images rendered each step."""
GROUND = tuple(name for name in WORLDS.names() if name not in FLIGHT_WORLDS or FLIGHT_WORLDS[name])
"""The ground worlds: every world but those built for flight only (forest is both: a ground
world, and a flight world with its ``preset=flight``)."""

Params = dict[str, object]


def world_set(text: str) -> tuple[str, dict[str, Params]]:
    """Return the set's label and its worlds with their build parameters."""
    if text == "ground":
        return f"ground ({len(GROUND)} worlds)", {name: {} for name in GROUND}
    if text == "flight":
        return f"flight ({len(FLIGHT_WORLDS)} worlds)", dict(FLIGHT_WORLDS)
    names = [name for name in text.split(",") if name]
    return ", ".join(names), {name: {} for name in names}


def start_pose(name: str, params: Params) -> Pose:
    """Return a walkable start: a node of the world's graph, facing +x.

    Worlds over 150 m across (the flight worlds) would have millions of nodes at 0.25 m, so
    their pose comes from a 1 m grid: a start needs no fine graph.
    """
    scene = build_world(name, 0, params)
    xmin, ymin, xmax, ymax = scene.bounds
    graph = NavGraph.build(scene, cell=1.0 if max(xmax - xmin, ymax - ymin) > 150 else 0.25)
    node = graph.random_node(np.random.default_rng(0))
    assert node is not None, f"{name}: no walkable place"
    x, y, z = graph.node_position(node)
    return Pose(x, y, z, 0.0)


def best_rates(
    items: Sequence[Callable[[], object]],
    repeats: int,
    prepare: Callable[[], object] = lambda: None,
) -> tuple[float, float]:
    """Return the rates (items per second) of running ``items`` in order, ``repeats`` times.

    The CPU-time rate keeps each item's fastest run (the sum of per-item minima), which
    leaves out the moments another job took the core; the wall-time rate is the fastest whole
    run. ``prepare`` runs untimed before each repeat.
    """
    fastest = np.full(len(items), np.inf)
    wall = np.inf
    for _ in range(repeats):
        prepare()
        times = np.empty(len(items))
        ticked = time.perf_counter()
        for k, item in enumerate(items):
            started = time.process_time()
            item()
            times[k] = time.process_time() - started
        wall = min(wall, time.perf_counter() - ticked)
        fastest = np.minimum(fastest, times)
    return len(items) / max(float(fastest.sum()), 1e-9), len(items) / wall


def raster_rate(name: str, params: Params, pose: Pose, repeats: int, frames: int = 50) -> float:
    """Return bare rasterised 128² frames/s (CPU time): the hits only, unsure pixels cast."""
    if not raster.available():
        return float("nan")
    caster = RayCaster(build_world(name, 0, params))
    spec = CameraSpec(128, 128, 90.0)
    eye = (pose.x, pose.y, pose.z + 1.6)
    views = [(pose.yaw + 7.2 * i, world_rays(spec, pose.yaw + 7.2 * i)) for i in range(frames)]
    items = [partial(raster.frame_hits, caster, spec, eye, yaw, 0.0, dirs) for yaw, dirs in views]
    return best_rates(items, repeats)[0]


def machine() -> str:
    """Return the CPU's model and widest vector extension, and the Embree kernels asked for."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in info.splitlines()
            if line.startswith("model name")
        ),
        "unknown CPU",
    )
    flags = set(
        next(
            (
                line.split(":", 1)[1].split()
                for line in info.splitlines()
                if line.startswith("flags")
            ),
            [],
        )
    )
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    kernels = os.environ.get(packets.ENV_ISA) or "the CPU's best"
    return f"{model} ({isa}); Embree kernels: {kernels}"


def bare_rates(
    name: str, params: Params, pose: Pose, repeats: int, frames: int = 50
) -> tuple[float, float]:
    """Return bare 128² primary-ray frames/s (CPU time) through embreex and through packets."""
    scene = build_world(name, 0, params)
    corners = RayCaster(scene, use_packets=False).static.corners
    reference = rtcore_scene.EmbreeScene()
    TriangleMesh(reference, np.ascontiguousarray(corners))
    spec = CameraSpec(128, 128, 90.0)
    eye = np.float32([[pose.x, pose.y, pose.z + 1.6]])
    rays = [world_rays(spec, pose.yaw + 7.2 * i) for i in range(frames)]
    origins = np.repeat(eye, len(rays[0]), axis=0)
    frames_embreex = [partial(reference.run, origins, dirs, output=1) for dirs in rays]
    embreex_rate = best_rates(frames_embreex, repeats)[0]
    if not packets.available():
        return embreex_rate, float("nan")
    scene_packets = packets.PacketScene(corners)
    frames_packets = [
        partial(packets.trace, scene_packets, None, eye, dirs, width=128) for dirs in rays
    ]
    return embreex_rate, best_rates(frames_packets, repeats)[0]


def step_rates(
    name: str,
    params: Params,
    pose: Pose,
    size: tuple[int, int],
    sensors: tuple[str, ...],
    steps: int,
    repeats: int,
) -> tuple[float, float]:
    """Return the backend's (CPU, wall) steps/s in ``name`` with ``sensors``."""
    camera = CameraSpec(size[0], size[1], 90.0)
    backend = EmbeddedBackend(body="walker", sensors=sensors, camera=camera)
    world = WorldSpec(builder=name, seed=0, params=params)
    spec = EpisodeSpec(episode_id="bench", family="bench", world=world, start=pose)
    turns = np.random.default_rng(0).uniform(-30, 30, steps)
    actions = [partial(backend.step, Move(float(turn), 1.0)) for turn in turns]
    return best_rates(actions, repeats, lambda: backend.reset(spec, 0))


def build_seconds(name: str, params: Params, repeats: int = 3) -> float:
    """Return the best CPU time of building a world, seeds 0, 1, ..."""
    times = []
    for seed in range(repeats):
        start = time.process_time()
        build_world(name, seed, params)
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    """Measure every world of the set and print one table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--worlds", default="ground")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    label, worlds = world_set(args.worlds)
    engine = "packets" if packets.available() else "embreex (packets not built)"
    camera = "rasterised" if raster.available() else "cast ray by ray"
    table = Table(
        title=f"Embedded simulator, world set {label}: steps/s, CPU time (wall time), "
        f"best of {args.repeats}; casts through {engine}; camera frames {camera}\n{machine()}"
    )
    columns = [
        "world",
        "build s",
        "embreex 128² f/s",
        "packets 128² f/s",
        "raster 128² f/s",
        *SENSOR_SETS,
    ]
    for column in [*columns, "% of packets"]:
        table.add_column(column, justify="right")
    for name, params in worlds.items():
        pose = start_pose(name, params)
        cells, full = [], 0.0
        for set_name, (size, sensors) in SENSOR_SETS.items():
            # Fewer steps past 256²: a 1920×1080 step costs over 100 of 128², and the rate of a
            # few dozen steps is as steady as that of hundreds.
            pixels = size[0] * size[1]
            scale = 10.0 if not sensors else min(1.0, 256 * 256 / pixels)
            steps = max(20, int(args.steps * scale))
            cpu, wall = step_rates(name, params, pose, size, sensors, steps, args.repeats)
            full = cpu if set_name == "rgb+depth+sem 128²" else full
            cells.append(f"{cpu:,.0f} ({wall:,.0f})")
        # Last: embreex's device keeps worker threads that would spin into the step timings.
        bare_embreex, bare_packets = bare_rates(name, params, pose, args.repeats)
        table.add_row(
            name,
            f"{build_seconds(name, params):.2f}",
            f"{bare_embreex:,.0f}",
            f"{bare_packets:,.0f}",
            f"{raster_rate(name, params, pose, args.repeats):,.0f}",
            *cells,
            f"{100 * full / bare_packets:.0f} %",
        )
    Console(width=220).print(table)


if __name__ == "__main__":
    main()
