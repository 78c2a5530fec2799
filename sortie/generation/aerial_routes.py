"""Patrols: a named route of the world flown at 20–30 m, described in words, maybe counted.

A route (``Scene.routes``) is a list of ground points; the patrol flies it at one altitude,
chosen in 20–30 m and raised to clear everything within 6 m of the route by 6 m (a patrol
that would have to fly higher is rejected). Wiggly routes (the forest's river) are
simplified to within 3 m, so the expert flies a few long legs instead of many short ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from shapely.geometry import LineString, box

from sortie.generation.aerial_tasks import COMPASS
from sortie.generation.rejected import Rejected
from sortie.sim.scene import Route, Scene, SceneObject

Vec3 = tuple[float, float, float]
ALTITUDE = (20.0, 30.0)
"""Patrol altitudes, metres above the world's zero level (MissionBench flies 20–30 m)."""
CLEARANCE = 6.0
"""Metres a patrol keeps above anything within this distance of its route."""
SIMPLIFY = 3.0
"""Metres a simplified route may stray from the original."""
STRAIGHT_STEPS = 25
"""A patrol's d_max is its length over this: flying it straight takes half of T_max = 50."""
PLACES = {
    "farm": "solar farm",
    "construction": "construction site",
    "camp": "ranger camp",
    "station": "ranger station",
    "north_park": "north park",
    "park": "park",
    "plaza": "plaza",
}
"""Words for the areas that ``perimeter_*`` routes go round."""
NAMED_ROUTES = {
    "power_line": "the power line",
    "river": "the river",
    "trail": "the trail",
    "track_main": "the main track",
    "track_waterhole": "the track to the waterhole",
    "shore_waterhole": "the shore of the waterhole",
}
"""Words for routes that follow a thing rather than a street or a perimeter."""


@dataclass(frozen=True, slots=True)
class Patrol:
    """A route to patrol and how an instruction names it."""

    route: str
    subject: str
    """E.g. ``along Maple Street from its west end to its east end``."""
    points: tuple[Vec3, ...]
    """The planned waypoints at the patrol's altitude, the start first."""
    altitude: float
    counted: tuple[SceneObject, ...] = ()
    """What a patrol+reporting mission counts along the route (cars on it, its pylons)."""
    counted_noun: str = ""

    @property
    def length(self) -> float:
        """Return the route's horizontal length, metres."""
        return float(LineString([p[:2] for p in self.points]).length)

    def max_move(self) -> float:
        """Return d_max: the length over STRAIGHT_STEPS (see module docstring)."""
        return round(self.length / STRAIGHT_STEPS, 3)


def plan_patrol(scene: Scene, route: str, rng: np.random.Generator) -> Patrol:
    """Return the patrol of ``route`` at a drawn altitude, or reject it."""
    if route not in scene.routes:
        raise Rejected(f"no route {route!r} in the world")
    ground = scene.routes[route]
    if len(ground) < 2:
        raise Rejected(f"route {route!r} has fewer than two points")
    line = LineString(ground).simplify(SIMPLIFY)
    # Raised altitudes round up to a tenth, so instructions quote a short number.
    lowest = math.ceil((_top_along(scene, line) + CLEARANCE) * 10) / 10
    altitude = max(round(float(rng.uniform(*ALTITUDE)), 1), lowest)
    if altitude > ALTITUDE[1]:
        raise Rejected(
            f"route {route!r} passes over something taller than {ALTITUDE[1] - CLEARANCE:g} m"
        )
    points = tuple((round(x, 3), round(y, 3), round(altitude, 3)) for x, y in line.coords)
    counted, noun = _along(scene, route)
    return Patrol(route, describe(scene, route, ground), points, altitude, counted, noun)


def _top_along(scene: Scene, line: LineString) -> float:
    """Return the highest top of anything within CLEARANCE of the route, metres."""
    corridor = line.buffer(CLEARANCE)
    tops = [
        float(o.bounds()[1][2])
        for o in scene.objects
        if corridor.intersects(box(*o.bounds()[0][:2], *o.bounds()[1][:2]))
    ]
    return max(tops, default=0.0)


def describe(scene: Scene, route: str, ground: Route) -> str:
    """Return how an instruction names ``route`` and its direction."""
    closed = math.dist(ground[0], ground[-1]) < 1.0
    if route.startswith("perimeter_"):
        where = f"around the {PLACES.get(route[10:], route[10:].replace('_', ' '))}"
    elif route.startswith("fence_"):
        where = f"along the {route[6:]} fence"
    elif route.startswith("road_"):
        where = f"along {street_of(scene, route)}"
    else:
        where = f"along {NAMED_ROUTES.get(route, 'the ' + route.replace('_', ' '))}"
    middle = np.mean(np.array(ground[:-1] if closed else ground), axis=0)
    start = _side(np.array(ground[0]) - middle)
    if closed:
        dx, dy = np.array(ground[0]) - middle
        corner = f"{'north' if dy > 0 else 'south'}-{'east' if dx > 0 else 'west'}"
        turn = "counter-clockwise" if _area(ground) > 0 else "clockwise"
        return f"{where}, starting at its {corner} corner and going {turn}"
    return f"{where} from its {start} end to its {_side(np.array(ground[-1]) - middle)} end"


def street_of(scene: Scene, route: str) -> str:
    """Return the street a ``road_*`` route follows (``Maple Street``), or ``the X road``."""
    words = route[5:].split("_")
    if len(words) > 1:
        return " ".join(w.title() for w in words)
    streets = {
        str(o.attributes.get("street") or o.attributes.get("place") or "")
        for o in scene.objects
        if o.semantic in ("house", "car", "building")
    }
    named = sorted(
        s for s in streets if s.split(" ")[0].lower() == words[0] and not s.startswith("driveway")
    )
    return named[0] if named else f"the {words[0]} road"


def _along(scene: Scene, route: str) -> tuple[tuple[SceneObject, ...], str]:
    """Return what a patrol+reporting mission counts along ``route`` (maybe nothing)."""
    if route.startswith("road_"):
        street = street_of(scene, route)
        return tuple(c for c in scene.of_class("car") if c.attributes["place"] == street), "cars"
    if route == "power_line":
        return tuple(p for p in scene.of_class("pylon") if p.attributes.get("number")), "pylons"
    return (), ""


def _side(offset: np.ndarray) -> str:
    return COMPASS[round(math.degrees(math.atan2(offset[1], offset[0])) / 45.0) % 8]


def _area(points: Route) -> float:
    """Return the signed area of a closed route (positive: counter-clockwise)."""
    xy = np.array(points)
    return float(np.sum(xy[:-1, 0] * xy[1:, 1] - xy[1:, 0] * xy[:-1, 1]) / 2)
