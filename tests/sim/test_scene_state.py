from sortie.sim.scene import Dynamics
from sortie.sim.worlds import build_world


def test_scene_counts_each_object_s_changes_apart():
    """changed_at moves for the object changed and for all at a reset, not for the others."""
    scene = build_world("apartment", 0, {})
    doors = [o.name for o in scene.objects if o.dynamics is Dynamics.OPENABLE]
    assert len(doors) >= 2, "the apartment should have two doors for this test"
    first, second = doors[:2]
    before = scene.changed_at(second)
    scene.set_open(first, not scene.is_open(first))
    assert scene.changed_at(first) == scene.version and scene.changed_at(second) == before
    scene.reset_state()
    assert scene.changed_at(first) == scene.changed_at(second) == scene.version


def test_a_fresh_copy_starts_with_no_change():
    """A copy of a changed scene has every object unchanged (version 0), as built."""
    scene = build_world("apartment", 0, {})
    door = next(o.name for o in scene.objects if o.dynamics is Dynamics.OPENABLE)
    scene.set_open(door, not scene.is_open(door))
    assert scene.fresh_copy().changed_at(door) == 0
