import math

from sortie.report.maps import Floor, floor_cuts
from sortie.sim.worlds import build_world


def test_a_tower_gets_one_map_per_floor_each_cut_under_the_slab_above():
    """Three floors: each map cuts above its own floor and below the next one's slab."""
    scene = build_world("tower", 0, {"floors": 3})
    cuts = floor_cuts(scene)
    floors = [floor for floor, _ in cuts]
    assert [f.number for f in floors] == [0, 1, 2]
    assert floors[0].low == -math.inf and floors[-1].high == math.inf
    for floor, cut in cuts[:-1]:
        assert cut is not None and floor.high - 0.5 < cut < floor.high
    assert cuts[0][1] == scene.topdown_cut


def test_a_world_of_one_floor_keeps_its_own_cut():
    """A room has no tagged floors: one map, cut where the scene says."""
    assert floor_cuts(build_world("flexible_room", 0, {})) == [(Floor(), None)]


def test_a_walker_on_the_stairs_counts_on_the_floor_it_is_nearest_below():
    """Half a metre under a floor's slab is still the floor below; at the slab, the floor."""
    ground, first = Floor(high=3.7), Floor(3.7, 7.4, 1)
    assert ground.holds(0.0) and ground.holds(3.1) and not ground.holds(3.3)
    assert first.holds(3.3) and first.holds(3.7) and not first.holds(7.0)
