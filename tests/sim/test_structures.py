import math

import numpy as np

from sortie.sim.assets.climbs import Run, railing, ramp_runs, stair_runs, stairwell
from sortie.sim.assets.structures import gate, jitter_color, slab_with_holes
from sortie.sim.assets.terrain import rolling_terrain, scatter
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import merge
from sortie.sim.raycast import RayCaster
from sortie.sim.scene import Dynamics, Scene, SceneObject


def _caster(kit: WorldKit) -> RayCaster:
    return RayCaster(kit.scene((-20, -20, 20, 20)))


def _down(caster: RayCaster, points: np.ndarray, start: float) -> np.ndarray:
    """Return the height of the first surface under each (x, y), nan where there is none."""
    origins = np.column_stack([points, np.full(len(points), start)])
    dirs = np.tile([0.0, 0.0, -1.0], (len(points), 1))
    t = caster.cast(origins, dirs).t
    return np.where(np.isfinite(t), start - t, np.nan)


def _along(path: tuple[tuple[float, float], ...], spacing: float) -> np.ndarray:
    """Return points every ``spacing`` metres along a polyline."""
    points = []
    for a, b in zip(path, path[1:], strict=False):
        count = max(2, int(math.dist(a, b) / spacing))
        points.append(np.linspace(a, b, count, endpoint=False))
    return np.concatenate(points + [np.asarray(path[-1:])])


def test_slab_with_holes_leaves_the_hole_open_and_the_rest_at_its_top():
    """Rays down find the floor's top everywhere except inside the hole."""
    kit = WorldKit("test")
    kit.add("floor", slab_with_holes((-5, -5, 5, 5), [(-1, -2, 2, 1)], 3.0, (100, 100, 100)))
    heights = _down(_caster(kit), np.array([[0.0, 0.0], [-3.0, 0.0], [4.0, 4.0]]), 10.0)
    assert np.isnan(heights[0])
    assert np.allclose(heights[1:], 3.0)


def test_stair_runs_have_low_risers_deep_treads_and_reach_the_upper_floor():
    """Every riser is at most 0.18 m, every tread at least 0.28 m, and the last leads to z1."""
    runs = stair_runs(0.0, 3.9)
    flights = [r for r in runs if r.steps]
    assert all((r.z1 - r.z0) / r.steps <= 0.18 for r in flights)
    assert all((r.x1 - r.x0) / r.steps >= 0.28 for r in flights)
    assert math.isclose(runs[-1].arrival(), 3.9)


def test_long_stairs_get_a_landing_halfway():
    """A storey-high stair is split by a flat landing at least as deep as a stair is wide."""
    landings = [r for r in stair_runs(0.0, 4.0) if not r.steps and r.z0 == r.z1]
    assert len(landings) == 1 and landings[0].x1 - landings[0].x0 >= 1.2


def test_ramp_runs_stay_under_ten_degrees_and_end_at_the_top():
    """Every sloped piece of a ramp is at most 10 degrees and the ramp ends at z1."""
    runs = ramp_runs(0.0, 4.0, slope=8.0)
    slopes = [math.degrees(math.atan2(r.z1 - r.z0, r.x1 - r.x0)) for r in runs]
    assert max(slopes) <= 10.0 and math.isclose(runs[-1].z1, 4.0)


def test_railing_follows_the_slope_it_guards():
    """A railing from 0 m to 2 m has its top rail 1 m above both ends."""
    mesh = railing((0.0, 0.0), (10.0, 0.0), 0.0, 2.0)
    verts = mesh.vertices
    start_top = verts[verts[:, 0] < 0.1, 2].max()
    end_top = verts[verts[:, 0] > 9.9, 2].max()
    assert math.isclose(start_top, 1.03, abs_tol=1e-4)
    assert math.isclose(end_top, 3.03, abs_tol=1e-4)


def test_stairwell_steps_are_climbable_all_the_way_up():
    """Rays down along the walking line rise by at most 0.18 m at a time, from z0 to z1."""
    kit = WorldKit("test")
    well = stairwell(kit, (0.0, 0.0), 0.0, 0.0, 3.8)
    # Upper floor only where the second flight arrives, so rays reach the lower floor too.
    kit.add("floor", slab_with_holes((-3, 0.1, 0, 3), [], 3.8, (90, 90, 90)))
    kit.add("floor", slab_with_holes((-8, -8, 8, 8), [], 0.0, (90, 90, 90)))
    caster = _caster(kit)
    # The first flight passes under the railing that guards the well's mouth upstairs.
    heights = np.concatenate(
        [
            _down(caster, _along(well.path[:2], 0.03), 3.7),
            _down(caster, _along(well.path[1:], 0.03), 5.0),
        ]
    )
    assert not np.isnan(heights).any()
    assert np.abs(np.diff(heights)).max() <= 0.18
    assert math.isclose(heights[0], 0.0, abs_tol=1e-4)
    assert math.isclose(heights[-1], 3.8, abs_tol=1e-4)


def test_stairwell_leaves_two_metres_of_headroom_over_its_steps():
    """Under a floor at 7.6 m, a 0.3 m-radius walker on the steps has at least 2 m overhead."""
    kit = WorldKit("test")
    well = stairwell(kit, (0.0, 0.0), 0.0, 0.0, 3.8)
    kit.add("floor", slab_with_holes((-8, -8, 8, 8), [well.opening], 3.8, (90, 90, 90)))
    kit.add("ceiling", slab_with_holes((-8, -8, 8, 8), [], 7.6, (90, 90, 90)))
    caster = _caster(kit)
    points = _along(well.path[:3], 0.05)
    points = points[points[:, 0] >= 0.3]  # from the first step to the landing's middle
    for dx, dy in ((0, 0), (0.3, 0), (-0.3, 0), (0, 0.3), (0, -0.3)):
        shifted = points + [dx, dy]
        floor = _down(caster, shifted, 3.55)
        origins = np.column_stack([shifted, floor + 0.01])
        up = caster.cast(origins, np.tile([0.0, 0.0, 1.0], (len(points), 1))).t
        assert up.min() >= 2.0


def test_gate_is_a_closed_openable_gate():
    """A gate added to a fence opening is openable, named gate_0 and starts closed."""
    kit = WorldKit("test")
    obj = gate(kit, (0.0, 0.0, 0.0), 0.0)
    assert obj.name == "gate_0" and obj.semantic == "gate"
    assert obj.dynamics is Dynamics.OPENABLE and not obj.starts_open


def test_run_arrival_is_one_riser_above_a_flights_last_step():
    """A flight's arrival height is its last top plus one riser; a ramp's is its top."""
    assert math.isclose(Run(0.0, 1.5, 0.0, 0.875, 5).arrival(), 1.05)
    assert Run(0.0, 10.0, 0.0, 1.0).arrival() == 1.0


def test_scatter_keeps_the_gap_between_every_pair():
    """Scattered circles are all at least ``gap`` apart, edge to edge, and clear of taken ones."""
    rng = np.random.default_rng(3)
    circles = scatter(rng, (0, 0, 20, 20), [0.5] * 80, 1.2, [(10.0, 10.0, 3.0)])
    points = np.asarray(circles + [(10.0, 10.0, 3.0)])
    dist = np.hypot(*(points[:, None, :2] - points[None, :, :2]).transpose(2, 0, 1))
    clear = dist - points[:, None, 2] - points[None, :, 2]
    np.fill_diagonal(clear, np.inf)
    assert clear.min() >= 1.2 - 1e-9


def test_terrain_height_matches_the_drawn_surface():
    """``height_at`` agrees with ray casts onto the terrain mesh."""
    rng = np.random.default_rng(5)
    ground = rolling_terrain(rng, (-10, -10, 10, 10), relief=3.0)
    scene = Scene(
        [SceneObject("ground_0", "ground", (ground.mesh(rng, (90, 120, 60)),))], (-10, -10, 10, 10)
    )
    points = rng.uniform(-9, 9, (50, 2))
    cast = _down(RayCaster(scene), points, 20.0)
    assert np.allclose(cast, ground.height_at(points[:, 0], points[:, 1]), atol=1e-4)


def test_rolling_terrain_respects_its_slope_limit():
    """No triangle of the ground is steeper than the requested limit."""
    ground = rolling_terrain(np.random.default_rng(1), (-20, -20, 20, 20), 6.0, max_slope=12.0)
    tri = ground.mesh(np.random.default_rng(1), (0, 0, 0)).triangles().astype(np.float64)
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    tilt = np.degrees(np.arccos(normal[:, 2] / np.linalg.norm(normal, axis=1)))
    assert tilt.max() <= 12.0 + 1e-3


def test_merge_keeps_railing_meshes_closed():
    """A railing is two closed boxes: 24 triangles."""
    assert merge([railing((0, 0), (1, 0), 0.0)]).triangle_count == 24


def _scatter_by_rows(rng, area, radii, gap, taken, tries=24):
    """Return ``scatter``'s circles as it first placed them: one stacked row per circle."""
    x0, y0, x1, y1 = area
    placed = np.asarray(list(taken), np.float64).reshape(-1, 3)
    keep = len(placed)
    for radius in radii:
        xs = rng.uniform(x0 + radius, x1 - radius, tries)
        ys = rng.uniform(y0 + radius, y1 - radius, tries)
        dist = np.hypot(xs[:, None] - placed[:, 0], ys[:, None] - placed[:, 1])
        free = np.all(dist >= placed[:, 2] + radius + gap, axis=1)
        if free.any():
            k = int(np.argmax(free))
            placed = np.vstack([placed, [xs[k], ys[k], radius]])
    return [(float(x), float(y), float(r)) for x, y, r in placed[keep:]]


def test_scatter_places_what_stacking_rows_placed():
    """Circles in preallocated columns are the stacked rows' circles, and the draws are in step."""
    radii = np.random.default_rng(1).uniform(0.2, 1.5, 120).tolist()
    made, plain = np.random.default_rng(4), np.random.default_rng(4)
    circles = scatter(made, (0, 0, 25, 25), radii, 0.8, [(5.0, 5.0, 2.0)])
    assert circles == _scatter_by_rows(plain, (0, 0, 25, 25), radii, 0.8, [(5.0, 5.0, 2.0)])
    assert len(circles) < len(radii) and made.random() == plain.random()


def test_jitter_color_of_ints_matches_the_clipped_array_form():
    """Plain ints jittered and clipped one by one give the colour numpy's clip gave."""
    for seed in range(40):
        made, plain = np.random.default_rng(seed), np.random.default_rng(seed)
        color = (250, 3, 128)
        shifted = np.clip(np.asarray(color) + plain.integers(-20, 21, 3), 0, 255)
        assert jitter_color(made, color) == tuple(int(v) for v in shifted)
