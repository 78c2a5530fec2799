import math
from collections import Counter

import pytest
from shapely.geometry import LineString

from sortie.backends.embedded import EmbeddedBackend
from sortie.core.errors import ConfigError, UnknownNameError
from sortie.core.records_io import read_suite, write_suite
from sortie.generation.aerial import generate_aerial, generate_mission
from sortie.generation.aerial_checks import MIN_PIXELS, AerialValidator
from sortie.generation.aerial_routes import STRAIGHT_STEPS
from sortie.generation.aerial_suites import generate_aerial_suite
from sortie.generation.aerial_tasks import Rejected, car_subject
from sortie.generation.request import GenerateRequest
from sortie.generation.suites import build_suite, committed_bytes
from sortie.missions.aerial.spec import CAMERA as AERIAL_CAMERA
from sortie.missions.aerial.spec import aerial_data
from sortie.missions.loading import load_suite
from sortie.sim.scene import SceneObject
from sortie.sim.worlds import FLIGHT_WORLDS, build_world

# Under pytest -n one process runs this module: its fixture (the smoke suite) is made once.
pytestmark = pytest.mark.xdist_group(__name__)


@pytest.fixture(scope="module")
def smoke():
    """The aerial smoke suite, regenerated (one mission per single type per flight world)."""
    return build_suite("aerial-smoke-v1")


@pytest.fixture(scope="module")
def validator():
    """One validator (its backend keeps the last world) for the bad-input tests."""
    return AerialValidator()


def _scene(spec):
    return build_world(spec.world.builder, spec.world.seed, spec.world.params)


def test_smoke_suite_regenerates_byte_for_byte(smoke, tmp_path):
    """Regenerating aerial-smoke-v1 reproduces the committed file exactly."""
    path = tmp_path / "smoke.jsonl"
    write_suite(path, *smoke)
    assert path.read_bytes() == committed_bytes("aerial-smoke-v1")


def test_smoke_covers_every_single_type_in_every_flight_world(smoke):
    """One mission per (type, world): 4 types x 5 worlds, each world with its flight params."""
    pairs = Counter((spec.level, spec.world.builder) for spec in smoke[1])
    assert len(pairs) == 20 and set(pairs.values()) == {1}
    assert all(spec.world.params == FLIGHT_WORLDS[spec.world.builder] for spec in smoke[1])


def test_the_target_is_centred_and_visible_from_the_goal(smoke):
    """At each non-patrol goal the 256² semantic image shows the target over MIN_PIXELS."""
    backend = EmbeddedBackend(
        body="multirotor", sensors=("semantic",), camera=AERIAL_CAMERA, visible_pixels=MIN_PIXELS
    )
    for spec in (s for s in smoke[1] if s.level != "patrol"):
        goal = aerial_data(spec).goal
        backend.reset(spec.model_copy(update={"start": goal}), 0)
        assert backend.visible(spec.targets["target"]), spec.episode_id


def test_starts_are_40_to_150_m_away_and_d_max_is_a_quarter(smoke):
    """Start-to-goal distance lies in 40-150 m and d_max is a quarter of it."""
    for spec in (s for s in smoke[1] if s.level != "patrol"):
        data = aerial_data(spec)
        distance = math.dist(spec.start.position(), data.goal.position())
        assert 40.0 <= distance <= 150.0, spec.episode_id
        assert data.max_move == pytest.approx(distance / 4, abs=1e-3)


def test_expected_answers_are_the_targets_own_attributes(smoke):
    """A reporting answer is one of the target's attribute values, or a count."""
    for spec in (s for s in smoke[1] if s.level == "reporting"):
        data = aerial_data(spec)
        values = {str(v) for v in _scene(spec)[data.target].attributes.values()}
        assert data.answer in values or data.answer_kind == "number", spec.episode_id


def test_manipulations_name_their_task_action(smoke):
    """A manipulation carries land, drop_payload or collect_sample and no answer."""
    for spec in (s for s in smoke[1] if s.level == "manipulation"):
        data = aerial_data(spec)
        assert data.task_action in ("land", "drop_payload", "collect_sample")
        assert data.answer is None


def test_patrol_reference_is_the_flown_route_at_20_to_30_m(smoke):
    """A patrol starts on its reference path, flies at 20-30 m, ends at the goal."""
    for spec in (s for s in smoke[1] if s.level == "patrol"):
        data = aerial_data(spec)
        assert tuple(data.patrol[0]) == spec.start.position()
        assert tuple(data.patrol[-1]) == data.goal.position()
        assert all(20.0 <= p[2] <= 30.0 for p in data.patrol), spec.episode_id
        assert data.step_budget == 50 and data.max_move > 0
        assert LineString([p[:2] for p in data.patrol]).length / STRAIGHT_STEPS < 30


def test_same_seed_gives_the_same_file(tmp_path):
    """Two generations from the same seed write identical bytes."""
    for name in ("a", "b"):
        request = GenerateRequest(
            types="manipulation", world="savanna", count=2, seed=5, out=tmp_path / name / "x.jsonl"
        )
        generate_aerial_suite(request, lambda text: None)
    assert (tmp_path / "a" / "x.jsonl").read_bytes() == (tmp_path / "b" / "x.jsonl").read_bytes()
    assert len(read_suite(tmp_path / "a" / "x.jsonl").episodes) == 2


def test_different_seeds_give_different_missions(validator):
    """Another seed draws another mission."""
    one, two = (
        generate_aerial("reporting", "savanna", 1, seed, "s", validator)[0] for seed in (1, 2)
    )
    assert one.mission != two.mission


def test_two_tags_make_one_mission_of_both_types(validator):
    """A reporting+inspection mission carries both tags, a goal and an answer."""
    spec = generate_mission("reporting+inspection", "neighborhood", 3, 0, "x/0", validator)
    data = aerial_data(spec)
    assert spec.level == "reporting+inspection" and data.answer and len(data.types) == 2


def test_a_template_about_something_absent_is_refused(validator):
    """Counting animals in the city fails at once, naming the template and what is missing."""
    with pytest.raises(ConfigError, match="'herd_count' is about a animal, and world 'city'"):
        generate_mission("reporting", "city", 0, 0, "x/0", validator, template="herd_count")


def test_a_mission_about_an_absent_object_is_refused(validator, smoke):
    """A hand-edited mission whose target is not in the world fails naming the object."""
    spec = next(s for s in smoke[1] if s.level == "reporting")
    bad = spec.model_copy(
        update={
            "targets": {"target": "car_9999"},
            "mission": {**spec.mission, "target": "car_9999"},
        }
    )
    with pytest.raises(ConfigError, match="objects absent from the world: car_9999"):
        validator.check(bad)


def test_a_goal_inside_a_building_is_refused(validator, smoke):
    """A goal in the middle of a house fails naming the house."""
    spec = next(s for s in smoke[1] if s.world.builder == "neighborhood" and s.level != "patrol")
    house = _scene(spec).of_class("house")[0]
    x, y, z = (float(v) for v in house.center())
    bad = spec.model_copy(update={"mission": {**spec.mission, "goal": [x, y, z, 0.0]}})
    with pytest.raises(ConfigError, match=f"pose not free: .*'{house.name}'"):
        validator.check(bad)


def test_a_patrol_of_one_point_is_refused(validator, smoke):
    """A patrol whose reference path has one point fails with the count."""
    spec = next(s for s in smoke[1] if s.level == "patrol")
    bad = spec.model_copy(update={"mission": {**spec.mission, "patrol": [[0.0, 0.0, 25.0]]}})
    with pytest.raises(ConfigError, match="at least 2 points, got 1"):
        validator.check(bad)


def test_a_missing_route_is_refused(validator):
    """A patrol along a route the world does not have names the routes it has."""
    with pytest.raises(ConfigError, match="no route 'canal'.*available: .*power_line"):
        generate_mission("patrol", "savanna", 0, 0, "x/0", validator, template="canal")


def test_committed_missions_pass_the_boundary_check(validator, smoke):
    """Every smoke mission passes the checks a hand-written mission must pass."""
    for spec in smoke[1][:4]:
        validator.check(spec)


def test_a_car_is_named_by_colour_only_when_the_colour_is_unique():
    """Two red cars on a street: neither can be named 'the red car on it'; the blue one can."""
    cars = [
        SceneObject(f"car_{i}", "car", (), {"color": c, "place": "Oak Street"})
        for i, c in enumerate(("red", "red", "blue"))
    ]
    assert car_subject(cars[2], cars, with_colour=True) == "the blue car parked on Oak Street"
    with pytest.raises(Rejected, match="no unique description"):
        car_subject(cars[0], cars, with_colour=True)


@pytest.mark.parametrize(
    ("types", "message"),
    [
        ("reporting+patrol+inspection", "unknown mission type"),
        ("survey", "allowed: reporting, inspection"),
    ],
)
def test_unknown_types_are_refused_with_the_allowed_ones(types, message):
    """An unknown type or combination fails naming the allowed ones."""
    with pytest.raises(ConfigError, match=message):
        generate_mission(types, "city", 0, 0, "x/0")


def test_a_ground_world_is_refused_with_a_suggestion():
    """A misspelt or ground world fails naming the flight worlds."""
    with pytest.raises(ConfigError, match="Did you mean 'savanna'"):
        generate_mission("patrol", "savana", 0, 0, "x/0")


def test_generate_aerial_needs_a_type():
    """`generate aerial` without --type names the allowed types."""
    with pytest.raises(ConfigError, match="--type is required"):
        generate_aerial_suite(GenerateRequest(), lambda text: None)


def test_committed_aerial_suites_have_the_paper_mix():
    """aerial-v1 holds 120 missions with 45/32/16/57 type tags; test 30; smoke 20."""
    sizes = {"aerial-v1": 120, "aerial-test-v1": 30, "aerial-smoke-v1": 20}
    for name, size in sizes.items():
        suite = load_suite(name)
        assert len(suite.episodes) == size == len({e.episode_id for e in suite.episodes})
    tags = Counter(t for e in load_suite("aerial-v1").episodes for t in e.level.split("+"))
    assert tags == {"reporting": 45, "inspection": 32, "manipulation": 16, "patrol": 57}


def test_unknown_aerial_suite_gets_a_suggestion():
    """A misspelt aerial suite name fails with a suggestion."""
    with pytest.raises(UnknownNameError, match="Did you mean 'aerial-v1'"):
        load_suite("aerial-v2")
