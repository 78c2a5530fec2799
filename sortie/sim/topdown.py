"""A top-down orthographic map of a scene, for reports and documentation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from sortie.sim.render import Renderer


@dataclass(frozen=True, slots=True)
class TopDownMap:
    """A map image and how world coordinates fall on it (rows run from +y down to -y)."""

    image: NDArray[np.uint8]
    xmin: float
    ymax: float
    metres_per_pixel: float

    def pixel(self, x: float, y: float) -> tuple[int, int]:
        """Return the (column, row) of world point ``(x, y)``."""
        return (int((x - self.xmin) / self.metres_per_pixel),
                int((self.ymax - y) / self.metres_per_pixel))  # fmt: skip


def render_topdown(
    renderer: Renderer, metres_per_pixel: float = 0.25, cut: float | None = None,
    max_pixels: int = 1024,
) -> TopDownMap:
    """Render the scene from straight above, leaving out geometry above ``cut`` (roofs).

    ``cut`` defaults to the scene's own ``topdown_cut``, else above everything.
    """
    scene = renderer.scene
    xmin, ymin, xmax, ymax = scene.bounds
    step = max(metres_per_pixel, (xmax - xmin) / max_pixels, (ymax - ymin) / max_pixels)
    xs = np.arange(xmin + step / 2, xmax, step)
    ys = np.arange(ymax - step / 2, ymin, -step)
    gx, gy = np.meshgrid(xs, ys)
    top = cut if cut is not None else scene.topdown_cut
    if top is None:
        corners = renderer.caster.table.corners
        top = float(corners[..., 2].max()) + 1.0 if len(corners) else 10.0
    origins = np.column_stack([gx.ravel(), gy.ravel(), np.full(gx.size, top)])
    dirs = np.tile(np.array([0.0, 0.0, -1.0], np.float32), (gx.size, 1))
    hits = renderer.caster.cast(origins, dirs)
    rgb = renderer.shade(hits, dirs)
    return TopDownMap(rgb.reshape(*gx.shape, 3), xmin, ymax, step)
