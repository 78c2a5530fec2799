"""Copies of a scene share their objects and their casters' static part, never their state."""

import numpy as np
import pytest

from sortie.core.errors import ConfigError
from sortie.sim.camera import CameraSpec
from sortie.sim.mesh import box, pose_matrix
from sortie.sim.raycast import RayCaster, StaticPart
from sortie.sim.render import Renderer
from sortie.sim.scene import Dynamics, Scene, SceneObject

from .test_render import _wall_scene

CAMERA = CameraSpec(48, 48, 90)
EYE = (0.0, 0.0, 1.0)


def _frames_equal(one, other) -> bool:
    return all(
        np.array_equal(getattr(one, name), getattr(other, name))
        for name in ("rgb", "depth", "semantic")
    )


def test_a_fresh_copy_shares_objects_and_starts_in_the_built_state():
    """The copy has the very objects, every door as built, and a state of its own."""
    scene = _wall_scene()
    scene.set_open("door_0", True)
    copy = scene.fresh_copy()
    assert copy.objects is scene.objects and copy.pristine and not copy.is_open("door_0")
    copy.set_open("door_0", True)
    scene.set_open("door_0", False)
    assert copy.is_open("door_0") and not scene.is_open("door_0") and not copy.pristine


def test_a_reset_scene_is_pristine_again():
    """Any change of state clears ``pristine``; ``reset_state`` sets it."""
    scene = _wall_scene()
    scene.set_transform("door_0", np.eye(4))
    assert not scene.pristine
    scene.reset_state()
    assert scene.pristine


def test_casters_of_copies_share_the_static_table_and_the_built_dynamic_part():
    """Two casters over copies of a scene in its built state hold the same tables."""
    scene = _wall_scene()
    static = StaticPart(scene)
    one = RayCaster(scene.fresh_copy(), static=static)
    other = RayCaster(scene.fresh_copy(), static=static)
    assert one.static is other.static is static.table and one.table is other.table


def test_a_door_opened_in_one_copy_changes_only_that_copys_frames():
    """The opener renders what a caster of its own renders; the other copy still sees the door."""
    scene = _wall_scene()
    static = StaticPart(scene)
    opener, other = scene.fresh_copy(), scene.fresh_copy()
    opener_view = Renderer(opener, RayCaster(opener, static=static))
    other_view = Renderer(other, RayCaster(other, static=static))
    closed = Renderer(_wall_scene()).render(CAMERA, EYE, 0.0)
    opener.set_open("door_0", True)
    alone = _wall_scene()
    alone.set_open("door_0", True)
    assert _frames_equal(
        opener_view.render(CAMERA, EYE, 0.0), Renderer(alone).render(CAMERA, EYE, 0.0)
    )
    assert _frames_equal(other_view.render(CAMERA, EYE, 0.0), closed)


def test_a_static_part_of_other_objects_is_refused():
    """A caster given the static part of another scene's objects raises, saying what is allowed."""
    static = StaticPart(_wall_scene())
    with pytest.raises(ConfigError, match="other objects.*allowed: one made from this scene"):
        RayCaster(_wall_scene(), static=static)


def _scene_with_a_crate() -> Scene:
    crate = SceneObject(
        "crate_0", "crate", (box((0.5, 0.5, 0.5), (3, 0, 0.25)),), dynamics=Dynamics.PORTABLE
    )
    return Scene([*_wall_scene().objects, crate], (-10, -10, 10, 10))


def test_a_hidden_object_moving_keeps_the_casters_dynamic_part():
    """Moving a hidden (carried) object changes nothing drawn: the caster keeps its tables."""
    scene = _scene_with_a_crate()
    scene.set_hidden("crate_0", True)
    caster = RayCaster(scene)
    kept = caster.table
    scene.set_transform("crate_0", pose_matrix((1.0, 2.0, 0.0)))
    caster.sync()
    assert caster.table is kept


def test_a_shown_object_moving_remakes_the_casters_dynamic_part():
    """Moving a drawn dynamic object remakes the tables, with its triangles where it is now."""
    scene = _scene_with_a_crate()
    caster = RayCaster(scene)
    kept = caster.table
    scene.set_transform("crate_0", pose_matrix((1.0, 2.0, 0.0)))
    caster.sync()
    assert caster.table is not kept
    assert np.array_equal(caster.table.corners[-12:], kept.corners[-12:] + [1.0, 2.0, 0.0])


def test_dynamic_states_are_equal_when_the_drawn_meshes_are():
    """States differ by a drawn object's move or a door, not by a hidden object's move."""
    scene = _scene_with_a_crate()
    built = scene.dynamic_state()
    scene.set_hidden("crate_0", True)
    hidden = scene.dynamic_state()
    scene.set_transform("crate_0", pose_matrix((1.0, 0.0, 0.0)))
    assert scene.dynamic_state() == hidden != built
    scene.set_hidden("crate_0", False)
    moved = scene.dynamic_state()
    scene.set_open("door_0", True)
    assert len({built, moved, scene.dynamic_state()}) == 3
