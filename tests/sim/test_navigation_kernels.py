"""The compiled loops of a graph build answer as numpy does, ray by ray and surface by surface."""

import numpy as np
import pytest

from sortie.sim.navigation import clearance, kernels, surfaces
from sortie.sim.navigation.doors import walkable_scene
from sortie.sim.navigation.edges import Edges
from sortie.sim.navigation.links import link_neighbours
from sortie.sim.navigation.surfaces import ColumnHits, Grid, peel_columns, standing_surfaces
from sortie.sim.raycast import RayCaster
from sortie.sim.shapes import MANIPULATOR, PLANNING, WALKER, WalkerShape
from sortie.sim.worlds import build_world

pytestmark = pytest.mark.skipif(
    kernels.extension() is None, reason="sortie.sim.navigation._grid is not built"
)


def _numpy_and_compiled(monkeypatch, work):
    """Return what ``work()`` gives with numpy alone, then with the extension."""
    compiled = kernels.extension()
    monkeypatch.setattr(kernels, "extension", lambda: None)
    alone = work()
    monkeypatch.setattr(kernels, "extension", lambda: compiled)
    return alone, work()


@pytest.mark.parametrize("world", ["apartment", "flexible_room", "tower"])
@pytest.mark.parametrize("shape", [WALKER, PLANNING, MANIPULATOR], ids=["walker", "plan", "arm"])
def test_probes_room_and_links_agree_with_numpy_in_every_surface(monkeypatch, world, shape):
    scene = build_world(world, 0)
    grid = Grid.over(scene.bounds, 0.25)
    caster = RayCaster(walkable_scene(scene))
    hits = peel_columns(caster, grid, shape)
    columns, z, _ = standing_surfaces(hits, shape)
    positions = np.column_stack([grid.centres(columns), z])
    alone, compiled = _numpy_and_compiled(
        monkeypatch, lambda: clearance.probe(caster, positions, grid.cell, shape)
    )
    np.testing.assert_array_equal(alone.points, compiled.points)
    np.testing.assert_array_equal(alone.blocked_moves, compiled.blocked_moves)
    assert alone.blocked_moves.any() and not alone.blocked_moves.all()
    probes = alone
    a, b = _numpy_and_compiled(monkeypatch, lambda: surfaces.crowded(hits, grid, columns, z, shape))
    assert a.any() and not a.all()  # a test that can tell the two apart
    np.testing.assert_array_equal(a, b)
    a, b = _numpy_and_compiled(
        monkeypatch, lambda: clearance.near_hits(positions, probes.points, shape)
    )
    assert a.any() and not a.all()
    np.testing.assert_array_equal(a, b)
    a, b = _numpy_and_compiled(
        monkeypatch,
        lambda: link_neighbours(grid, columns, positions, probes.blocked_moves, shape),
    )
    assert a.nnz > len(columns)  # most surfaces have a neighbour or two
    for part in ("indptr", "indices", "data"):
        assert getattr(a, part).dtype == getattr(b, part).dtype
        np.testing.assert_array_equal(getattr(a, part), getattr(b, part))


def test_near_hits_agree_on_the_edges_of_the_body(monkeypatch):
    """Hits exactly at the radius, and exactly at the band's ends, are decided alike."""
    rng = np.random.default_rng(7)
    shape = WALKER
    positions = np.column_stack(
        [rng.uniform(-3, 3, 400), rng.uniform(-3, 3, 400), rng.choice([0.0, 0.15, 1.1], 400)]
    )
    half_band = (shape.height - shape.step) / 2
    node = positions[rng.integers(0, 400, 300)]
    angle = rng.uniform(0, 2 * np.pi, 300)
    ring = node[:, :2] + shape.radius * np.column_stack([np.cos(angle), np.sin(angle)])
    band_end = node[:, 2] + shape.step + half_band * rng.choice([-1.0, 1.0], 300)
    points = np.vstack(
        [
            np.column_stack([ring, node[:, 2] + shape.step + half_band]),  # at the radius
            np.column_stack([node[:, :2] + rng.uniform(-0.1, 0.1, (300, 2)), band_end]),
            np.column_stack([rng.uniform(-4, 4, (500, 2)), rng.uniform(-0.5, 2.5, 500)]),
        ]
    )
    a, b = _numpy_and_compiled(monkeypatch, lambda: clearance.near_hits(positions, points, shape))
    assert a.any() and not a.all()
    np.testing.assert_array_equal(a, b)


def test_near_hits_take_any_positions_and_no_points(monkeypatch):
    positions = np.array([[0.0, 0.0, 0.0], [1e4, -1e4, 5.0]])  # far apart: large buckets
    points = np.array([[0.1, 0.0, 1.0], [1e4, -1e4 + 0.2, 6.0]])
    a, b = _numpy_and_compiled(monkeypatch, lambda: clearance.near_hits(positions, points, WALKER))
    assert a.tolist() == b.tolist() == [True, True]
    empty = np.zeros((0, 3))
    a, b = _numpy_and_compiled(monkeypatch, lambda: clearance.near_hits(positions, empty, WALKER))
    assert a.tolist() == b.tolist() == [False, False]


EVEN = WalkerShape(radius=0.5, height=1.25, eye=1.0, step=0.25)
"""A body whose band (0.25-1.25 m) is as wide as its diameter: heights are compared unscaled,
so hits placed exactly on the band's ends and on the radius land there in floating point."""


def test_hits_exactly_on_the_ends_of_the_body_are_decided_alike(monkeypatch):
    positions = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [4.0, 0.0, 0.0], [6.0, 0.0, 0.0]])
    points = np.array(
        [
            [0.25, 0.0, 1.25],  # the head's height exactly: inside (the band is closed)
            [2.0, 0.5, 0.75],  # the radius exactly: outside (the disc is open)
            [4.0, 0.0, 0.25 - 2.0**-20],  # just under the step: outside
            [6.0, 0.0, 0.25],  # the step's height exactly: inside
        ]
    )
    a, b = _numpy_and_compiled(monkeypatch, lambda: clearance.near_hits(positions, points, EVEN))
    assert a.tolist() == b.tolist() == [True, False, False, True]


def test_crowded_agrees_with_numpy_where_hits_lie_exactly_at_step_and_head(monkeypatch):
    rng = np.random.default_rng(3)
    grid = Grid(0.0, 0.0, 1.0, 12, 12)  # a body's neighbours: its column and the 4 beside it
    columns = np.arange(grid.size, dtype=np.int64)
    z = rng.choice([0.0, 0.5], grid.size)
    levels = np.array([2.0, 1.75, 1.25, 1.0, 0.75, 0.5, 0.25, 0.0, -0.5])  # ends of both bands
    layers = rng.choice([0, 0, 0, 0, 1, 2], grid.size)
    hit_z = np.full((grid.size, 4), np.nan)
    for column, count in enumerate(layers):
        hit_z[column, :count] = np.sort(rng.choice(levels, count, replace=False))[::-1]
    hits = ColumnHits(
        hit_z,
        rng.random((grid.size, 4)) < 0.5,
        np.ones((grid.size, 4), bool),
        np.zeros(hit_z.shape, np.int32),
    )
    a, b = _numpy_and_compiled(monkeypatch, lambda: surfaces.crowded(hits, grid, columns, z, EVEN))
    assert a.any() and not a.all()
    np.testing.assert_array_equal(a, b)


def test_links_agree_with_numpy_where_heights_differ_by_exactly_a_step(monkeypatch):
    rng = np.random.default_rng(11)
    grid = Grid(0.0, 0.0, 1.0, 8, 8)
    columns = np.sort(rng.choice(grid.size, 90))  # some columns hold two or three levels
    heights = rng.choice([0.0, 0.25, 0.5, 1.0], len(columns))  # EVEN steps 0.25 exactly
    positions = np.column_stack([grid.centres(columns), heights])
    blocked = rng.random((len(columns), 8)) < 0.2
    a, b = _numpy_and_compiled(
        monkeypatch, lambda: link_neighbours(grid, columns, positions, blocked, EVEN)
    )
    rows = np.repeat(np.arange(len(columns)), np.diff(a.indptr))
    assert np.any(np.abs(heights[rows] - heights[a.indices]) == EVEN.step)  # edges at a step
    for part in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(a, part), getattr(b, part))


def _search(graph, source, target=-1):
    """Search ``graph`` (scipy CSR matrix or Edges) from ``source`` with the extension."""
    edges = graph if isinstance(graph, Edges) else Edges.of(graph)
    n = edges.node_count
    dist, pred = np.empty(n), np.empty(n, np.int32)
    arrays = (edges.indptr, edges.indices, edges.data)
    popped = kernels.extension().search(*arrays, source, target, dist, pred)
    return dist, pred, popped


def test_search_breaks_ties_as_scipy_does_toward_the_larger_node():
    """Two equal ways round a square: the node of larger index is reached first and kept."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import dijkstra

    a, b = [0, 0, 1, 2], [1, 2, 3, 3]
    square = csr_matrix((np.ones(8), (a + b, b + a)), shape=(4, 4))
    dist, pred, _ = _search(square, 0)
    assert dist.tolist() == [0.0, 1.0, 1.0, 2.0]
    assert pred.tolist() == [-9999, 0, 0, 2]  # worked by hand: 2 pops before 1 and claims 3
    expected = dijkstra(square, directed=True, indices=0, return_predecessors=True)
    np.testing.assert_array_equal(pred, expected[1])


@pytest.mark.parametrize("closed", [(), ("door_0",)], ids=["open", "a door closed"])
def test_search_gives_scipys_rows_and_paths_in_a_world_with_doors(closed):
    """Full rows equal scipy's; a search for one target stops early on the same path."""
    from scipy.sparse.csgraph import dijkstra

    from sortie.sim.navigation.graph import NavGraph

    nav = NavGraph.build(build_world("flexible_room", 0), PLANNING)
    graph = nav._closed_adjacency(frozenset(closed))
    assert (graph.nnz < nav.adjacency.nnz) == bool(closed)  # the door takes edges away
    rng = np.random.default_rng(3)
    for source in rng.integers(0, nav.node_count, 4):
        dist, pred = dijkstra(
            graph.scipy(), directed=True, indices=int(source), return_predecessors=True
        )
        full = _search(graph, int(source))
        np.testing.assert_array_equal(full[0], dist)
        np.testing.assert_array_equal(full[1], pred)
        for target in rng.integers(0, nav.node_count, 10):
            part_dist, part_pred, popped = _search(graph, int(source), int(target))
            assert part_dist[target] == dist[target]
            assert popped <= full[2]
            node = int(target)
            while np.isfinite(dist[target]) and node != source:
                assert part_pred[node] == pred[node]
                node = int(pred[node])


@pytest.mark.parametrize("closed", [(), ("door_0",)], ids=["open", "a door closed"])
def test_routes_are_the_same_with_and_without_the_extension(monkeypatch, closed):
    """NavGraph.route gives the same nodes and waypoints whether or not the extension runs.

    The extension searches the graph and tests the straight stretches of string pulling.
    """
    from sortie.sim.navigation.graph import NavGraph

    nav = NavGraph.build(build_world("flexible_room", 2), PLANNING)
    picks = np.random.default_rng(5).integers(0, nav.node_count, 12)
    points = [tuple(nav.positions[i]) for i in picks]
    pairs = list(zip(points, points[1:], strict=False))
    with_it = [nav.route(a, b, closed) for a, b in pairs]
    nav._rows.clear()
    monkeypatch.setattr(kernels, "extension", lambda: None)
    without = [nav.route(a, b, closed) for a, b in pairs]
    assert sum(r is not None and len(r.waypoints) < len(r.nodes) for r in with_it) > 3
    assert with_it == without


def test_search_names_a_source_outside_the_graph():
    """A source that is no node is refused with the range allowed."""
    from scipy.sparse import csr_matrix

    graph = csr_matrix((np.ones(2), ([0, 1], [1, 0])), shape=(2, 2))
    with pytest.raises(ValueError, match=r"source 5 .* 0\.\.1"):
        _search(graph, 5)


def test_edge_rows_leave_a_repeated_pair_to_scipy_which_sums_it():
    """A pair given twice is summed, as scipy sums it, not kept twice."""
    from sortie.sim.navigation.links import _compiled_matrix

    positions = np.array([[0.0, 0.0, 0.0], [3.0, 4.0, 0.0], [0.0, 0.0, 2.0]])
    a, b = np.array([0, 1, 0]), np.array([1, 0, 2])
    matrix = _compiled_matrix(kernels.extension(), a, b, positions)
    assert matrix.scipy().toarray().tolist() == [[0, 10, 2], [10, 0, 0], [2, 0, 0]]


def test_components_are_numbered_as_scipy_numbers_them():
    """Labels equal connected_components(directed=False)'s, on a world and a hand-made graph."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    from sortie.sim.navigation.graph import NavGraph

    nav = NavGraph.build(build_world("tower", 1), PLANNING)
    ours = kernels.components(nav.adjacency)
    theirs = connected_components(nav.adjacency.scipy(), directed=False)
    assert theirs[0] > 1  # a roof or a ledge apart from the floors
    np.testing.assert_array_equal(ours, theirs[1])
    # nodes 0 and 3 joined, 1 and 2 joined, 4 alone: components in the order of their lowest
    pairs = ([0, 3, 1, 2], [3, 0, 2, 1])
    graph = Edges.of(csr_matrix((np.ones(4), pairs), shape=(5, 5)))
    assert kernels.components(graph).tolist() == [0, 1, 1, 0, 2]


def test_edges_among_usable_nodes_are_scipys_rows_of_the_kept_edges():
    """Closing doors keeps the rows scipy would make of the remaining edges, array for array."""
    from scipy.sparse import csr_matrix

    from sortie.sim.navigation.graph import NavGraph

    nav = NavGraph.build(build_world("campus", 0), PLANNING)
    usable = nav.usable(set(nav.doors[:4]))
    assert not usable.all()
    full = nav.adjacency.scipy().tocoo()
    keep = usable[full.row] & usable[full.col]
    n = nav.node_count
    expected = csr_matrix((full.data[keep], (full.row[keep], full.col[keep])), shape=(n, n))
    assert nav.adjacency.among(usable).same_as(Edges.of(expected))
