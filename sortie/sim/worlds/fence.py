"""A board fence around a square world on uneven ground (the forest, on foot and in flight)."""

from __future__ import annotations

import numpy as np

from sortie.sim.assets.climbs import railing
from sortie.sim.assets.terrain import Terrain
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Mesh, box, merge


def terrain_fence(kit: WorldKit, ground: Terrain, half: float) -> None:
    """Add a 2 m board fence around the square, following the ground between posts."""
    corners = [(-half, -half), (half, -half), (half, half), (-half, half)]
    for (xa, ya), (xb, yb) in zip(corners, corners[1:] + corners[:1], strict=True):
        count = max(1, int(round(np.hypot(xb - xa, yb - ya) / 2.5)))
        ts = np.linspace(0.0, 1.0, count + 1)
        px, py = xa + ts * (xb - xa), ya + ts * (yb - ya)
        pz = ground.height_at(px, py)
        panels: list[Mesh] = []
        for k in range(count):
            panels.append(
                railing(
                    (px[k], py[k]),
                    (px[k + 1], py[k + 1]),
                    float(pz[k]) - 0.3,
                    float(pz[k + 1]) - 0.3,
                    2.3,
                    (120, 92, 62),
                )
            )
        posts = [
            box((0.15, 0.15, 2.5), (float(x), float(y), float(z) + 1.0), (80, 60, 40))
            for x, y, z in zip(px, py, pz, strict=True)
        ]
        kit.add("fence", merge(panels + posts))
