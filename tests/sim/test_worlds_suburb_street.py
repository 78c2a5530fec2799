import numpy as np
import pytest

from sortie.core.errors import ParameterError
from sortie.sim.semantics import SEMANTIC_CLASSES
from sortie.sim.worlds import build_world

WORLDS = ("suburb", "street")
SMALL = {"size": 40}


@pytest.mark.parametrize("name", WORLDS)
def test_same_seed_builds_the_same_world(name: str):
    """Building twice from one seed gives the same digest."""
    assert build_world(name, 4, SMALL).digest() == build_world(name, 4, SMALL).digest()


@pytest.mark.parametrize("name", WORLDS)
def test_different_seeds_build_different_worlds(name: str):
    """Two seeds give two different worlds."""
    assert build_world(name, 1, SMALL).digest() != build_world(name, 2, SMALL).digest()


@pytest.mark.parametrize("name", WORLDS)
def test_every_object_has_a_known_semantic_class(name: str):
    """Every object's semantic class is in the fixed class table."""
    scene = build_world(name, 0, SMALL)
    assert {o.semantic for o in scene.objects} <= set(SEMANTIC_CLASSES[1:])


@pytest.mark.parametrize("name", WORLDS)
def test_size_outside_its_range_is_refused(name: str):
    """A size of 5 m is refused with an error naming the allowed range."""
    with pytest.raises(ParameterError, match="40..200"):
        build_world(name, 0, {"size": 5})


@pytest.mark.parametrize("name", WORLDS)
def test_everything_lies_inside_the_bounds(name: str):
    """No object reaches outside the world's bounds rectangle."""
    scene = build_world(name, 0, SMALL)
    xmin, ymin, xmax, ymax = scene.bounds
    for obj in scene.objects:
        low, high = obj.bounds()
        assert low[0] >= xmin - 1e-4 and low[1] >= ymin - 1e-4, obj.name
        assert high[0] <= xmax + 1e-4 and high[1] <= ymax + 1e-4, obj.name


@pytest.mark.parametrize("name", WORLDS)
def test_ground_tops_lie_at_zero(name: str):
    """The ground, road and sidewalk pieces have their top surface at exactly z = 0."""
    scene = build_world(name, 0, SMALL)
    ground = [
        o
        for o in scene.objects
        if o.semantic in ("ground", "grass", "road", "sidewalk") and "marking" not in o.attributes
    ]
    assert ground and all(float(o.bounds()[1][2]) == 0.0 for o in ground)


@pytest.mark.parametrize("name", WORLDS)
def test_a_boundary_closes_all_four_sides(name: str):
    """Boundary walls or fences run along all four edges of the world."""
    scene = build_world(name, 0, SMALL)
    half = scene.bounds[2]
    edges = set()
    for obj in scene.objects:
        if obj.attributes.get("kind") == "boundary":
            low, high = obj.bounds()
            middle = (low + high) / 2 / half
            edges.add((round(float(middle[0])), round(float(middle[1]))))
    assert edges == {(0, -1), (1, 0), (0, 1), (-1, 0)}


def test_suburb_house_numbers_are_unique_along_a_street():
    """No two houses on one street share a number."""
    scene = build_world("suburb", 0, {"size": 120})
    keys = [(o.attributes["street"], o.attributes["number"]) for o in scene.of_class("house")]
    assert len(keys) == len(set(keys)) > 10


def test_street_signs_name_distinct_shops():
    """Every shop has one sign and no two signs read the same."""
    scene = build_world("street", 0, {"size": 80})
    texts = [o.attributes["text"] for o in scene.of_class("sign")]
    assert len(texts) == len(scene.of_class("shop")) == len(set(texts)) > 5


def test_suburb_scatters_cars_trees_and_fences():
    """A cluttered suburb holds parked cars, trees and fences."""
    counts = {
        c: len(build_world("suburb", 0, {"size": 80, "clutter": 1.0}).of_class(c))
        for c in ("car", "tree", "fence", "house")
    }
    assert min(counts.values()) > 3, counts


def test_walker_eye_view_of_a_street_shows_sky_and_ground():
    """A standing view along a street sees sky above and something below the horizon."""
    from sortie.core.observation import Sensor
    from sortie.sim.camera import CameraSpec
    from sortie.sim.render import Renderer

    scene = build_world("street", 0, SMALL)
    frames = Renderer(scene).render(
        CameraSpec(32, 32, 90), (-15.0, -5.0, 1.6), 0.0, sensors={Sensor.SEMANTIC}
    )
    assert frames.semantic is not None
    assert (frames.semantic[0] == 0).any() and (frames.semantic[-1] > 0).all()
    assert np.unique(frames.semantic).size > 3
