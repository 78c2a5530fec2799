import numpy as np
import pytest

from sortie.core.observation import Sensor
from sortie.sim.assets.buildings import add_ground, add_shop, shop_names
from sortie.sim.assets.people import add_person
from sortie.sim.assets.props import Footprints
from sortie.sim.assets.vegetation import TREE_KINDS, add_tree
from sortie.sim.assets.vehicles import add_car, plate_texture
from sortie.sim.camera import CameraSpec
from sortie.sim.kit import WorldKit
from sortie.sim.render import Renderer
from sortie.sim.scene import Dynamics, Scene


def _pixels_of(kit: WorldKit, name: str, eye: tuple[float, float, float], yaw: float) -> int:
    add_ground(kit, (-20, -20, 20, 20), [])
    scene = kit.scene((-20, -20, 20, 20))
    frames = Renderer(scene).render(CameraSpec(128, 128, 90), eye, yaw, sensors={Sensor.SEMANTIC})
    assert frames.semantic is not None
    return int((frames.semantic == scene.id_of(name)).sum())


def test_standing_person_is_visible_from_five_metres():
    """A standing person 5 m ahead covers a recognisable patch of a 128x128 image."""
    kit = WorldKit("test")
    person = add_person(kit, np.random.default_rng(0), (5.0, 0.0, 0.0), 180.0)
    assert _pixels_of(kit, person.name, (0.0, 0.0, 1.6), 0.0) > 60


def test_car_is_visible_from_five_metres():
    """A car seen side-on from 5 m covers a large patch of a 128x128 image."""
    kit = WorldKit("test")
    car = add_car(kit, np.random.default_rng(0), (0.0, 5.0), 0.0)
    assert _pixels_of(kit, car.name, (0.0, 0.0, 1.6), 90.0) > 400


def test_licence_plate_texture_shows_the_plate_attribute():
    """The car's textured parts are the plate image drawn from its ``plate`` attribute."""
    car = add_car(WorldKit("test"), np.random.default_rng(3), (0.0, 0.0), 0.0, plate="KX 472")
    textures = [p.texture for p in car.parts if p.texture is not None]
    assert car.attributes["plate"] == "KX 472" and len(textures) == 2
    assert all(np.array_equal(t, plate_texture("KX 472")) for t in textures)


def test_lying_person_rests_on_the_ground():
    """A lying person is portable, lies flat and neither sinks below nor floats above z = 0."""
    person = add_person(WorldKit("t"), np.random.default_rng(1), (2.0, 3.0, 0.0), 45.0, "lying")
    low, high = person.bounds()
    assert person.dynamics is Dynamics.PORTABLE and person.attributes["posture"] == "lying"
    assert -0.02 < low[2] < 0.05 and high[2] < 0.5


@pytest.mark.parametrize("kind", TREE_KINDS)
def test_trees_stay_under_the_triangle_budget(kind: str):
    """Every tree kind is built from fewer than 200 triangles and records its kind."""
    tree = add_tree(WorldKit("test"), np.random.default_rng(0), (0.0, 0.0), kind)
    assert sum(p.triangle_count for p in tree.parts) < 200 and tree.attributes["kind"] == kind


def test_car_stays_under_the_triangle_budget():
    """A car is built from fewer than 150 triangles."""
    car = add_car(WorldKit("test"), np.random.default_rng(0), (0.0, 0.0))
    assert sum(p.triangle_count for p in car.parts) < 150


def test_shop_sign_names_its_shop():
    """A shop adds a separate sign whose text is the shop's name in capitals."""
    kit = WorldKit("test")
    name, kind = shop_names(np.random.default_rng(0), 1)[0]
    shop = add_shop(kit, np.random.default_rng(0), (0.0, 0.0), 0.0, 8.0, 8.0, name, kind)
    sign = kit.objects[-1]
    assert sign.semantic == "sign" and sign.attributes["shop"] == shop.name
    assert sign.attributes["text"] == name.upper()


def test_shop_names_are_distinct():
    """Asking for more names than combinations still gives distinct names."""
    names = [n for n, _ in shop_names(np.random.default_rng(0), 200)]
    assert len(set(names)) == 200


def test_ground_tiles_cover_the_bounds_once_with_tops_at_zero():
    """Ground pieces tile the bounds without overlap and their tops lie at z = 0."""
    kit = WorldKit("test")
    add_ground(kit, (-10, -10, 10, 10), [("road", -10, -2, 10, 2), ("sidewalk", -3, -10, 3, 10)])
    scene = Scene(kit.objects, (-10, -10, 10, 10))
    area = 0.0
    for obj in scene.objects:
        tops = [t for p in obj.parts for t in p.triangles() if np.allclose(t[:, 2], 0.0)]
        area += sum(0.5 * np.linalg.norm(np.cross(t[1] - t[0], t[2] - t[0])) for t in tops)
        assert float(obj.bounds()[1][2]) == 0.0
    assert area == pytest.approx(400.0)


def test_footprints_refuse_a_rectangle_too_close():
    """A rectangle closer than the corridor gap to a taken one does not fit; a farther one does."""
    taken = Footprints()
    taken.reserve(0.0, 0.0, 1.0, 1.0)
    assert not taken.fits(1.5, 0.0, 2.5, 1.0) and taken.fits(2.5, 0.0, 3.5, 1.0)
