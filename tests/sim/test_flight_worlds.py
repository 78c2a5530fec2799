"""The outdoor flight worlds: size, determinism, reportable objects, routes, a drone's view."""

from functools import cache

import numpy as np
import pytest

from sortie.core.errors import ParameterError
from sortie.core.observation import Sensor
from sortie.core.pose import Pose
from sortie.sim.bodies import Multirotor
from sortie.sim.camera import CameraSpec
from sortie.sim.raycast import RayCaster
from sortie.sim.render import Renderer
from sortie.sim.scene import Scene
from sortie.sim.semantics import class_id
from sortie.sim.worlds import FLIGHT_WORLDS, build_world
from sortie.sim.worlds.aerial import viewing_pose

NAMES = tuple(FLIGHT_WORLDS)
PROMISED = {
    "neighborhood": {
        "car",
        "house",
        "person",
        "statue",
        "solar_panel",
        "pylon",
        "water_tank",
        "landing_pad",
        "crate",
        "building",
        "sign",
        "fence",
    },
    "city": {
        "car",
        "building",
        "sign",
        "person",
        "statue",
        "solar_panel",
        "water_tank",
        "landing_pad",
        "crate",
        "fence",
    },
    "forest": {
        "car",
        "house",
        "animal",
        "person",
        "pylon",
        "water_tank",
        "landing_pad",
        "crate",
        "solar_panel",
        "water",
        "fence",
    },
    "savanna": {
        "car",
        "house",
        "animal",
        "person",
        "pylon",
        "water_tank",
        "landing_pad",
        "crate",
        "solar_panel",
        "water",
        "fence",
    },
    "airsim_nh": {
        "car",
        "house",
        "person",
        "statue",
        "pylon",
        "water_tank",
        "landing_pad",
        "fence",
    },
}
KEYS = {
    "car": {"color", "plate", "place"},
    "house": {"number", "street", "color"},
    "building": {"number", "kind", "color", "text"},
    "sign": {"text", "color"},
    "statue": {"kind", "color", "text"},
    "animal": {"species", "color", "herd"},
    "solar_panel": {"kind", "condition", "panels"},
    "pylon": {"kind", "line"},
    "water_tank": {"kind", "text", "color"},
    "landing_pad": {"kind", "text"},
    "person": {"top_color", "place"},
}


@cache
def world(name: str, seed: int = 0) -> Scene:
    """Return a flight world, built once per test session."""
    return build_world(name, seed, FLIGHT_WORLDS[name])


@pytest.mark.parametrize("name", NAMES)
def test_is_at_least_300_m_on_each_side(name):
    """Each flight world spans at least 300 m along x and along y."""
    xmin, ymin, xmax, ymax = world(name).bounds
    assert xmax - xmin >= 300.0 and ymax - ymin >= 300.0


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_world_other_seed_other_world(name):
    """The same seed gives the same digest, another seed a different one."""
    again = build_world(name, 0, FLIGHT_WORLDS[name])
    assert again.digest() == world(name).digest()
    assert world(name, 1).digest() != world(name).digest()


@pytest.mark.parametrize("name", NAMES)
def test_holds_every_promised_kind_with_its_attributes(name):
    """Each promised class is present, and its reportable objects carry the keys missions use."""
    scene = world(name)
    assert PROMISED[name] <= {o.semantic for o in scene.objects}
    for obj in scene.objects:
        keys = KEYS.get(obj.semantic, set())
        if obj.semantic == "pylon" and obj.attributes.get("kind") == "pylon":
            keys = keys | {"number"}
        assert keys <= set(obj.attributes), obj.name


@pytest.mark.parametrize("name", NAMES)
def test_plates_are_unique_and_numbers_present(name):
    """No two cars share a plate; every house and building has a number."""
    scene = world(name)
    plates = [o.attributes["plate"] for o in scene.of_class("car")]
    assert plates and len(set(plates)) == len(plates)
    numbered = scene.of_class("house") + scene.of_class("building")
    assert numbered and all(int(o.attributes["number"]) > 0 for o in numbered)


def test_animals_name_their_species():
    """The savanna holds all four big species; the forest holds deer."""
    species = {str(o.attributes["species"]) for o in world("savanna").of_class("animal")}
    assert species == {"elephant", "rhino", "zebra", "giraffe"}
    assert {o.attributes["species"] for o in world("forest").of_class("animal")} == {"deer"}


@pytest.mark.parametrize("name", NAMES)
def test_routes_stay_inside_and_are_100_to_600_m_long(name):
    """Every world has several routes of at least two points, inside the bounds, 100-600 m."""
    scene = world(name)
    xmin, ymin, xmax, ymax = scene.bounds
    assert len(scene.routes) >= 4
    for route_name, points in scene.routes.items():
        p = np.asarray(points)
        assert len(p) >= 2, route_name
        assert (p[:, 0] >= xmin).all() and (p[:, 0] <= xmax).all(), route_name
        assert (p[:, 1] >= ymin).all() and (p[:, 1] <= ymax).all(), route_name
        length = float(np.hypot(*np.diff(p, axis=0).T).sum())
        assert 100.0 <= length <= 600.0, (route_name, length)


def test_ground_worlds_have_no_routes():
    """A world built before routes existed has none, and its digest ignores them."""
    assert build_world("suburb", 0, {"size": 40}).routes == {}


@pytest.mark.parametrize("name", ["neighborhood", "city", "airsim_nh"])
def test_a_drone_30_m_up_sees_the_car_it_looks_at(name):
    """From 30 m up with the camera at -45 degrees, the car looked at is in the image centre."""
    scene = world(name)
    car = min(scene.of_class("car"), key=lambda o: float(np.hypot(*o.center()[:2])))
    low, high = car.bounds()
    along = 0.0 if high[0] - low[0] > high[1] - low[1] else 90.0  # look down the street
    pose = viewing_pose(car, 30.0, along)
    drone = Multirotor(RayCaster(scene))
    drone.place(pose)
    frames = Renderer(scene, drone.caster).render(
        CameraSpec(256, 256, 90.0, -45.0), pose.position(), pose.yaw, None, {Sensor.SEMANTIC}
    )
    assert frames.semantic is not None
    centre = frames.semantic[116:140, 116:140]
    assert (centre == scene.id_of(car.name)).sum() >= 10  # the car, ~13 x 6 pixels from 42 m
    assert class_id("car") in scene.class_ids[centre]


def test_forest_flight_preset_needs_its_own_extent():
    """The flight forest's extent is validated with its allowed range."""
    with pytest.raises(ParameterError, match="300..600"):
        build_world("forest", 0, {"preset": "flight", "extent": 100})
    with pytest.raises(ParameterError, match="ground, flight"):
        build_world("forest", 0, {"preset": "air"})


def test_a_drone_can_start_above_every_flight_world():
    """A multirotor can be placed 30 m above the middle of each world."""
    for name in NAMES:
        Multirotor(RayCaster(world(name))).place(Pose(0.0, 0.0, 40.0, 0.0))
