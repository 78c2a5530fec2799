"""Turn depth and semantic images into pictures people can read, and mark poses on maps."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from PIL import Image, ImageDraw

from sortie.core.pose import Pose
from sortie.sim.topdown import TopDownMap


def depth_image(depth: NDArray[np.float32], far: float | None = None) -> NDArray[np.uint8]:
    """Return a grey image of ``depth``: the nearest point white, ``far`` and beyond black.

    Grey follows inverse depth, as the eye reads distance, so a wall a metre away and one at
    three differ as much as one at three and one at far. ``far`` defaults to the view's own
    range (``view_range``): an apartment's few metres and a street's fifty both fill the scale.
    """
    far = far if far is not None else view_range(depth)
    finite = depth[np.isfinite(depth)]
    near = max(0.05, min(float(finite.min()), far / 2)) if finite.size else 0.05
    inverse = 1.0 / np.clip(np.nan_to_num(depth, posinf=far), near, far)
    share = (inverse - 1.0 / far) / (1.0 / near - 1.0 / far)
    return np.repeat((share * 255).astype(np.uint8)[..., None], 3, axis=2)


def view_range(depth: NDArray[np.float32]) -> float:
    """Return the depth that shows a view best: its 98th percentile, rounded up to a metre.

    Sky and misses (infinite) are left out; a view of nothing but them gets 30 m.
    """
    finite = depth[np.isfinite(depth)]
    if finite.size == 0:
        return 30.0
    return float(max(2.0, np.ceil(np.percentile(finite, 98))))


def semantic_image(ids: NDArray[np.int32]) -> NDArray[np.uint8]:
    """Return a colour per instance id (0, nothing, is black), stable across runs."""
    palette = id_palette(int(ids.max()) + 1)
    return palette[ids]


def id_palette(count: int) -> NDArray[np.uint8]:
    """Return ``count`` well-separated colours; colour 0 is black."""
    hues = (np.arange(count) * 0.618034) % 1.0
    rgb = np.stack([_hsv_channel(hues, k) for k in (5, 3, 1)], axis=1)
    palette = (rgb * 255).astype(np.uint8)
    palette[0] = 0
    return palette


def _hsv_channel(hue: NDArray, k: int, s: float = 0.65, v: float = 0.95) -> NDArray:
    n = (k + hue * 6) % 6
    return v - v * s * np.clip(np.minimum(n, 4 - n), 0, 1)


def mark_pose(
    topdown: TopDownMap, pose: Pose, color: tuple[int, int, int] = (230, 30, 30)
) -> Image.Image:
    """Return the map as a picture with ``pose`` drawn as a dot and a heading line."""
    picture = Image.fromarray(topdown.image)
    draw = ImageDraw.Draw(picture)
    col, row = topdown.pixel(pose.x, pose.y)
    radius = max(5, int(0.3 / topdown.metres_per_pixel))  # the walker's body, 0.3 m
    draw.ellipse(
        [col - radius, row - radius, col + radius, row + radius],
        fill=color,
        outline=(255, 255, 255),
        width=2,
    )
    dx, dy = pose.heading()
    length = 4 * radius
    draw.line([col, row, col + dx * length, row - dy * length], fill=color, width=2)
    return picture
