"""Household structure of a scene (placeholder until the apartment world lands)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sortie.core.errors import ConfigError
from sortie.sim.scene import Scene

SPACING = 0.25


def free_spot(
    scene: Scene, furniture: str, taken: Sequence[tuple[float, float, float]]
) -> tuple[float, float, float]:
    """Return a base point on (or inside) ``furniture`` at least ``SPACING`` from ``taken``."""
    obj = scene[furniture]
    height = obj.attributes.get("surface_z", obj.attributes.get("inside_z"))
    if not isinstance(height, int | float):
        raise ConfigError(f"{scene.origin}: {furniture} has no surface_z or inside_z")
    low, high = obj.bounds()
    xs = np.linspace(low[0] + 0.15, high[0] - 0.15, 5)
    ys = np.linspace(low[1] + 0.15, high[1] - 0.15, 3)
    spots = [(float(x), float(y), float(height)) for y in ys for x in xs]
    for spot in spots:
        if all(np.hypot(spot[0] - t[0], spot[1] - t[1]) >= SPACING for t in taken):
            return spot
    return spots[len(taken) % len(spots)]
