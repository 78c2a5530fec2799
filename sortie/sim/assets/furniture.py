"""Indoor furniture, and scattering it with walkable lanes between pieces."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sortie.sim.assets.structures import jitter_color
from sortie.sim.assets.terrain import Circle, scatter
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Mesh, box, cylinder, merge

RADII = {"table": 0.9, "chair": 0.35, "shelf": 0.7, "sofa": 1.0, "crate": 0.5, "pillar": 0.3}
"""Footprint radius of each kind, for spacing."""

LANE = 1.2
"""Clear gap kept between pieces, so a 0.3 m-radius walker passes between any two."""


def furniture_mesh(rng: np.random.Generator, kind: str, ceiling: float = 3.0) -> Mesh:
    """Return one piece of furniture standing on the origin (pillars reach ``ceiling``)."""
    if kind == "table":
        top = box((1.6, 0.8, 0.05), (0, 0, 0.75), jitter_color(rng, (120, 80, 45)))
        legs = [
            box((0.06, 0.06, 0.73), (sx * 0.7, sy * 0.35, 0.365), (60, 40, 25))
            for sx in (-1, 1)
            for sy in (-1, 1)
        ]
        return merge([top, *legs])
    if kind == "chair":
        color = jitter_color(rng, (60, 70, 90))
        return merge(
            [
                box((0.45, 0.45, 0.05), (0, 0, 0.45), color),
                box((0.05, 0.45, 0.5), (-0.2, 0, 0.7), color),
                box((0.3, 0.3, 0.43), (0, 0, 0.215), (50, 50, 55)),
            ]
        )
    if kind == "shelf":
        return box((1.2, 0.4, 1.9), (0, 0, 0.95), jitter_color(rng, (95, 75, 60)))
    if kind == "sofa":
        color = jitter_color(rng, (120, 60, 60), 25)
        return merge(
            [
                box((1.9, 0.85, 0.45), (0, 0, 0.225), color),
                box((1.9, 0.2, 0.45), (0, -0.33, 0.65), color),
            ]
        )
    if kind == "crate":
        side = float(rng.uniform(0.5, 0.9))
        return box((side, side, side), (0, 0, side / 2), (160, 120, 60))
    if kind == "pillar":
        return cylinder(0.25, ceiling, (0, 0, 0), (190, 190, 190))
    raise ValueError(f"unknown furniture kind {kind!r}; known: {', '.join(RADII)}")


def furnish(
    kit: WorldKit,
    rng: np.random.Generator,
    area: tuple[float, float, float, float],
    z: float,
    count: int,
    kinds: Sequence[str],
    clear: Sequence[Circle] = (),
    ceiling: float = 3.0,
    weights: Sequence[float] | None = None,
) -> None:
    """Scatter ``count`` pieces of ``kinds`` over ``area`` at height ``z``, ``LANE`` apart.

    ``clear`` circles (doorways, paths) are kept free. Pieces that find no room are left out.
    """
    chosen = [str(k) for k in rng.choice(list(kinds), size=count, p=weights)]
    spots = scatter(rng, area, [RADII[k] for k in chosen], LANE, clear)
    for (x, y, _), kind in zip(spots, chosen, strict=False):
        yaw = float(rng.choice([0.0, 90.0, 180.0, 270.0]))
        kit.add(kind, furniture_mesh(rng, kind, ceiling).moved((x, y, z), yaw))
