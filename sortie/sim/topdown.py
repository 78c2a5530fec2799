"""A top-down orthographic map of a scene, for reports and documentation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from sortie.sim.raycast import Hits
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
        return (
            int((x - self.xmin) / self.metres_per_pixel),
            int((self.ymax - y) / self.metres_per_pixel),
        )


def render_topdown(
    renderer: Renderer,
    metres_per_pixel: float = 0.25,
    cut: float | None = None,
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
    cut = cut if cut is not None else scene.topdown_cut
    origins = np.column_stack([gx.ravel(), gy.ravel(), np.full(gx.size, _top(renderer))])
    dirs = np.tile(np.array([0.0, 0.0, -1.0], np.float32), (gx.size, 1))
    hits = _hits_below(renderer, origins.astype(np.float32), dirs, cut)
    rgb = renderer.shade(hits, dirs)
    return TopDownMap(rgb.reshape(*gx.shape, 3), xmin, ymax, step)


def _top(renderer: Renderer) -> float:
    corners = renderer.caster.table.corners
    return float(corners[..., 2].max()) + 1.0 if len(corners) else 10.0


def _hits_below(
    renderer: Renderer,
    origins: NDArray[np.float32],
    dirs: NDArray[np.float32],
    cut: float | None,
    layers: int = 16,
) -> Hits:
    """Cast down and peel away hits above ``cut`` (roofs, ceilings, wall tops).

    Rays are restarted just under each hit above the cut instead of starting at the cut, so
    a ray whose column is inside a wall still ends on the wall (its underside), not on the
    floor beneath it: walls stay visible on the map.
    """
    hits = renderer.caster.cast(origins, dirs)
    if cut is None:
        return hits
    start = origins[:, 2].copy()
    for _ in range(layers):
        above = np.flatnonzero(np.isfinite(hits.t) & (start - hits.t > cut))
        if not len(above):
            break
        start[above] = start[above] - hits.t[above] - 1e-3
        again = renderer.caster.cast(
            np.column_stack([origins[above, :2], start[above]]), dirs[above]
        )
        hits = hits.replaced(above, again)
    return hits
