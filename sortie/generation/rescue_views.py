"""What can be seen of the casualty: from the start (levels L1 and L3) and the reference view.

Views are semantic renders of the finished world (the same scene the embedded backend
builds), counting the casualty's pixels.
"""

from __future__ import annotations

import math

import numpy as np

from sortie.core.observation import Sensor
from sortie.generation.rejected import Rejected
from sortie.generation.rescue_places import Site
from sortie.sim.camera import CameraSpec
from sortie.sim.raycast import RayCaster
from sortie.sim.render import Renderer
from sortie.sim.scene import Scene
from sortie.sim.shapes import WALKER

AGENT_CAMERA = CameraSpec()
"""The walker's default camera: what an agent sees and what the reference image uses."""
FINE_CAMERA = CameraSpec(256, 256)
"""Twice the agent's resolution, so 'hidden' holds for sharper cameras too."""
YAWS = (0.0, 90.0, 180.0, 270.0)
"""Four 90-degree views cover the whole turn around the start."""
VISIBLE_PIXELS = 10
"""Pixels the casualty must cover to count as visible (the embedded backend's default)."""
REFERENCE_PIXELS = 60
"""Pixels the casualty must cover in the reference image."""
REFERENCE_DISTANCE = (3.0, 5.0)
"""Horizontal distance from the reference camera to the casualty, metres."""
BODY_HEIGHT = 0.15
"""Height of a lying body's middle above the floor, where the reference camera aims."""


class Views:
    """Semantic renders of one finished world, counting the pixels of one object."""

    def __init__(self, scene: Scene, target: str) -> None:
        """Prepare to render ``scene`` and count object ``target``."""
        self.renderer = Renderer(scene, RayCaster(scene))
        self.target_id = scene.id_of(target)

    def pixels(
        self,
        eye: tuple[float, float, float],
        yaw: float,
        pitch: float,
        camera: CameraSpec = AGENT_CAMERA,
    ) -> int:
        """Return how many pixels of the target a camera at ``eye`` sees."""
        frames = self.renderer.render(camera, eye, yaw, pitch, {Sensor.SEMANTIC})
        assert frames.semantic is not None
        return int(np.count_nonzero(frames.semantic == self.target_id))

    def around(self, feet: tuple[float, float, float], camera: CameraSpec) -> int:
        """Return the most target pixels in any of four level views from a walker's eye."""
        eye = (feet[0], feet[1], feet[2] + WALKER.eye)
        return max(self.pixels(eye, yaw, 0.0, camera) for yaw in YAWS)


def check_sight(views: Views, start: tuple[float, float, float], hidden: bool) -> None:
    """Reject unless the casualty is hidden from the start (``hidden``) or in sight of it."""
    if hidden and views.around(start, FINE_CAMERA) > 0:
        raise Rejected("casualty visible from the start")
    if not hidden and views.around(start, AGENT_CAMERA) < VISIBLE_PIXELS:
        raise Rejected("casualty not in sight of the start")


def reference_view(
    views: Views,
    site: Site,
    rng: np.random.Generator,
    casualty: tuple[float, float, float],
    tries: int = 12,
) -> list[float]:
    """Return ``[x, y, z_eye, yaw, pitch]`` of a walker's view 3-5 m from the casualty."""
    x, y, z = casualty
    near = site.horizontal(casualty)
    lo, hi = REFERENCE_DISTANCE
    mask = site.main & (near >= lo) & (near <= hi) & (np.abs(site.positions[:, 2] - z) < 0.5)
    nodes = np.flatnonzero(mask)
    for node in rng.permutation(nodes)[:tries]:
        cx, cy, cz = site.graph.node_position(int(node))
        eye = (round(cx, 3), round(cy, 3), round(cz + WALKER.eye, 3))
        yaw = round(math.degrees(math.atan2(y - cy, x - cx)), 1)
        drop = eye[2] - (z + BODY_HEIGHT)
        pitch = round(-math.degrees(math.atan2(drop, math.hypot(x - cx, y - cy))), 1)
        if views.pixels(eye, yaw, pitch) >= REFERENCE_PIXELS:
            return [*eye, yaw, pitch]
    raise Rejected("no clear view of the casualty from 3-5 m")
