"""A rescue brief holds a goal image for every stage: casualty, stretcher, ambulance."""

import numpy as np
import pytest

from sortie import suites
from sortie.backends.embedded import EmbeddedBackend
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ParameterError
from sortie.generation.rescue_views import Views
from sortie.missions.rescue.env import RescueEnv
from sortie.missions.rescue.family import RESCUE
from sortie.missions.rescue.goals import GoalView, approach, goal_of_stage, goal_views
from sortie.missions.rescue.mission import RescueMission
from sortie.missions.rescue.settings import GoalImages, RescueSettings
from sortie.missions.rescue.spec import rescue_data
from sortie.sim.camera import CameraSpec
from sortie.sim.placements import with_placements
from sortie.sim.worlds.base import build_world
from sortie.testing.episodes import room_rescue

SMALL = CameraSpec(48, 32, 90.0)
SMOKE = suites.read("rescue-smoke-v2").episodes


def _outdoor() -> EpisodeSpec:
    """Return a smoke episode on a street: it has an ambulance and an expert path."""
    return next(e for e in SMOKE if e.world.builder == "street")


def _brief_images(spec: EpisodeSpec, camera: CameraSpec = SMALL, **settings: str):
    mission = RescueMission(
        EmbeddedBackend(body="walker", sensors=(), camera=camera),
        settings=RescueSettings.model_validate(settings),
    )
    mission.reset(spec, seed=0)
    assert mission.brief is not None
    return mission.brief.images


def _pixels(spec: EpisodeSpec, role: str, view: GoalView) -> int:
    """Return how many pixels of ``role``'s object the agent's camera sees from ``view``."""
    scene = with_placements(
        build_world(spec.world.builder, spec.world.seed, spec.world.params),
        spec.placements,
        spec.world.seed,
    )
    views = Views(scene, spec.targets[role])
    return views.pixels((view.x, view.y, view.z), view.yaw, view.pitch)


def _placed(spec: EpisodeSpec):
    """Return an object's base point as the episode places it."""
    where = {p.name: p.pose.position() for p in spec.placements}
    return lambda name: where[name]


def test_an_outdoor_brief_holds_the_reference_the_stretcher_and_the_ambulance():
    """By default an episode with an ambulance gives three goal images."""
    assert set(_brief_images(_outdoor())) == {"reference", "stretcher", "ambulance"}


def test_a_room_brief_has_no_ambulance_image():
    """A room has no ambulance, so its brief gives the reference and the stretcher only."""
    assert set(_brief_images(room_rescue())) == {"reference", "stretcher"}


def test_rescuebench_setting_gives_only_the_reference():
    """``goal_images=rescuebench`` gives what RescueBench gives: the casualty's reference."""
    default = _brief_images(_outdoor())
    images = _brief_images(_outdoor(), goal_images="rescuebench")
    assert set(images) == {"reference"}
    assert np.array_equal(images["reference"], default["reference"])


@pytest.mark.parametrize("spec", SMOKE, ids=[e.episode_id for e in SMOKE])
def test_every_goal_view_of_the_smoke_suite_shows_its_object(spec):
    """The stretcher's and the ambulance's views each show that object, not just the scene."""
    backend = EmbeddedBackend(body="walker", sensors=())
    backend.reset(spec, seed=0)
    doors = [backend.position_of(door) for door in backend.doors()]
    views = goal_views(spec, rescue_data(spec), GoalImages.EVERY_STAGE, backend.position_of, doors)
    shown = {
        role: _pixels(spec, role, views[role])
        for role in ("stretcher", "ambulance")
        if role in views
    }
    assert shown and min(shown.values()) >= 100, shown


def test_the_stretcher_view_without_an_expert_path_is_taken_from_the_start():
    """An episode with no expert path gets its stretcher view from the start, and it shows it."""
    spec = room_rescue()
    view = goal_views(spec, rescue_data(spec), GoalImages.EVERY_STAGE, _placed(spec))["stretcher"]
    assert (view.x, view.y, view.z) == (spec.start.x, spec.start.y, spec.start.z + 1.6)
    assert _pixels(spec, "stretcher", view) >= 60


def test_goal_images_are_the_same_for_the_same_episode():
    """Two missions reset on one episode give identical goal images (with other seeds too)."""
    first, second = _brief_images(_outdoor()), _brief_images(_outdoor())
    assert first.keys() == second.keys()
    assert all(np.array_equal(first[name], second[name]) for name in first)


def test_the_three_goal_images_differ():
    """Each goal image is its own picture, not the reference repeated."""
    images = _brief_images(_outdoor())
    reference, stretcher, ambulance = (images[n] for n in ("reference", "stretcher", "ambulance"))
    assert not np.array_equal(reference, stretcher)
    assert not np.array_equal(stretcher, ambulance)


def test_goal_images_use_the_run_camera():
    """Every goal image has the size of the camera the backend renders with."""
    images = _brief_images(_outdoor(), camera=CameraSpec(40, 24, 110.0))
    assert {image.shape for image in images.values()} == {(24, 40, 3)}


def test_each_stage_names_the_image_of_its_goal():
    """S1 and S2 show the casualty, S3 the ambulance (else the stretcher), S4 the stretcher."""
    outdoors, room = {"reference", "stretcher", "ambulance"}, {"reference", "stretcher"}
    assert [goal_of_stage(s, outdoors) for s in ("S1", "S2", "S3", "S4")] == [
        "reference",
        "reference",
        "ambulance",
        "stretcher",
    ]
    assert goal_of_stage("S3", room) == "stretcher"


def test_the_default_setting_is_left_out_of_a_header():
    """At its default ``goal_images`` is not written, so default headers stay as they were."""
    assert RescueSettings().model_dump(mode="json") == {"triggers": "assisted"}
    chosen = RescueSettings(goal_images=GoalImages.RESCUEBENCH).model_dump(mode="json")
    assert chosen["goal_images"] == "rescuebench"


def test_an_unknown_goal_images_value_is_refused_with_the_allowed_ones():
    """``-F goal_images=all`` is refused naming the setting, the value and both choices."""
    with pytest.raises(ParameterError) as error:
        RESCUE.parse_settings({"goal_images": "all"})
    message = str(error.value)
    assert "goal_images='all'" in message
    assert "'every-stage'" in message and "'rescuebench'" in message


def test_the_env_exposes_every_goal_image_of_the_brief():
    """The env's observation holds the brief's three goal images, each within its space."""
    env = RescueEnv([_outdoor()], camera=SMALL, sensors=())
    observation, _ = env.reset(seed=0)
    brief = env.mission.brief
    assert brief is not None
    for name in ("reference", "stretcher", "ambulance"):
        assert np.array_equal(observation[name], brief.images[name])
        assert env.observation_space[name].contains(observation[name])


def test_the_rescuebench_env_has_only_the_reference():
    """With ``goal_images="rescuebench"`` the env's spaces hold the reference image only."""
    env = RescueEnv([room_rescue()], camera=SMALL, sensors=(), goal_images="rescuebench")
    assert "reference" in env.observation_space.spaces
    assert not {"stretcher", "ambulance"} & set(env.observation_space.spaces)


def test_a_room_env_gives_a_black_ambulance():
    """An episode without an ambulance fills the env's ambulance entry with black."""
    env = RescueEnv([room_rescue()], camera=SMALL, sensors=())
    observation, _ = env.reset(seed=0)
    assert observation["ambulance"].shape == (32, 48, 3)
    assert not observation["ambulance"].any()


PATH_IN = [[float(x), 0.0, 0.0] for x in range(10, -1, -1)]
"""An expert walking along x from 10 m to 0 m, where the object stands."""


def test_the_view_is_taken_where_the_expert_was_about_that_far_away():
    """Walking the path back from its end, the first position 3 m away or more is chosen."""
    assert approach(PATH_IN, (0.0, 0.0, 0.0), (3.0, 5.0)) == (3.0, 0.0, 0.0)


def test_the_view_is_not_taken_through_a_closed_door():
    """A door between 2 m and 3 m from the object keeps the view on the object's side of it."""
    door = (2.5, 0.8, 0.0)
    assert approach(PATH_IN, (0.0, 0.0, 0.0), (3.0, 5.0), [door]) == (2.0, 0.0, 0.0)


def test_the_view_is_not_taken_from_another_floor():
    """A path that reaches the object's distance only on another floor gives no view."""
    upstairs = [[x, y, 3.0 if x >= 2 else z] for x, y, z in PATH_IN]
    assert approach(upstairs, (0.0, 0.0, 0.0), (3.0, 5.0)) == (1.0, 0.0, 0.0)


def test_the_view_is_not_taken_from_a_doorway():
    """A position in a doorway (where the closed door stands) is passed over for a nearer one."""
    door = (3.0, 0.2, 0.0)
    assert approach(PATH_IN, (0.0, 0.0, 0.0), (3.0, 5.0), [door]) == (2.0, 0.0, 0.0)


def test_the_brief_images_are_renders_of_the_goal_views():
    """Each goal image of the brief is what the backend renders from its goal view."""
    spec, backend = _outdoor(), EmbeddedBackend(body="walker", sensors=(), camera=SMALL)
    mission = RescueMission(backend)
    mission.reset(spec, seed=0)
    assert mission.brief is not None
    doors = [backend.position_of(door) for door in backend.doors()]
    views = goal_views(spec, rescue_data(spec), GoalImages.EVERY_STAGE, backend.position_of, doors)
    for name, v in views.items():
        rendered = backend.render_view(v.x, v.y, v.z, v.yaw, v.pitch)
        assert np.array_equal(mission.brief.images[name], rendered), name
