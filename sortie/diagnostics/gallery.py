"""World pictures, for ``sortie view``, the docs' pictures and the benchmarks."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
from PIL import Image

from sortie.core.errors import SimulationError
from sortie.core.folders import claim_output
from sortie.core.observation import Sensor
from sortie.core.pose import Pose
from sortie.sim import raster
from sortie.sim.bodies import Walker
from sortie.sim.camera import CameraSpec, world_rays
from sortie.sim.navigation import NavGraph
from sortie.sim.raycast import RayCaster
from sortie.sim.render import Renderer
from sortie.sim.scene import Scene
from sortie.sim.topdown import render_topdown
from sortie.sim.visualize import depth_image, mark_pose, semantic_image
from sortie.sim.worlds import build_world


def valid_pose(scene: Scene, seed: int = 0) -> Pose:
    """Return a walkable standing pose in ``scene``, chosen by ``seed``, facing the most things."""
    graph = NavGraph.build(scene)
    node = graph.random_node(np.random.default_rng(seed))
    if node is None:
        raise SimulationError(f"{scene.origin}: no walkable place to stand")
    x, y, z = graph.node_position(node)
    renderer, spec = Renderer(scene), CameraSpec(32, 32, 90.0)
    yaws = [float(yaw) for yaw in range(0, 360, 30)]
    views = [renderer.render(spec, (x, y, z + 1.6), yaw, sensors={Sensor.SEMANTIC}) for yaw in yaws]
    seen = [len(np.unique(view.semantic)) for view in views if view.semantic is not None]
    return Pose(float(x), float(y), float(z), yaws[int(np.argmax(seen))])


def save_view(
    world: str, seed: int, params: Mapping[str, object], pose_text: str | None, size: int, out: Path
) -> list[Path]:
    """Render a world from a walker's eye and from above; return the files written."""
    scene = build_world(world, seed, params)
    pose = Pose.parse(pose_text, "--pose") if pose_text else valid_pose(scene, seed)
    Walker(RayCaster(scene)).place(pose)  # raises a clear error for poses inside geometry
    renderer = Renderer(scene)
    frames = renderer.render(CameraSpec(size, size, 90.0), (pose.x, pose.y, pose.z + 1.6), pose.yaw)
    assert frames.rgb is not None and frames.depth is not None and frames.semantic is not None
    claim_output(out, "world view")
    images = {
        "rgb.png": Image.fromarray(frames.rgb),
        "depth.png": Image.fromarray(depth_image(frames.depth)),
        "semantic.png": Image.fromarray(semantic_image(frames.semantic)),
        "topdown.png": mark_pose(render_topdown(renderer, _fine(scene), max_pixels=768), pose),
    }
    for name, image in images.items():
        image.save(out / name)
    return [out / name for name in images]


def raster_picture(world: str, seed: int, size: int, out: Path) -> tuple[int, int]:
    """Save a world's egocentric RGB beside the same frame with its cast pixels in red.

    The red pixels are those the rasteriser could not be sure of and left to the ray caster
    (``sortie.sim.raster``); it drew the rest itself. Returns (cast, all) pixels.
    """
    scene = build_world(world, seed)
    pose = valid_pose(scene, seed)
    renderer, spec = Renderer(scene), CameraSpec(size, size, 90.0)
    eye = (pose.x, pose.y, pose.z + 1.6)
    frames = renderer.render(spec, eye, pose.yaw, sensors={Sensor.RGB})
    assert frames.rgb is not None
    dirs = world_rays(spec, pose.yaw, spec.pitch)
    _, unsure = raster.drawn(renderer.caster, spec, eye, pose.yaw, spec.pitch, dirs)
    marked = frames.rgb.copy()
    marked[unsure.reshape(size, size)] = (255, 0, 0)
    Image.fromarray(np.concatenate([frames.rgb, marked], axis=1)).save(out)
    return int(unsure.sum()), size * size


def _fine(scene: Scene, pixels: int = 768) -> float:
    """Return the metres per pixel that give the top-down view ``pixels`` on its long side."""
    xmin, ymin, xmax, ymax = scene.bounds
    return max(xmax - xmin, ymax - ymin) / pixels
