"""A top-down orthographic map of a scene, for reports and documentation."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from sortie.sim.raycast import RayCaster
from sortie.sim.render import Renderer


def render_topdown(
    renderer: Renderer, metres_per_pixel: float = 0.25, cut: float | None = None,
    max_pixels: int = 1024,
) -> NDArray[np.uint8]:
    """Render the scene from straight above; geometry above ``cut`` (roofs) is left out.

    Rows run from +y (top of the image) to -y, columns from -x to +x.
    """
    scene = renderer.scene
    xmin, ymin, xmax, ymax = scene.bounds
    step = max(metres_per_pixel, (xmax - xmin) / max_pixels, (ymax - ymin) / max_pixels)
    xs = np.arange(xmin + step / 2, xmax, step)
    ys = np.arange(ymax - step / 2, ymin, -step)
    gx, gy = np.meshgrid(xs, ys)
    top = _top_height(renderer.caster) if cut is None else cut
    top = top if scene.topdown_cut is None or cut is not None else scene.topdown_cut
    origins = np.column_stack([gx.ravel(), gy.ravel(), np.full(gx.size, top)])
    dirs = np.tile(np.array([0.0, 0.0, -1.0], np.float32), (gx.size, 1))
    hits = renderer.caster.cast(origins, dirs)
    rgb = renderer._shade(hits, dirs)  # noqa: SLF001 - same shading as the cameras
    return rgb.reshape(*gx.shape, 3)


def _top_height(caster: RayCaster) -> float:
    corners = caster.table.corners
    return float(corners[..., 2].max()) + 1.0 if len(corners) else 10.0
