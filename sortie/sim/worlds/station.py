"""``station``: a street level under an elevated island platform, reached by stairs and a ramp.

The platform runs along x between two raised tracks, 3.8-4.4 m above the street. Stairs
come up to its west end and a long ramp (8 degrees) to its east end; pillars carry the
platform and the track decks, a canopy covers the platform, and signs name the platforms.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sortie.sim.assets.climbs import add_climb, climb_length, railing, ramp_runs, stair_runs
from sortie.sim.assets.structures import Rect, bench, jitter_color, lamp_post, sign_board
from sortie.sim.assets.terrain import Circle, scatter
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Mesh, box, cylinder, merge, slab
from sortie.sim.scene import Scene
from sortie.sim.worlds.base import CLUTTER, LIGHTING, Param, ParamValue, world

ISLAND = 3.5
"""Half the platform's width."""
TRACK = 4.5
"""Width of each track deck beside the platform."""
BED = 1.1
"""Drop from the platform's edge to the track bed."""
STAIRS_WIDTH = 2.4
RAMP_WIDTH = 2.0
STREET = 10.0
"""Street-level margin around the station."""
NAMES = ("Riverside", "Central", "Northgate", "Hillview", "Parkway", "Harbour", "Old Mill")


@world(
    "station",
    "street level under an elevated island platform, joined by stairs and a ramp (rescue L5)",
    (Param("size", 60.0, "length of the platform in metres", 40.0, 100.0), CLUTTER, LIGHTING),
)
def build(kit: WorldKit, rng: np.random.Generator, params: Mapping[str, ParamValue]) -> Scene:
    """Build a platform of length ``size`` raised 3.8-4.4 m over a street-level plaza."""
    half = float(params["size"]) / 2
    height = round(float(rng.uniform(3.8, 4.4)), 2)
    stairs, ramp = stair_runs(0.0, height), ramp_runs(0.0, height, slope=8.0)
    west, east = -half - climb_length(stairs), half + climb_length(ramp)
    span = (west - STREET, -ISLAND - TRACK - STREET, east + STREET, ISLAND + TRACK + STREET)
    name = f"{NAMES[int(rng.integers(len(NAMES)))]} Station"
    clutter = float(params["clutter"])
    _street(kit, rng, span, (west, east), name, clutter)
    _platform(kit, rng, half, height, clutter)
    _tracks(kit, rng, (span[0], span[2]), height)
    add_climb(kit, "stairs", stairs, (west, 0.0), 0.0, STAIRS_WIDTH, 0.0, (165, 165, 160))
    add_climb(kit, "ramp", ramp, (east, 0.0), 180.0, RAMP_WIDTH, 0.0, (150, 150, 148))
    for end, width in ((-half, STAIRS_WIDTH), (half, RAMP_WIDTH)):
        for side in (-1, 1):
            kit.add(
                "railing", railing((end, side * (width / 2 + 0.05)), (end, side * ISLAND), height)
            )
    return kit.scene(span, str(params["lighting"]), topdown_cut=height + 2.8)


def _street(
    kit: WorldKit,
    rng: np.random.Generator,
    span: Rect,
    climbs: tuple[float, float],
    name: str,
    clutter: float,
) -> None:
    """Add the road, the plaza, the station's name sign and street furniture."""
    x0, y0, x1, y1 = span
    road = (x0, y0, x1, y0 + 7.0)
    kit.add("road", slab(*road, -0.2, 0.0, (70, 70, 75)))
    kit.add("sidewalk", slab(x0, road[3], x1, y1, -0.2, 0.0, jitter_color(rng, (180, 175, 165))))
    foot = climbs[0] - 3.0
    kit.add("sign", sign_board(name, (foot, 3.0, 3.0), 180.0, 4.0, 0.8), text=name)
    kit.add(
        "pillar",
        merge([box((0.15, 0.15, 2.6), (foot, 3.0 + s, 1.3), (60, 60, 65)) for s in (-1.8, 1.8)]),
    )
    # Keep the stairs' foot, the ramp's foot and the pillar rows free of props.
    taken: list[Circle] = [
        (climbs[0] - 2.0, 0.0, 3.0),
        (climbs[1] + 2.0, 0.0, 3.0),
        (foot, 3.0, 2.2),
    ]
    taken += [
        (float(x), y, 0.6)
        for x in np.arange(x0, x1, 8.0)
        for y in (-ISLAND - TRACK + 0.5, ISLAND + TRACK - 0.5, 0.0)
    ]
    area = (x0 + 1.0, road[3] + 1.0, x1 - 1.0, y1 - 1.0)
    count = int((x1 - x0) * 0.25 * (0.3 + clutter))
    kinds = rng.choice(["bench", "lamp_post", "bollard", "trash_bin"], size=count)
    radii = {"bench": 0.85, "lamp_post": 0.2, "bollard": 0.15, "trash_bin": 0.3}
    for (x, y, _), kind in zip(
        scatter(rng, area, [radii[str(k)] for k in kinds], 1.2, taken), kinds, strict=False
    ):
        kit.add(str(kind), _prop(str(kind), (x, y, 0.0), float(rng.uniform(0, 360))))


def _prop(kind: str, base: tuple[float, float, float], yaw: float) -> Mesh:
    """Return one piece of street or platform furniture."""
    if kind == "bench":
        return bench(base, yaw)
    if kind == "lamp_post":
        return lamp_post(base)
    if kind == "bollard":
        return cylinder(0.12, 0.9, base, (80, 80, 85), segments=8)
    return cylinder(0.25, 0.9, base, (40, 90, 60), segments=8)


def _platform(
    kit: WorldKit, rng: np.random.Generator, half: float, height: float, clutter: float
) -> None:
    """Add the island platform, its supports, canopy, signs and benches."""
    inner = ISLAND - 0.6
    middle = slab(-half, -inner, half, inner, height - 0.4, height, (185, 180, 170))
    # Yellow safety strips along both edges, beside (not on) the paving: one flat top.
    edges = [
        slab(-half, lo, half, hi, height - 0.4, height, (225, 200, 60))
        for lo, hi in ((-ISLAND, -inner), (inner, ISLAND))
    ]
    kit.add("platform", merge([middle, *edges]))
    stations = np.arange(-half + 4.0, half - 3.0, 8.0)
    kit.add(
        "pillar",
        merge(
            [cylinder(0.35, height - 0.4, (float(x), 0.0, 0.0), (170, 170, 170)) for x in stations]
        ),
    )
    kit.add(
        "pillar",
        merge([cylinder(0.15, 3.2, (float(x), 0.0, height), (90, 95, 100)) for x in stations]),
    )
    kit.add(
        "roof",
        slab(
            -half + 2.0,
            -ISLAND - 0.3,
            half - 2.0,
            ISLAND + 0.3,
            height + 3.2,
            height + 3.4,
            (120, 130, 140),
        ),
    )
    for x in stations[::2]:
        for number, side in ((1, -1.0), (2, 1.0)):
            text = f"Platform {number}"
            kit.add(
                "sign",
                sign_board(
                    text, (float(x), side * (ISLAND - 0.8), height + 2.6), side * 90.0, 2.0, 0.45
                ),
                text=text,
                platform=number,
            )
    for x in stations[:-1] + 4.0:
        if rng.random() < 0.3 + 0.6 * clutter:
            facing = float(rng.choice([-1.0, 1.0]))
            kit.add("bench", bench((float(x), facing * 1.6, height), 90.0 * facing))


def _tracks(
    kit: WorldKit, rng: np.random.Generator, extent: tuple[float, float], height: float
) -> None:
    """Add both raised track decks with rails, parapets and pillars, and maybe a train."""
    x0, x1 = extent
    bed = height - BED
    for number, side in ((1, -1.0), (2, 1.0)):
        near, far = side * ISLAND, side * (ISLAND + TRACK)
        lo, hi = min(near, far), max(near, far)
        centre = side * (ISLAND + TRACK / 2)
        rails = [
            box((x1 - x0, 0.08, 0.15), ((x0 + x1) / 2, centre + g, bed + 0.075), (140, 135, 130))
            for g in (-0.72, 0.72)
        ]
        deck = slab(x0, lo, x1, hi, bed - 0.4, bed, (120, 110, 100))
        kit.add("track", merge([deck, *rails]), platform=number)
        kit.add("wall", slab(x0, far - 0.1, x1, far + 0.1, bed, bed + 1.0, (160, 160, 155)))
        kit.add(
            "pillar",
            merge(
                [
                    box((0.6, 0.6, bed - 0.4), (float(x), centre, (bed - 0.4) / 2), (165, 165, 165))
                    for x in np.arange(x0 + 4.0, x1, 8.0)
                ]
            ),
        )
    if rng.random() < 0.7:
        track = float(rng.choice([-1.0, 1.0]))
        length = float(rng.uniform(30.0, 45.0))
        _train(kit, rng, track * (ISLAND + TRACK / 2), bed, length)


def _train(kit: WorldKit, rng: np.random.Generator, y: float, bed: float, length: float) -> None:
    """Add a stopped train along the track at ``y``."""
    color = jitter_color(rng, (200, 40, 40), 30)
    body = box((length, 2.9, 3.0), (0.0, y, bed + 0.35 + 1.5), color)
    windows = box((length - 1.0, 2.95, 0.7), (0.0, y, bed + 2.5), (40, 45, 55))
    kit.add("train", merge([body, windows]), color="red")
