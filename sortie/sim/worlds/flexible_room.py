"""``flexible_room``: one open indoor room with furniture, a single floor and a doorway."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sortie.sim.assets.structures import floor_slab, jitter_color, sliding_door, wall
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import box, cylinder, merge
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
    _furnish(kit, rng, half, float(params["clutter"]))
    return kit.scene((-half, -half, half, half), str(params["lighting"]), topdown_cut=2.5)


def _furnish(kit: WorldKit, rng: np.random.Generator, half: float, clutter: float) -> None:
    """Scatter tables, shelves, crates and pillars, keeping a margin from the walls."""
    count = int(round(clutter * half * 1.2))
    for _ in range(count):
        kind = rng.choice(["table", "shelf", "crate", "pillar"])
        x, y = rng.uniform(-half + 1.2, half - 1.2, 2)
        yaw = float(rng.choice([0.0, 90.0]))
        if kind == "table":
            top = box((1.6, 0.8, 0.05), (0, 0, 0.75), jitter_color(rng, (120, 80, 45)))
            legs = [box((0.06, 0.06, 0.73), (sx * 0.7, sy * 0.35, 0.365), (60, 40, 25))
                    for sx in (-1, 1) for sy in (-1, 1)]  # fmt: skip
            kit.add("table", merge([top, *legs]).moved((x, y, 0.0), yaw))
        elif kind == "shelf":
            kit.add("shelf", box((1.2, 0.4, 1.8), (x, y, 0.9), jitter_color(rng, (90, 70, 60)),
                                 yaw))  # fmt: skip
        elif kind == "crate":
            side = float(rng.uniform(0.5, 0.9))
            kit.add("crate", box((side, side, side), (x, y, side / 2), (160, 120, 60), yaw))
        else:
            kit.add("pillar", cylinder(0.25, WALL_HEIGHT, (x, y, 0.0), (190, 190, 190)))
