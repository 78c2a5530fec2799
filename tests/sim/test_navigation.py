import math

import numpy as np
import pytest

from sortie.core.errors import ConfigError
from sortie.sim.assets.structures import floor_slab, sliding_door, wall
from sortie.sim.kit import WorldKit
from sortie.sim.mesh import Mesh, cylinder, slab, stairs, wedge
from sortie.sim.navigation import NavGraph
from sortie.sim.scene import Scene
from sortie.sim.shapes import WALKER

GREY = (150, 150, 150)
RISE, TREAD, FLIGHT = 0.17, 0.3, 18  # a flight climbing 3.06 m over 5.4 m


def _scene(
    pieces: list[tuple[str, Mesh | list[Mesh]]],
    bounds: tuple[float, ...],
    kit: WorldKit | None = None,
) -> Scene:
    kit = kit or WorldKit("test")
    for semantic, parts in pieces:
        kit.add(semantic, parts)
    return kit.scene(bounds)  # type: ignore[arg-type]


def _open_floor(*extra: tuple[str, Mesh | list[Mesh]]) -> Scene:
    return _scene([("floor", floor_slab(-5, -5, 5, 5, 0.0, GREY)), *extra], (-5, -5, 5, 5))


def _two_rooms(starts_open: bool = False) -> Scene:
    """Rooms x<0 and x>0 in a 12 x 6 box, joined only by a 1.2 m doorway with a sliding door."""
    kit = WorldKit("two rooms")
    corners = [(-6, -3), (6, -3), (6, 3), (-6, 3)]
    outer = [
        m
        for a, b in zip(corners, corners[1:] + corners[:1], strict=True)
        for m in wall(a, b, 0.0, 2.5, GREY)
    ]
    middle = wall((0, -3), (0, 3), 0.0, 2.5, GREY, openings=[(3.0, 1.2, 2.1)])
    sliding_door(kit, (0.0, 0.0, 0.0), 90.0, width=1.2, starts_open=starts_open)
    return _scene(
        [("floor", floor_slab(-6, -3, 6, 3, 0.0, GREY)), ("wall", outer), ("wall", middle)],
        (-6, -3, 6, 3),
        kit,
    )


def _stair_scene() -> Scene:
    top = RISE * FLIGHT
    run = TREAD * FLIGHT
    return _scene(
        [
            ("floor", floor_slab(-4, -2, 0, 2, 0.0, GREY)),
            ("stairs", stairs(2.0, TREAD, RISE, FLIGHT)),
            ("floor", floor_slab(run, -2, run + 4, 2, top, GREY, thickness=0.2)),
        ],
        (-4, -2, run + 4, 2),
    )


def _level_change(ramp: Mesh | None, height: float) -> Scene:
    """A floor at x<2 and a solid platform of ``height`` at x>2, with an optional ramp."""
    pieces: list[tuple[str, Mesh | list[Mesh]]] = [
        ("floor", floor_slab(-6, -2, 6, 2, 0.0, GREY)),
        ("platform", slab(2, -2, 6, 2, 0.0, height, GREY)),
    ]
    if ramp is not None:
        pieces.append(("ramp", ramp))
    return _scene(pieces, (-6, -2, 6, 2))


def _distance_to_box(points: np.ndarray, x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    dx = np.maximum(np.maximum(x0 - points[:, 0], points[:, 0] - x1), 0)
    dy = np.maximum(np.maximum(y0 - points[:, 1], points[:, 1] - y1), 0)
    return np.hypot(dx, dy)


def test_path_crosses_an_open_room():
    """Across an empty floor the geodesic equals the straight-line distance."""
    graph = NavGraph.build(_open_floor())
    assert graph.geodesic_distance((-4, 0.3, 0), (4, -0.2, 0)) == pytest.approx(
        math.hypot(8, 0.5), abs=0.01
    )


def test_wall_forces_a_detour_around_its_end():
    """A wall between two points makes the path go round its end, kept a radius away."""
    graph = NavGraph.build(_open_floor(("wall", wall((0, -5), (0, 3), 0.0, 2.5, GREY))))
    # Round the wall's end (x from -0.1 to 0.1 at y = 3), a radius clear of it.
    clear_y = 3.0 + WALKER.radius
    expected = 2 * math.hypot(3 - 0.1, clear_y) + 0.2
    assert graph.geodesic_distance((-3, 0, 0), (3, 0, 0)) == pytest.approx(expected, abs=0.25)


def test_smoothed_path_keeps_clear_of_the_wall():
    """Every point of the smoothed path stays (nearly) a walker's radius from the wall."""
    graph = NavGraph.build(_open_floor(("wall", wall((0, -5), (0, 3), 0.0, 2.5, GREY))))
    path = np.array(graph.shortest_path((-3, 0, 0), (3, 0, 0)))
    along = np.concatenate(
        [
            a + np.linspace(0, 1, 50)[:, None] * (b - a)
            for a, b in zip(path[:-1], path[1:], strict=True)
        ]
    )
    assert _distance_to_box(along, -0.1, -5, 0.1, 3).min() > WALKER.radius - 0.05


def test_stairs_join_two_floors_over_their_walking_length():
    """Floors 3 m apart joined by stairs (rise 0.17, tread 0.3) are linked along the flight."""
    graph = NavGraph.build(_stair_scene())
    run, top = TREAD * FLIGHT, RISE * FLIGHT
    expected = 3.0 + math.hypot(run, top) + 3.0  # floor, flight, floor
    assert graph.geodesic_distance((-3, 0, 0), (run + 3, 0, top)) == pytest.approx(
        expected, abs=0.3
    )


def test_closed_door_cuts_the_only_way_and_opening_restores_it():
    """With the only door closed the rooms are unlinked; opening it links them again."""
    scene = _two_rooms()
    graph = NavGraph.build(scene)
    a, b = (-3, 0, 0), (3, 0, 0)
    assert graph.geodesic_distance(a, b, graph.closed_doors(scene)) == math.inf
    assert not graph.reachable(a, b, graph.closed_doors(scene))
    scene.set_open("door_0", True)
    assert graph.geodesic_distance(a, b, graph.closed_doors(scene)) == pytest.approx(6, abs=0.1)


def test_door_on_every_shortest_path_is_named():
    """The door between the two rooms lies on every shortest path between them."""
    graph = NavGraph.build(_two_rooms())
    assert graph.doors_on_every_shortest_path((-3, 0, 0), (3, 0, 0)) == ("door_0",)
    assert graph.doors_on_every_shortest_path((-3, 0, 0), (-1, 1, 0)) == ()


def test_graph_is_built_with_doors_open_whatever_their_state():
    """A door that starts closed or open gives the same graph."""
    closed, opened = NavGraph.build(_two_rooms(False)), NavGraph.build(_two_rooms(True))
    assert np.array_equal(closed.positions, opened.positions)
    assert len(closed.door_nodes[0]) > 0


def test_ramp_links_two_levels():
    """A 20 degree ramp up to a 1.5 m platform links it to the floor."""
    scene = _level_change(wedge((4, 2, 1.5), (0, 0, 0)), 1.5)
    assert NavGraph.build(scene).reachable((-5, 0, 0), (5, 0, 1.5))


def test_too_steep_ramp_does_not_link_levels():
    """A 45 degree ramp up to the same platform is not walkable."""
    scene = _level_change(wedge((1.5, 2, 1.5), (1.25, 0, 0)), 1.5)
    assert not NavGraph.build(scene).reachable((-5, 0, 0), (5, 0, 1.5))


@pytest.mark.parametrize(("height", "linked"), [(0.3, True), (0.5, False)])
def test_step_is_climbed_only_up_to_the_walker_step(height, linked):
    """A 0.3 m step is climbed and a 0.5 m one is not (the walker steps 0.35 m)."""
    graph = NavGraph.build(_level_change(None, height))
    assert graph.reachable((-5, 0, 0), (5, 0, height)) is linked


@pytest.mark.parametrize(("underside", "walkable"), [(1.6, False), (2.0, True)])
def test_floor_needs_headroom(underside, walkable):
    """Floor under a slab is walkable only with the walker's height (1.8 m) of headroom."""
    scene = _open_floor(("ceiling", slab(-2, -2, 2, 2, underside, underside + 0.2, GREY)))
    graph = NavGraph.build(scene)
    assert (graph.nearest_node((0, 0, 0), tolerance=0.5) is not None) is walkable


def test_no_node_within_a_radius_of_a_wall_face():
    """Every floor node keeps the walker's radius from both faces of a thin wall."""
    graph = NavGraph.build(_open_floor(("wall", wall((-4, 0.5), (4, 0.5), 0.0, 2.5, GREY))))
    floor = graph.positions[graph.positions[:, 2] < 0.1]
    assert _distance_to_box(floor, -4, 0.4, 4, 0.6).min() >= WALKER.radius - 1e-6


def test_thin_pole_blocks_the_nodes_around_it():
    """No node stands closer than about a radius to a 0.1 m pole placed between column centres."""
    graph = NavGraph.build(_open_floor(("pillar", cylinder(0.1, 2.5, (0.5, 0.5, 0.0)))))
    gaps = np.hypot(graph.positions[:, 0] - 0.5, graph.positions[:, 1] - 0.5) - 0.1
    assert gaps.min() > WALKER.radius - 0.05


def test_nearest_node_picks_the_floor_of_the_point():
    """A point on the upper floor snaps to it, and one below on the ground floor."""
    scene = _open_floor(("floor", floor_slab(0, -5, 5, 5, 3.0, GREY, thickness=0.2)))
    graph = NavGraph.build(scene)
    upper, lower = graph.nearest_node((2, 0, 3.0)), graph.nearest_node((2, 0, 0.0))
    assert upper is not None and lower is not None
    assert graph.node_position(upper)[2] == pytest.approx(3.0, abs=1e-4)
    assert graph.node_position(lower)[2] == pytest.approx(0.0, abs=1e-4)


def test_levels_lists_both_floors():
    """The stair scene has a level at 0 m and one at the top of the flight."""
    assert NavGraph.build(_stair_scene()).levels() == (0.0, round(RISE * FLIGHT, 2))


def test_random_node_respects_the_distance_range():
    """A node drawn at 3 to 4 m of graph distance from a source lies in that range."""
    graph = NavGraph.build(_open_floor())
    source = graph.nearest_node((0, 0, 0))
    assert source is not None
    node = graph.random_node(np.random.default_rng(1), source, (3.0, 4.0))
    assert node is not None
    assert 3.0 <= graph.distances_from(source)[node] <= 4.0


def test_random_node_without_source_avoids_the_roof():
    """Without a source, nodes come from the walkable floor, not a larger ceiling on top."""
    scene = _open_floor(
        ("pillar", slab(-1, -1, 1, 1, 0, 2.5, GREY)),
        ("ceiling", slab(-5, -5, 5, 5, 2.5, 2.6, GREY)),
    )
    graph = NavGraph.build(scene)
    node = graph.random_node(np.random.default_rng(0))
    assert node is not None and graph.node_position(node)[2] == pytest.approx(0.0, abs=1e-4)


def test_unknown_door_is_named_with_a_suggestion():
    """Closing a door the graph does not know raises and suggests the nearest name."""
    graph = NavGraph.build(_two_rooms())
    with pytest.raises(ConfigError, match="Did you mean 'door_0'"):
        graph.geodesic_distance((-3, 0, 0), (3, 0, 0), {"door_1"})


def test_same_scene_gives_an_identical_graph():
    """Two builds of one scene give equal arrays, bit for bit."""
    first, second = NavGraph.build(_two_rooms()), NavGraph.build(_two_rooms())
    assert np.array_equal(first.positions, second.positions)
    assert np.array_equal(first.adjacency.indptr, second.adjacency.indptr)
    assert np.array_equal(first.adjacency.indices, second.adjacency.indices)
    assert np.array_equal(first.adjacency.data, second.adjacency.data)
    assert all(
        np.array_equal(a, b) for a, b in zip(first.door_nodes, second.door_nodes, strict=True)
    )


def _one_stretch(corridor, start, end) -> bool:
    """Return whether one stretch is clear, as string pulling tested it before ``clear_each``."""
    from sortie.sim.navigation.smoothing import SAMPLES_PER_CELL, _corner_indices

    grid = corridor.grid
    length = math.hypot(*(end[:2] - start[:2]))
    count = max(2, math.ceil(length * SAMPLES_PER_CELL / grid.cell) + 1)
    points = start + np.linspace(0.0, 1.0, count)[:, None] * (end - start)
    (i0, i1) = _corner_indices((points[:, 0] - grid.x0) / grid.cell)
    (j0, j1) = _corner_indices((points[:, 1] - grid.y0) / grid.cell)
    i, j = np.concatenate([i0, i0, i1, i1]), np.concatenate([j0, j1, j0, j1])
    z = np.tile(points[:, 2], 4)
    if (i < 0).any() or (i >= grid.nx).any() or (j < 0).any() or (j >= grid.ny).any():
        return False
    ids = corridor.slots[j * grid.nx + i]
    near = np.abs(corridor.z[ids] - z[:, None]) <= corridor.step
    return bool(((ids >= 0) & corridor.usable[ids] & near).any(axis=1).all())


@pytest.mark.parametrize("compiled", [True, False], ids=["extension", "numpy"])
def test_stretches_tested_together_answer_as_one_at_a_time(monkeypatch, compiled):
    """``clear_each`` answers as one stretch at a time would, on a real world's graph."""
    from sortie.sim.navigation import kernels
    from sortie.sim.navigation.graph import NO_DOORS
    from sortie.sim.worlds import build_world

    if compiled and kernels.extension() is None:
        pytest.skip("sortie.sim.navigation._grid is not built")
    if not compiled:
        monkeypatch.setattr(kernels, "extension", lambda: None)

    graph = NavGraph.build(build_world("apartment", 3), WALKER)
    corridor = graph._corridor(NO_DOORS)
    rng = np.random.default_rng(0)
    nodes = graph.positions[rng.choice(graph.node_count, 120, replace=False)]
    answers = []
    for start in nodes[:12]:
        ends = nodes[12:]
        each = corridor.clear_each(start, ends)
        one = np.array([_one_stretch(corridor, start, end) for end in ends])
        assert np.array_equal(each, one)
        answers.extend(each)
    assert 0 < sum(answers) < len(answers)  # both answers occur
    outside = np.array([[1e4, 1e4, 0.0]])
    assert not corridor.clear_each(nodes[0], outside)[0]
    assert not _one_stretch(corridor, nodes[0], outside[0])


def test_nodes_within_a_radius_are_those_a_kd_tree_finds_ties_included():
    """``_within`` returns cKDTree's ``query_ball_point`` nodes, also at exactly the radius."""
    from scipy.spatial import cKDTree

    from sortie.sim.worlds import build_world

    graph = NavGraph.build(build_world("flexible_room", 1), WALKER)
    tree = cKDTree(graph.positions)
    rng = np.random.default_rng(4)
    nodes = graph.positions[rng.integers(0, graph.node_count, 300)]
    offsets = rng.integers(-8, 9, (300, 3)) * np.array([0.125, 0.125, 0.25])
    points = np.vstack([nodes + offsets, rng.uniform(-9, 9, (100, 3))])
    ties = 0
    for point in points:
        for radius in (0.5, 1.0):
            expected = sorted(tree.query_ball_point(point, radius))
            assert graph._within(point, radius).tolist() == expected
            gaps = np.linalg.norm(graph.positions[expected] - point, axis=1)
            ties += int((gaps == radius).sum())
    assert ties > 0  # points exactly on the radius were met, and kept alike


def test_nodes_within_a_radius_that_is_not_a_length_are_as_the_tree_gives():
    """An infinite radius takes every node; a negative or NaN one takes none (as cKDTree)."""
    from sortie.sim.worlds import build_world

    graph = NavGraph.build(build_world("flexible_room", 1), WALKER)
    point = graph.positions[0]
    assert graph._within(point, math.inf).tolist() == list(range(graph.node_count))
    assert graph._within(point, -1.0).size == 0 and graph._within(point, math.nan).size == 0
