"""Side by side: sortie's camera rasteriser against OpenGL on Mesa's llvmpipe (one CPU thread).

The speed issue asked to try a well-kept rasteriser from the package index before writing one.
This measures moderngl (OpenGL 3.3 through glcontext's EGL, on Mesa's llvmpipe, a CPU driver)
drawing the triangle-id and depth buffers of a 128² frame from the same poses and camera as
``sortie.sim.raster``, and how many pixels name the ray caster's triangle. It is not part of
sortie: moderngl is not a dependency, and llvmpipe is a system package (``libegl-mesa0``,
``libgl1-mesa-dri``) that the README's two commands do not install. Run it by hand:

    .venv/bin/pip install moderngl==5.13.0 glcontext==3.1.0
    LP_NUM_THREADS=0 .venv/bin/python bench/bench_camera_gl.py [--worlds apartment,forest]

``LP_NUM_THREADS=0`` keeps llvmpipe on the calling thread (sortie renders on one core).
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from sortie.sim import raster
from sortie.sim.camera import CameraSpec, camera_rotation, world_rays
from sortie.sim.raycast import RayCaster
from sortie.sim.worlds import build_world

try:
    import moderngl
except ImportError:
    sys.exit("bench_camera_gl needs moderngl: .venv/bin/pip install moderngl glcontext")

VERTEX = """
#version 330
uniform mat4 view_projection;
in vec3 position;
void main() { gl_Position = view_projection * vec4(position, 1.0); }
"""
FRAGMENT = """
#version 330
out int triangle;
void main() { triangle = gl_PrimitiveID; }
"""
NEAR, FAR = 0.05, 500.0


def view_projection(spec: CameraSpec, eye, yaw: float, pitch: float) -> np.ndarray:
    """Return the OpenGL matrix of sortie's pinhole camera (x forward, y left, z up)."""
    rotation = camera_rotation(yaw, pitch).astype(np.float64)  # camera -> world
    forward, left, up = rotation[:, 0], rotation[:, 1], rotation[:, 2]
    view = np.eye(4)
    view[0, :3], view[1, :3], view[2, :3] = -left, up, -forward  # GL: x right, y up, z back
    view[:3, 3] = -view[:3, :3] @ np.asarray(eye, np.float64)
    half_w, half_h = spec.width / 2 / spec.focal, spec.height / 2 / spec.focal
    projection = np.zeros((4, 4))
    projection[0, 0], projection[1, 1] = 1 / half_w, 1 / half_h
    projection[2, 2] = -(FAR + NEAR) / (FAR - NEAR)
    projection[2, 3] = -2 * FAR * NEAR / (FAR - NEAR)
    projection[3, 2] = -1
    return projection @ view


def measure(world: str, frames: int) -> tuple[float, float, float, float]:
    """Return (GL ms, raster ms, cast ms, share of pixels whose triangle GL agrees on)."""
    scene = build_world(world, 0)
    caster = RayCaster(scene)
    spec = CameraSpec(128, 128, 90.0)
    ctx = moderngl.create_standalone_context(backend="egl")
    program = ctx.program(vertex_shader=VERTEX, fragment_shader=FRAGMENT)
    buffer = ctx.buffer(np.ascontiguousarray(caster.table.corners, np.float32).tobytes())
    array = ctx.vertex_array(program, [(buffer, "3f", "position")])
    target = ctx.framebuffer(
        [ctx.renderbuffer((spec.width, spec.height), 1, dtype="i4")],
        ctx.depth_renderbuffer((spec.width, spec.height)),
    )
    rng = np.random.default_rng(0)
    xmin, ymin, xmax, ymax = scene.bounds
    gl = drawn = cast = 0.0
    agree = 0
    for _ in range(frames):
        eye = (rng.uniform(xmin, xmax), rng.uniform(ymin, ymax), 1.6)
        yaw, pitch = float(rng.uniform(0, 360)), 0.0
        dirs = world_rays(spec, yaw, pitch)
        started = time.process_time()
        target.use()
        ctx.enable(moderngl.DEPTH_TEST)
        target.clear(-1, -1, -1, -1, depth=1.0)
        matrix = view_projection(spec, eye, yaw, pitch)
        program["view_projection"].write(np.ascontiguousarray(matrix.T, np.float32).tobytes())
        array.render(moderngl.TRIANGLES)
        ids = np.frombuffer(target.read(components=1, dtype="i4"), np.int32)
        gl += time.process_time() - started
        ids = ids.reshape(spec.height, spec.width)[::-1].ravel()  # GL rows run bottom up
        started = time.process_time()
        hits, _ = raster.frame_hits(caster, spec, eye, yaw, pitch, dirs)
        drawn += time.process_time() - started
        started = time.process_time()
        caster.cast(np.array([eye], np.float32), dirs)
        cast += time.process_time() - started
        agree += int((ids == hits.triangle).sum())
    pixels = frames * spec.width * spec.height
    return 1e3 * gl / frames, 1e3 * drawn / frames, 1e3 * cast / frames, agree / pixels


def main() -> None:
    """Measure each world and print one table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", default="apartment,campus,forest,station,suburb")
    parser.add_argument("--frames", type=int, default=40)
    args = parser.parse_args()
    table = Table(
        title="128² frames, ms of CPU time per frame (mean); triangle ids as the ray caster's"
    )
    for column in ("world", "OpenGL (llvmpipe)", "sortie raster", "ray cast", "GL agrees"):
        table.add_column(column, justify="right")
    for world in args.worlds.split(","):
        gl, drawn, cast, agree = measure(world, args.frames)
        table.add_row(world, f"{gl:.2f}", f"{drawn:.2f}", f"{cast:.2f}", f"{100 * agree:.2f} %")
    Console().print(table)
    assert math.isfinite(gl)


if __name__ == "__main__":
    main()
