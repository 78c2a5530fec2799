"""Hits decided the same way on every CPU: exact distances, coincident faces, edge rays."""

import numpy as np
import pytest

from sortie.sim import exact
from sortie.sim.exact import EDGE_BAND, Faces, exact_hits
from sortie.sim.mesh import Mesh, slab
from sortie.sim.raycast import RayCaster
from sortie.sim.scene import Scene, SceneObject

DOWN = np.array([[0.0, 0.0, -1.0]])


def _caster(*objects: tuple[str, str, Mesh], packets: bool | None = None) -> RayCaster:
    scene = Scene([SceneObject(n, c, (m,)) for n, c, m in objects], (-10, -10, 10, 10))
    return RayCaster(scene, use_packets=packets)


def _hit_object(caster: RayCaster, origin, direction=DOWN) -> tuple[str, float]:
    hits = caster.cast(np.array([origin]), direction)
    names = [o.name for o in caster.scene.objects]
    object_id = int(caster.object_ids(hits)[0])
    return (names[object_id - 1] if object_id else ""), float(hits.t[0])


ENGINES = [pytest.param(None, id="default"), pytest.param(False, id="embreex")]


@pytest.mark.parametrize("packets", ENGINES)
def test_a_box_standing_on_a_floor_shows_the_floor_to_a_ray_from_inside_it(packets):
    """The crate's bottom and the floor's top coincide: the ray enters the floor, in any order."""
    floor = ("floor", "floor", slab(-5, -5, 5, 5, -0.1, 0.0))
    crate = ("crate", "crate", slab(-1, -1, 1, 1, 0.0, 1.0))
    for objects in ((floor, crate), (crate, floor)):
        caster = _caster(*objects, packets=packets)
        assert _hit_object(caster, (0.3, 0.2, 0.5)) == ("floor", pytest.approx(0.5))


@pytest.mark.parametrize("packets", ENGINES)
def test_two_floors_in_one_plane_go_to_the_first_in_scene_order(packets):
    """A road laid flush on the ground: the hit goes to whichever object comes first."""
    ground = ("ground", "ground", slab(-5, -5, 5, 5, -0.1, 0.0))
    road = ("road", "road", slab(-5, -1, 5, 1, -0.1, 0.0))
    assert _hit_object(_caster(ground, road, packets=packets), (0.3, 0.2, 2.0))[0] == "ground"
    assert _hit_object(_caster(road, ground, packets=packets), (0.3, 0.2, 2.0))[0] == "road"


@pytest.mark.parametrize("packets", ENGINES)
def test_a_ray_down_a_shared_edge_is_measured_along_itself(packets):
    """On a quad's diagonal the nudged ray picks a triangle; the distance is the ray's own."""
    caster = _caster(("floor", "floor", slab(-2, -2, 2, 2, -0.1, 0.0)), packets=packets)
    on_diagonal = np.array([[0.5, 0.5, 1.25], [-1.0, -1.0, 1.25]])
    hits = caster.cast(on_diagonal, np.repeat(DOWN, 2, axis=0))
    assert (hits.triangle >= 0).all() and hits.t.tolist() == [1.25, 1.25]


def test_a_ray_exactly_at_its_limit_hits_and_one_just_short_does_not():
    """The bound is compared with the exact distance, not Embree's float32 one."""
    caster = _caster(("floor", "floor", slab(-2, -2, 2, 2, -0.1, 0.0)))
    origin = np.array([[0.3, 0.1, 0.7]])
    assert np.isfinite(caster.cast(origin, DOWN, np.float32(0.7)).t[0])
    assert np.isinf(caster.cast(origin, DOWN, np.float32(0.6999)).t[0])


def test_exact_hits_measure_a_known_triangle():
    """A ray straight down onto z = 0.25 at a third of each leg: t, u, v as computed by hand."""
    corners = np.array([[[0, 0, 0.25], [3, 0, 0.25], [0, 3, 0.25]]], np.float32)
    t, u, v = exact_hits(
        corners, np.array([[1.0, 1.0, 2.0]], np.float32), DOWN.astype(np.float32), np.array([0])
    )
    assert (t[0], u[0], v[0]) == (1.75, pytest.approx(1 / 3), pytest.approx(1 / 3))


def test_faces_pair_coincident_triangles_by_facing():
    """A crate's bottom pairs with the floor's top as opposite; two stacked tops as same-way."""
    floor_top = [[0, 0, 0], [4, 0, 0], [4, 4, 0]]
    crate_bottom = [[1, 1, 0], [1, 2, 0], [2, 2, 0]]  # wound to face down
    other_top = [[1, 1, 0], [2, 1, 0], [2, 2, 0]]
    far_top = [[1, 1, 1], [2, 1, 1], [2, 2, 1]]  # another plane
    faces = Faces.of(np.array([floor_top, crate_bottom, other_top, far_top], np.float32))
    assert faces.opposite.index[faces.opposite.start[0] : faces.opposite.start[1]].tolist() == [1]
    assert faces.same.index[faces.same.start[2] : faces.same.start[3]].tolist() == [0]
    assert faces.same.counts(np.array([3]))[0] == 0 and faces.opposite.counts(np.array([3]))[0] == 0


def test_the_edge_gap_is_the_distance_to_the_nearest_edge():
    """At (3, 1) in the triangle (0,0)-(4,0)-(4,4): 1 m from two edges, 1.41 m from the third."""
    faces = Faces.of(np.array([[[0, 0, 0], [4, 0, 0], [4, 4, 0]]], np.float32))
    gap = faces.edge_gap(np.array([0]), np.array([0.5]), np.array([0.25]))
    assert gap[0] == pytest.approx(1.0)
    outside = faces.edge_gap(np.array([0]), np.array([0.5]), np.array([-0.01]))
    assert outside[0] == pytest.approx(-0.04) and outside[0] < EDGE_BAND


def test_peeling_a_forest_goes_down_every_column_without_repeating_a_surface():
    """Rays nudged off a canopy's rim are measured ahead of their origin: every column descends.

    A nudged ray that met a cone's steep side, measured along the un-nudged ray on that side's
    plane, once gave a hit behind the origin; the peel then met it again and again.
    """
    from sortie.sim.navigation.doors import walkable_scene
    from sortie.sim.navigation.surfaces import Grid, peel_columns
    from sortie.sim.shapes import WALKER
    from sortie.sim.worlds import build_world

    scene = walkable_scene(build_world("forest", 0, {}))
    hits = peel_columns(RayCaster(scene), Grid.over(scene.bounds, 0.25), WALKER)
    below = -1e9  # after a column's last hit
    z = np.where(np.isnan(hits.z), below, hits.z)
    steps = np.diff(z, axis=1)
    assert ((z[:, 1:] == below) | (steps <= -1e-3 + 1e-9)).all()


def test_plane_labels_are_numpy_uniques_ranks_with_signed_zeros_and_repeats():
    rng = np.random.default_rng(5)
    keys = rng.choice([-1.0, -0.0, 0.0, 0.5, 1.0], (400, 4))
    keys[rng.random(400) < 0.1] = np.nan  # degenerate triangles' rows
    flat = ~np.isnan(keys[:, 0])
    _, expected = np.unique(keys, axis=0, return_inverse=True)
    labels = exact._row_labels(keys)
    np.testing.assert_array_equal(labels[flat], expected.ravel()[flat])
    assert len(np.unique(labels[flat])) < flat.sum()  # repeated planes share a label


def test_boxes_overlap_one_axis_at_a_time_keeps_the_pairs_of_the_all_axes_test():
    """Pairs kept axis by axis are those the three-axis test keeps, in the same order."""
    rng = np.random.default_rng(7)
    low = rng.integers(0, 6, (40, 3)).astype(np.float64)
    high = low + rng.integers(0, 3, (40, 3))
    first, second = rng.integers(0, 40, 500), rng.integers(0, 40, 500)
    keep = np.all((low[first] <= high[second]) & (low[second] <= high[first]), axis=1)
    kept = exact._boxes_overlap(first, second, low, high)
    assert 0 < keep.sum() < len(keep)
    assert np.array_equal(kept[0], first[keep]) and np.array_equal(kept[1], second[keep])


def _sorted_rows(rng: np.random.Generator, count: int) -> tuple[np.ndarray, ...]:
    """Return labels, lows and highs of ``count`` boxes with many ties, sorted as the walk wants."""
    label = rng.integers(0, 4, count).astype(np.int64)
    low = rng.integers(0, 8, (count, 3)).astype(np.float64) * 0.5
    high = low + rng.integers(0, 4, (count, 3)) * 0.5
    order = np.lexsort((low[:, 0], label))
    return label[order], low[order], high[order]


def test_compiled_plane_walk_finds_the_numpy_pairs_in_their_order():
    """``plane_pairs`` in C gives the pairs the numpy candidates and box tests give, in order."""
    compiled = exact._compiled()
    if compiled is None:
        pytest.skip("sortie.sim._packets is not built")
    for seed in range(5):
        label, low, high = _sorted_rows(np.random.default_rng(seed), 300)
        i, j = exact._sorted_pairs(label, low, high)
        pairs = np.frombuffer(compiled.plane_pairs(label, low, high), np.int64).reshape(-1, 2)
        assert len(i) > 0
        assert np.array_equal(pairs[:, 0], i) and np.array_equal(pairs[:, 1], j)


def test_a_worlds_coincident_faces_are_the_same_with_and_without_the_compiled_walk(monkeypatch):
    """A built world's partners come out the same from ``plane_pairs`` and from numpy."""
    from sortie.sim.raycast import StaticPart
    from sortie.sim.worlds import build_world

    if exact._compiled() is None:
        pytest.skip("sortie.sim._packets is not built")
    corners = StaticPart(build_world("station", 3, {})).table.corners
    compiled = Faces.of(corners)
    monkeypatch.setattr(exact, "_compiled", lambda: None)
    alone = Faces.of(corners)
    for lists in ("same", "opposite"):
        a, b = getattr(compiled, lists), getattr(alone, lists)
        assert len(a.index) > 0
        assert np.array_equal(a.start, b.start) and np.array_equal(a.index, b.index)


def test_partner_lists_are_the_lexsorts_with_and_without_the_extension(monkeypatch):
    """Compressed partner rows, short lists and long (sorted another way in C), match a lexsort."""
    rng = np.random.default_rng(9)
    owner = np.concatenate([rng.integers(0, 50, 400), np.full(60, 7)])  # triangle 7: a long list
    other = rng.permutation(len(owner)).astype(np.int64) + 100
    order = np.lexsort((other, owner))
    expected_start = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=60))])
    for compiled in (exact._compiled, lambda: None):
        monkeypatch.setattr(exact, "_compiled", compiled)
        lists = exact.Partners.of_pairs(60, owner, other)
        assert np.array_equal(lists.start, expected_start)
        assert np.array_equal(lists.index, other[order])


def test_plane_order_from_integers_is_the_order_from_rounded_planes():
    """Packed integer planes sort and label rows as the rounded planes do, ties and zeros too."""
    rng = np.random.default_rng(13)
    normal = rng.choice([-1.0, -0.0, 0.0, 0.6, 0.8, 1.0], (500, 3))
    plane = np.column_stack([normal, rng.choice([-2.5, -0.0, 0.0, 1.00004, 1.00006], 500)])
    plane[:40] += rng.uniform(-4e-5, 4e-5, (40, 4))  # within a rounding of the others
    flat = rng.random(500) > 0.1
    low_x = rng.choice([0.0, 0.5, 1.0], 500)
    order, label = exact._plane_order(plane, flat, low_x)
    plain_order, plain_label = exact._plane_order_of_keys(plane, flat, low_x)
    assert np.array_equal(order, plain_order) and np.array_equal(label, plain_label)
    assert len(np.unique(label[label >= 0])) < flat.sum()  # planes shared by several rows
