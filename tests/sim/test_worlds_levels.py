import math
from collections import deque

import numpy as np
import pytest

from sortie.core.errors import ParameterError
from sortie.sim.raycast import RayCaster
from sortie.sim.scene import Dynamics, Scene
from sortie.sim.worlds import build_world

WORLDS = ("forest", "campus", "tower", "station")


def _down(caster: RayCaster, points: np.ndarray, start: float) -> np.ndarray:
    """Return the height of the first surface under each (x, y), nan where there is none."""
    origins = np.column_stack([points, np.full(len(points), start)])
    t = caster.cast(origins, np.tile([0.0, 0.0, -1.0], (len(points), 1))).t
    return np.where(np.isfinite(t), start - t, np.nan)


@pytest.mark.parametrize("name", WORLDS)
def test_same_seed_builds_the_same_world(name):
    """Two builds from one seed have the same digest."""
    assert build_world(name, 4).digest() == build_world(name, 4).digest()


@pytest.mark.parametrize("name", WORLDS)
def test_different_seeds_build_different_worlds(name):
    """Two seeds give two different worlds."""
    assert build_world(name, 1).digest() != build_world(name, 2).digest()


@pytest.mark.parametrize(
    ("name", "params", "allowed"),
    [
        ("forest", {"size": 500}, "30..120"),
        ("campus", {"size": 10}, "30..80"),
        ("tower", {"floors": 7}, "2..4"),
        ("station", {"size": 5}, "40..100"),
    ],
)
def test_bad_params_name_the_allowed_range(name, params, allowed):
    """A parameter out of range is refused with its allowed range in the message."""
    with pytest.raises(ParameterError, match=allowed):
        build_world(name, 0, params)


def test_forest_ground_is_gentle():
    """No triangle of the forest's ground is steeper than 20 degrees."""
    ground = build_world("forest", 0).of_class("ground")[0].parts[0]
    tri = ground.triangles().astype(np.float64)
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    tilt = np.degrees(np.arccos(normal[:, 2] / np.linalg.norm(normal, axis=1)))
    assert tilt.max() < 20.0


def test_forest_trees_stand_on_the_ground():
    """Every tree's lowest point is below the ground under its trunk (no floating trees)."""
    scene = build_world("forest", 0, {"size": 40})
    caster = RayCaster(scene)
    trees = scene.of_class("tree")
    trunks = np.array([[t.center()[0], t.center()[1]] for t in trees])
    ground = _down(caster, trunks + [0.5, 0.5], 50.0)  # just beside the trunk
    lowest = np.array([t.bounds()[0][2] for t in trees])
    assert len(trees) > 20 and (lowest < ground).all()


@pytest.mark.parametrize("floors", [2, 4])
def test_tower_floors_are_where_their_records_say(floors):
    """A ray down at a hall point on each floor finds its top at the recorded height."""
    scene = build_world("tower", 0, {"floors": floors})
    caster = RayCaster(scene)
    slabs = sorted(scene.of_class("floor"), key=lambda o: o.attributes["level"])
    heights = [float(o.attributes["height"]) for o in slabs]
    x = scene.bounds[2] - 8.0 - 0.6  # beside the east end wall, north of the stairwells
    for z, z_next in zip(heights, heights[1:] + [heights[-1] + 3.5], strict=True):
        found = _down(caster, np.array([[x, 6.5]]), z_next - 0.3)[0]
        assert math.isclose(found, z, abs_tol=1e-4)
    assert len(heights) == floors and min(np.diff(heights)) >= 3.0


def _profile(caster: RayCaster, xs: np.ndarray, y: float, start: float) -> np.ndarray:
    return _down(caster, np.column_stack([xs, np.full(len(xs), y)]), start)


def test_tower_stairs_risers_are_at_most_18_cm():
    """Rays down along both flights of every stairwell never jump more than 0.18 m."""
    scene = build_world("tower", 3, {"floors": 3})
    caster = RayCaster(scene)
    for stairs in scene.of_class("stairs"):
        low, high = stairs.bounds()
        xs = np.arange(low[0] + 0.06, high[0] - 0.06, 0.03)  # clear of the mouth railing
        lanes = [_profile(caster, xs, lane, high[2] + 0.1) for lane in (-0.75, 0.75)]
        assert max(np.abs(np.diff(tops)).max() for tops in lanes) <= 0.18
        assert min(tops.min() for tops in lanes) < low[2] + 0.18


def test_tower_has_a_ceiling_over_its_top_floor():
    """A ray up from the top floor hits a ceiling."""
    scene = build_world("tower", 0, {"floors": 3})
    top = max(float(o.attributes["height"]) for o in scene.of_class("floor"))
    hit = RayCaster(scene).cast(np.array([[0.0, 0.0, top + 1.0]]), np.array([[0.0, 0.0, 1.0]]))
    assert scene.objects[RayCaster(scene).object_ids(hit)[0] - 1].semantic == "ceiling"


def test_station_climbs_are_walkable_and_reach_the_platform():
    """Stairs rise at most 0.18 m a step, the ramp stays under 10 degrees, both reach 3 m up."""
    scene = build_world("station", 0)
    caster = RayCaster(scene)
    platform = scene.of_class("platform")[0].bounds()[1][2]
    stairs_low, stairs_high = scene.of_class("stairs")[0].bounds()
    tops = _profile(caster, np.arange(stairs_low[0] - 0.5, stairs_high[0] + 0.5, 0.03), 0.0, 9.0)
    assert np.abs(np.diff(tops)).max() <= 0.18 and math.isclose(tops[-1], platform, abs_tol=1e-4)
    ramp_low, ramp_high = scene.of_class("ramp")[0].bounds()
    xs = np.arange(ramp_low[0] + 0.01, ramp_high[0] - 0.01, 0.5)
    slope = np.degrees(np.arctan(np.abs(np.diff(_profile(caster, xs, 0.0, 9.0))) / 0.5))
    assert slope.max() <= 10.0 and platform >= 3.0


def test_station_signs_name_both_platforms():
    """The platform signs read Platform 1 and Platform 2."""
    texts = {o.attributes.get("text") for o in build_world("station", 0).of_class("sign")}
    assert {"Platform 1", "Platform 2"} <= texts


def test_campus_doors_and_gates_start_closed_and_open():
    """Every door and gate is openable, named in order and closed when the world is built."""
    scene = build_world("campus", 0)
    doors = [o for o in scene.objects if o.semantic in ("door", "gate")]
    assert doors and all(o.dynamics is Dynamics.OPENABLE for o in doors)
    assert all(not scene.is_open(o.name) for o in doors)
    for semantic in ("door", "gate"):
        names = [o.name for o in doors if o.semantic == semantic]
        assert names == [f"{semantic}_{i}" for i in range(len(names))]


def _reachable_areas(scene: Scene) -> set[int]:
    """Return the areas a point walker reaches from area 0 on a 0.5 m grid."""
    caster = RayCaster(scene)
    x0, y0, x1, y1 = scene.bounds
    xs, ys = np.arange(x0 + 0.25, x1, 0.5), np.arange(y0 + 0.25, y1, 0.5)
    blocked = {}
    for axis, (dx, dy) in enumerate(((0.5, 0.0), (0.0, 0.5))):
        gx, gy = np.meshgrid(xs, ys, indexing="ij")
        hit = np.zeros(gx.shape, bool)
        for z in (0.3, 1.0, 1.7):
            origins = np.column_stack([gx.ravel(), gy.ravel(), np.full(gx.size, z)])
            t = caster.cast(origins, np.tile([dx, dy, 0.0], (gx.size, 1)), 1.0).t
            hit |= np.isfinite(t).reshape(gx.shape)
        blocked[axis] = hit
    areas = {
        int(o.attributes["area"]): o.bounds()
        for o in scene.objects
        if o.attributes.get("kind") in ("building", "courtyard")
    }
    lo, hi = areas[0]
    seen = {
        (i, j)
        for i, x in enumerate(xs)
        for j, y in enumerate(ys)
        if lo[0] < x < hi[0] and lo[1] < y < hi[1]
    }
    queue = deque(seen)
    while queue:
        i, j = queue.popleft()
        for axis, (di, dj) in ((0, (1, 0)), (1, (0, 1)), (0, (-1, 0)), (1, (0, -1))):
            ni, nj = i + di, j + dj
            if not (0 <= ni < len(xs) and 0 <= nj < len(ys)) or (ni, nj) in seen:
                continue
            origin = (i, j) if di + dj > 0 else (ni, nj)
            if not blocked[axis][origin]:
                seen.add((ni, nj))
                queue.append((ni, nj))
    return {
        a
        for a, (lo, hi) in areas.items()
        if any(lo[0] < xs[i] < hi[0] and lo[1] < ys[j] < hi[1] for i, j in seen)
    }


def test_campus_areas_connect_only_through_doors_and_gates():
    """With every door and gate closed the walker stays in its area; opened, it reaches all."""
    scene = build_world("campus", 0, {"size": 36})
    assert _reachable_areas(scene) == {0}
    for obj in scene.objects:
        if obj.dynamics is Dynamics.OPENABLE:
            scene.set_open(obj.name, True)
    assert _reachable_areas(scene) == set(
        range(len(scene.of_class("floor")) + len(scene.of_class("sidewalk")))
    )
