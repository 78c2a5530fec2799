"""Benchmark sortie's camera step against a plain z-buffer floor, side by side.

The speed issue's target: a whole step ≤ 1.2× a plain float32 z-buffer drawing the same three
images over the same triangles. The floor is ``bench/floor/zbuffer.c`` (compiled here with the
system's C compiler at ``-O3``, loaded through ctypes; not part of sortie): chunks of 16
triangles outside the view skipped by their bounding spheres (sortie's own chunks), each other
triangle to the camera, rejected when wholly outside one side of the view, clipped to the
near plane, its box's pixel centres tested with edge functions stepped along the rows, depth
interpolated as 1/x, flat lit colours, object ids, the sky where nothing was drawn. It has
none of sortie's exactness (ties, edges, hits the same on every CPU), textures or culling of
hidden triangles.

For each world a walker takes ``--steps`` random steps (turns ±30°, 1 m/s) with RGB + depth +
semantic; every frame's pose is recorded, then three things are timed over the same poses,
interleaved (each repeat runs all three, in a rotated order), in CPU time, each item keeping
its fastest repeat: **step**, the backend's whole step (motion, collisions, the frame);
**render**, `Renderer.render` alone for each pose (the rasterised frame, its unsure pixels
cast, ids and RGB); **floor**, the z-buffer for each pose. "ids agree" is the share of
pixels whose object id the floor and sortie give alike (a check that the floor draws the same
scene; edges and coincident faces make up the rest). "set up/frame" and "tested/frame" are
the rasteriser's own counts (``raster.work``), averaged over the poses: the triangles it set
up in the chunks it did not skip, and those whose pixels it tested.

Run: ``.venv/bin/python bench/bench_floor.py [--worlds ground] [--sizes 128x128]
[--steps 200] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import ctypes
import math
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
from bench_sim import ALL_THREE, GROUND, machine, start_pose
from numpy.typing import NDArray
from rich.console import Console
from rich.table import Table

from sortie.backends.embedded import EmbeddedBackend
from sortie.core.actions import Move
from sortie.core.episode import EpisodeSpec, WorldSpec
from sortie.core.observation import Sensor
from sortie.sim import raster
from sortie.sim.camera import CameraSpec, camera_rotation
from sortie.sim.render import Renderer

SOURCE = Path(__file__).parent / "floor" / "zbuffer.c"
FLAGS = ("-O3", "-shared", "-fPIC")
Size = tuple[int, int]


def load_floor(folder: Path) -> Callable[..., None]:
    """Compile the z-buffer into ``folder`` and return its ``floor_frame``."""
    library = folder / "zbuffer.so"
    compiler = os.environ.get("CC", "cc")
    subprocess.run([compiler, *FLAGS, "-o", str(library), str(SOURCE), "-lm"], check=True)
    function = ctypes.CDLL(str(library)).floor_frame
    pointer = ctypes.c_void_p
    function.argtypes = [pointer] * 4 + [ctypes.c_long] + [pointer] * 3
    function.argtypes += [ctypes.c_float, ctypes.c_int, ctypes.c_int, pointer, pointer]
    function.argtypes += [pointer, pointer]
    function.restype = None
    return function


@dataclass
class View:
    """One frame's pose, as the backend asked its renderer for it."""

    renderer: Renderer
    spec: CameraSpec
    eye: tuple[float, float, float]
    yaw: float
    pitch: float


def record_views(backend: EmbeddedBackend, actions: Sequence[Callable[[], object]]) -> list[View]:
    """Run ``actions`` once, keeping the pose of every frame the backend renders."""
    views: list[View] = []
    original = Renderer.render

    def spy(self: Renderer, spec: CameraSpec, eye, yaw, pitch=None, sensors=()):  # type: ignore[no-untyped-def]
        views.append(View(self, spec, eye, yaw, spec.pitch if pitch is None else pitch))
        return original(self, spec, eye, yaw, pitch, sensors)

    Renderer.render = spy  # type: ignore[method-assign]
    try:
        for action in actions:
            action()
    finally:
        Renderer.render = original  # type: ignore[method-assign]
    return views


@dataclass
class FloorFrame:
    """What the floor needs for one view, made untimed, and the images it writes."""

    arrays: tuple[NDArray, ...]
    size: Size
    focal: float
    depth: NDArray[np.float32]
    ids: NDArray[np.int32]
    rgb: NDArray[np.uint8]


def floor_frame(view: View) -> FloorFrame:
    """Return the floor's inputs for ``view``: the renderer's own triangles, colours and sky."""
    renderer = view.renderer
    renderer.caster.sync()
    table = renderer.caster.table
    count, chunks = len(table.corners), raster.chunks(table)
    arrays = (
        np.ascontiguousarray(table.corners, np.float32),
        np.ascontiguousarray(table.object_id[:count], np.int32),
        np.ascontiguousarray(renderer._lit_colors().color[:count], np.uint8),
        np.ascontiguousarray(chunks.members, np.int32),
        np.ascontiguousarray(chunks.bounds, np.float64),
        np.ascontiguousarray(camera_rotation(view.yaw, view.pitch), np.float32),
        np.array(view.eye, np.float32),
        np.ascontiguousarray(renderer._camera_sky(view.spec, view.pitch), np.uint8),
    )
    n = view.spec.width * view.spec.height
    size = (view.spec.width, view.spec.height)
    return FloorFrame(
        arrays,
        size,
        view.spec.focal,
        np.empty(n, np.float32),
        np.empty(n, np.int32),
        np.empty((n, 3), np.uint8),
    )


def draw_floor(function: Callable[..., None], frame: FloorFrame) -> None:
    """Draw one frame with the floor."""
    corners, ids, colors, members, bounds, rotation, eye, sky = frame.arrays
    pointer = ctypes.c_void_p
    function(
        pointer(corners.ctypes.data),
        pointer(ids.ctypes.data),
        pointer(colors.ctypes.data),
        pointer(members.ctypes.data),
        len(bounds),
        pointer(bounds.ctypes.data),
        pointer(rotation.ctypes.data),
        pointer(eye.ctypes.data),
        frame.focal,
        *frame.size,
        pointer(sky.ctypes.data),
        pointer(frame.depth.ctypes.data),
        pointer(frame.ids.ctypes.data),
        pointer(frame.rgb.ctypes.data),
    )


def render(view: View) -> None:
    """Render one view's three images with sortie."""
    view.renderer.render(view.spec, view.eye, view.yaw, view.pitch, set(Sensor))


def agreement(
    function: Callable[..., None], views: Sequence[View], frames: list[FloorFrame]
) -> float:
    """Return the share of pixels whose object id the floor and sortie give alike."""
    same = total = 0
    for view, frame in zip(views, frames, strict=True):
        draw_floor(function, frame)
        ids = view.renderer.render(view.spec, view.eye, view.yaw, view.pitch, {Sensor.SEMANTIC})
        assert ids.semantic is not None
        same += int(np.count_nonzero(ids.semantic.reshape(-1) == frame.ids))
        total += frame.ids.size
    return same / total


def work_per_frame(views: Sequence[View]) -> dict[str, float]:
    """Return what the rasteriser did for a frame, on average over ``views`` (untimed)."""
    if not raster.available():
        return {"triangles set up": math.nan, "triangles tested": math.nan}
    totals: dict[str, float] = {}
    for view in views:
        render(view)
        for name, count in raster.work().items():
            totals[name] = totals.get(name, 0) + count
    return {name: total / len(views) for name, total in totals.items()}


def fastest(
    groups: dict[str, tuple[Callable[[], object], list[Callable[[], object]]]], repeats: int
) -> dict[str, float]:
    """Return each group's CPU seconds an item, items keeping their fastest repeat.

    A group is (prepare, items); the groups run interleaved, in a rotated order each repeat.
    """
    best = {name: np.full(len(items), np.inf) for name, (_, items) in groups.items()}
    names = list(groups)
    for repeat in range(repeats):
        for name in names[repeat % len(names) :] + names[: repeat % len(names)]:
            prepare, items = groups[name]
            prepare()
            for k, item in enumerate(items):
                started = time.process_time()
                item()
                best[name][k] = min(best[name][k], time.process_time() - started)
    return {name: float(times.mean()) for name, times in best.items()}


def measure(
    world: str, size: Size, steps: int, repeats: int, function: Callable[..., None]
) -> dict[str, float]:
    """Return the µs of a step, a render and a floor frame in ``world``, and the ids' agreement."""
    pose = start_pose(world, {})
    backend = EmbeddedBackend(body="walker", sensors=ALL_THREE, camera=CameraSpec(*size, 90.0))
    spec = EpisodeSpec(
        episode_id="bench",
        family="bench",
        world=WorldSpec(builder=world, seed=0, params={}),
        start=pose,
    )
    turns = np.random.default_rng(0).uniform(-30, 30, steps)
    actions = [partial(backend.step, Move(float(turn), 1.0)) for turn in turns]
    backend.reset(spec, 0)
    views = record_views(backend, actions)
    frames = [floor_frame(view) for view in views]
    groups = {
        "step": (partial(backend.reset, spec, 0), actions),
        "render": (lambda: None, [partial(render, view) for view in views]),
        "floor": (lambda: None, [partial(draw_floor, function, frame) for frame in frames]),
    }
    micros = {name: seconds * 1e6 for name, seconds in fastest(groups, repeats).items()}
    return {**micros, "agree": agreement(function, views, frames), **work_per_frame(views)}


def parse_sizes(text: str) -> list[Size]:
    """Return the sizes of ``"128x128,160x120"``."""
    return [(int(w), int(h)) for w, h in (item.split("x") for item in text.split(",") if item)]


def main() -> None:
    """Measure every world at every size and print one table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--worlds", default="ground", help="'ground' or names, comma-separated")
    parser.add_argument("--sizes", default="128x128")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    worlds = list(GROUND) if args.worlds == "ground" else list(filter(None, args.worlds.split(",")))
    camera = "rasterised" if raster.available() else "cast ray by ray"
    load = os.getloadavg()
    table = Table(
        title="Camera step beside a plain z-buffer floor: µs CPU an item, fastest of "
        f"{args.repeats} interleaved repeats of {args.steps} steps; walker, RGB + depth + "
        f"semantic, frames {camera}; floor {' '.join(FLAGS[:1])}\n{machine()}; load {load[0]:.2f}"
    )
    for column in (
        "world",
        "size",
        "floor µs",
        "render µs",
        "step µs",
        "render/floor",
        "step/floor",
        "ids agree",
        "set up/frame",
        "tested/frame",
    ):
        table.add_column(column, justify="right")
    with tempfile.TemporaryDirectory() as folder:
        function = load_floor(Path(folder))
        for size in parse_sizes(args.sizes):
            for world in worlds:
                got = measure(world, size, args.steps, args.repeats, function)
                table.add_row(
                    world,
                    f"{size[0]}×{size[1]}",
                    f"{got['floor']:,.0f}",
                    f"{got['render']:,.0f}",
                    f"{got['step']:,.0f}",
                    f"{got['render'] / got['floor']:.2f}×",
                    f"{got['step'] / got['floor']:.2f}×",
                    f"{100 * got['agree']:.1f} %",
                    f"{got['triangles set up']:,.0f}",
                    f"{got['triangles tested']:,.0f}",
                )
    Console(width=160).print(table)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
