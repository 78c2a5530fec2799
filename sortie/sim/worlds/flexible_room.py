"""``flexible_room``: one open indoor room with furniture, a single floor and a doorway."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sortie.sim.assets.furniture import furnish
from sortie.sim.assets.structures import floor_slab, jitter_color, sliding_door, wall
from sortie.sim.kit import WorldKit
from sortie.sim.scene import Scene
from sortie.sim.worlds.base import CLUTTER, LIGHTING, Param, ParamValue, world

WALL_HEIGHT = 3.0


@world(
    "flexible_room",
    "open single-floor indoor room with furniture (rescue L1)",
    (Param("size", 14.0, "side of the square room in metres", 8.0, 40.0), CLUTTER, LIGHTING),
)
def build(kit: WorldKit, rng: np.random.Generator, params: Mapping[str, ParamValue]) -> Scene:
    """Build a square room of side ``size`` with furniture scattered by ``clutter``."""
    size = float(params["size"])
    half = size / 2
    floor_color = jitter_color(rng, (150, 130, 105))
    wall_color = jitter_color(rng, (215, 210, 195))
    kit.add("floor", floor_slab(-half, -half, half, half, 0.0, floor_color))
    kit.add("ceiling", floor_slab(-half, -half, half, half, WALL_HEIGHT + 0.1, (235, 235, 230)))
    door_at = float(rng.uniform(1.5, size - 1.5))
    corners = [(-half, -half), (half, -half), (half, half), (-half, half)]
    for i, (start, end) in enumerate(zip(corners, corners[1:] + corners[:1], strict=True)):
        openings = [(door_at, 1.0, 2.1)] if i == 0 else None
        kit.add("wall", wall(start, end, 0.0, WALL_HEIGHT, wall_color, openings))
    sliding_door(kit, (-half + door_at, -half, 0.0), 0.0)
    count = int(round(float(params["clutter"]) * half * 1.2))
    margin = half - 1.2
    furnish(
        kit,
        rng,
        (-margin, -margin, margin, margin),
        0.0,
        count,
        ("table", "shelf", "crate", "pillar"),
        ceiling=WALL_HEIGHT,
    )
    return kit.scene((-half, -half, half, half), str(params["lighting"]), topdown_cut=2.5)
