import numpy as np

from sortie.core.observation import Sensor
from sortie.sim.camera import CameraSpec
from sortie.sim.mesh import box
from sortie.sim.render import Renderer
from sortie.sim.scene import Dynamics, Scene, SceneObject


def _wall_scene() -> Scene:
    wall = SceneObject("wall_0", "wall", (box((0.2, 20, 6), (10.1, 0, 3), (200, 50, 50)),))
    door = SceneObject(
        "door_0",
        "door",
        (box((0.1, 1, 2), (5, 0, 1), (50, 50, 200)),),
        dynamics=Dynamics.OPENABLE,
        open_transform=np.array([[1, 0, 0, 0], [0, 1, 0, 3], [0, 0, 1, 0], [0, 0, 0, 1]], float),
    )
    return Scene([wall, door], (-10, -10, 10, 10))


def test_depth_to_wall_equals_geometric_distance():
    """Depth at the centre pixel is the distance from the eye to the wall's face."""
    scene = _wall_scene()
    scene.set_open("door_0", True)
    frames = Renderer(scene).render(CameraSpec(64, 64, 90), (0.0, 0.0, 1.0), 0.0)
    assert frames.depth is not None
    assert abs(float(frames.depth[31:33, 31:33].mean()) - 10.0) < 0.01


def test_semantic_ids_name_the_objects_hit():
    """The semantic image holds the id of the object each pixel sees, 0 for the sky."""
    scene = _wall_scene()
    frames = Renderer(scene).render(CameraSpec(64, 64, 90), (0.0, 0.0, 1.0), 0.0)
    assert frames.semantic is not None
    assert frames.semantic[32, 32] == scene.id_of("door_0")
    assert frames.semantic[0, 0] == 0
    assert scene.id_of("wall_0") in frames.semantic


def test_opening_a_door_changes_the_view_without_rebuilding_static_geometry():
    """An opened door slides away and the wall behind it shows."""
    scene = _wall_scene()
    renderer = Renderer(scene)
    static = renderer.caster.static
    scene.set_open("door_0", True)
    frames = renderer.render(CameraSpec(64, 64, 90), (0.0, 0.0, 1.0), 0.0)
    assert frames.semantic is not None and frames.semantic[32, 32] == scene.id_of("wall_0")
    assert renderer.caster.static is static


def test_only_requested_sensors_are_rendered():
    """Asking for depth alone leaves RGB and semantic empty; asking for none renders nothing."""
    renderer = Renderer(_wall_scene())
    frames = renderer.render(CameraSpec(32, 32, 90), (0, 0, 1), 0.0, sensors={Sensor.DEPTH})
    assert frames.depth is not None and frames.rgb is None and frames.semantic is None
    assert renderer.render(CameraSpec(32, 32, 90), (0, 0, 1), 0.0, sensors=()).depth is None


def test_a_pitch_drawn_again_gets_the_sky_a_fresh_renderer_gives():
    """After another pitch, a pitch's frame is the one a new renderer draws."""
    from sortie.sim.scene import LIGHTING_PRESETS

    ground = SceneObject("ground_0", "ground", (box((40, 40, 0.1), (0, 0, -0.05), (90, 140, 60)),))
    scene = Scene([ground], (-10, -10, 10, 10), LIGHTING_PRESETS["dusk"])
    spec, eye = CameraSpec(320, 240, 70), (0.0, 0.0, 1.5)
    renderer = Renderer(scene)
    renderer.render(spec, eye, 0.0, 0.0, {Sensor.RGB})
    renderer.render(spec, eye, 0.0, -30.0, {Sensor.RGB})
    again = renderer.render(spec, eye, 110.0, 0.0, {Sensor.RGB}).rgb
    fresh = Renderer(scene).render(spec, eye, 110.0, 0.0, {Sensor.RGB}).rgb
    assert again is not None and fresh is not None
    assert np.array_equal(again, fresh)


def test_a_frames_sky_does_not_depend_on_the_yaw_of_earlier_frames():
    """The sky first drawn at one yaw gives, at another, the frame a new renderer draws there.

    The sky is made from the rays at zero yaw: made from turned rays (float32), a few of its
    pixels moved by a rounding with the yaw of the frame that first drew the pitch.
    """
    from sortie.sim.scene import LIGHTING_PRESETS

    post = SceneObject("pillar_0", "pillar", (box((0.2, 0.2, 1), (0, 0, -5), (90, 140, 60)),))
    scene = Scene([post], (-10, -10, 10, 10), LIGHTING_PRESETS["dusk"])  # nearly all sky
    spec, eye = CameraSpec(640, 480, 90), (0.0, 0.0, 1.5)
    for yaw in (13.0, 77.7, 101.3):
        fresh = Renderer(scene).render(spec, eye, yaw, 10.0, {Sensor.RGB}).rgb
        renderer = Renderer(scene)
        renderer.render(spec, eye, 0.0, 10.0, {Sensor.RGB})
        assert np.array_equal(renderer.render(spec, eye, yaw, 10.0, {Sensor.RGB}).rgb, fresh)


def test_a_kept_sky_is_the_sky_made_from_the_cameras_rays():
    """The sky a renderer takes from the process's kept skies is the one its rays give now."""
    from sortie.sim.camera import pitched_rays
    from sortie.sim.render import sky_colors
    from sortie.sim.scene import LIGHTING_PRESETS

    spec = CameraSpec(48, 32, 80)
    for preset in ("dusk", "overcast"):
        light = LIGHTING_PRESETS[preset]
        renderer = Renderer(Scene([], (-10, -10, 10, 10), light))
        for pitch in (-17.6, -1.9, 0.0, 12.5):
            made = sky_colors(pitched_rays(spec, pitch).T, light.sky_horizon, light.sky_top)
            assert np.array_equal(renderer._camera_sky(spec, pitch), made)


def test_kept_skies_stay_within_their_byte_budget():
    """Beyond the budget the least recently used sky goes; the last one asked for stays."""
    from sortie.sim.render import _KeptSkies

    skies, spec = _KeptSkies(budget=3 * 32 * 32 * 3), CameraSpec(32, 32, 90)
    for pitch in range(10):
        sky = skies.get(spec, float(pitch), (0.8, 0.87, 0.95), (0.35, 0.55, 0.9))
    assert skies._bytes <= skies.budget and len(skies._skies) == 3
    assert skies.get(spec, 9.0, (0.8, 0.87, 0.95), (0.35, 0.55, 0.9)) is sky
    assert not sky.flags.writeable
