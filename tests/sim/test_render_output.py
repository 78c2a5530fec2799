"""The compiled output stage writes numpy's frames bit for bit, and turns only the rays needed."""

import numpy as np
import pytest

from sortie.core.errors import ConfigError
from sortie.core.observation import Frames, Sensor
from sortie.sim import raster
from sortie.sim.camera import CameraSpec, pitched_rays, turn_rows, world_rays, yaw_turn
from sortie.sim.mesh import box, quad
from sortie.sim.raycast import Hits, RayCaster
from sortie.sim.render import Renderer
from sortie.sim.scene import Dynamics, Scene, SceneObject
from sortie.sim.worlds import build_world
from tests.sim.views import random_views

needs_raster = pytest.mark.skipif(
    not raster.available(), reason="the rasteriser extension is not built here"
)


def _poster_scene() -> Scene:
    """A wall with a noisy poster, a door in front and open sky above."""
    texture = np.random.default_rng(3).integers(0, 256, (37, 53, 3), dtype=np.uint8)
    corners = [(6.0, 2.0, 3.0), (6.0, -2.0, 3.0), (6.0, -2.0, 0.5), (6.0, 2.0, 0.5)]
    wall = SceneObject("wall_0", "wall", (box((0.2, 20, 4), (6.2, 0, 2), (180, 60, 40)),))
    poster = SceneObject("sign_0", "sign", (quad(corners, texture),))
    door = SceneObject(
        "door_0",
        "door",
        (box((0.1, 1, 2), (3, 0, 1), (50, 50, 200)),),
        dynamics=Dynamics.OPENABLE,
        open_transform=np.array([[1, 0, 0, 0], [0, 1, 0, 1.5], [0, 0, 1, 0], [0, 0, 0, 1]], float),
    )
    ground = SceneObject("ground_0", "ground", (box((40, 40, 0.1), (0, 0, -0.05), (90, 140, 60)),))
    return Scene([wall, poster, door, ground], (-10, -10, 10, 10))


def _assert_same_frames(a: Frames, b: Frames) -> None:
    """The same images asked for, with the same dtype, shape and bytes."""
    for name in ("rgb", "depth", "semantic"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x.dtype == y.dtype and x.shape == y.shape, name
            assert x.tobytes() == y.tobytes(), name


def _compare(scene: Scene, views, spec: CameraSpec, rasterise: bool = True) -> int:
    """Render every view through both output stages; return how many textured pixels showed."""
    caster = RayCaster(scene)
    compiled = Renderer(scene, caster, rasterise=rasterise)
    reference = Renderer(scene, caster, rasterise=rasterise, compiled_output=False)
    textured = 0
    for eye, yaw, pitch in views:
        a, b = compiled.render(spec, eye, yaw, pitch), reference.render(spec, eye, yaw, pitch)
        _assert_same_frames(a, b)
        hits = caster.cast(np.array([eye], np.float32), world_rays(spec, yaw, pitch))
        textured += int(caster.table.textured[hits.triangle].sum())
    return textured


@needs_raster
def test_textured_faces_and_sky_are_the_same_either_way():
    """A poster's texels, face colours and sky come out the same from C and from numpy."""
    scene = _poster_scene()
    views = [((0.0, 0.0, 1.6), 0.0, 0.0), ((1.0, 1.0, 1.0), -10.0, 20.0)]
    views += random_views(scene, seed=1, count=6)
    assert _compare(scene, views, CameraSpec(64, 48)) > 0


@needs_raster
def test_doors_are_the_same_either_way_open_or_closed():
    """Frames with a door closed, then opened (dynamic geometry), match numpy's."""
    scene = _poster_scene()
    views = [((0.0, 0.0, 1.2), 0.0, 0.0), ((0.5, -0.5, 1.6), 10.0, -5.0)]
    _compare(scene, views, CameraSpec(48, 48))
    scene.set_open("door_0", True)
    assert _compare(scene, views, CameraSpec(48, 48)) > 0


@needs_raster
@pytest.mark.parametrize("world", ["street", "apartment", "forest"])
def test_world_frames_are_the_same_either_way(world):
    """Frames of a built world (signs, doors, trees) match numpy's, pixel for pixel."""
    scene = build_world(world, 0)
    if world == "apartment":
        for door in [o.name for o in scene.objects if o.dynamics is Dynamics.OPENABLE][::2]:
            scene.set_open(door, True)
    _compare(scene, random_views(scene, seed=7, count=4), CameraSpec(64, 48))


@needs_raster
def test_cast_frames_are_the_same_either_way():
    """With every pixel cast (no rasteriser), the compiled output still matches numpy's."""
    scene = _poster_scene()
    assert _compare(scene, [((0.0, 0.0, 1.6), 0.0, 0.0)], CameraSpec(40, 32), False) > 0


@needs_raster
def test_only_requested_images_are_written():
    """Asking for the semantic image alone gives it, the same, and no RGB or depth."""
    scene = _poster_scene()
    spec, sensors = CameraSpec(32, 32), {Sensor.SEMANTIC}
    a = Renderer(scene).render(spec, (0, 0, 1.6), 0.0, sensors=sensors)
    b = Renderer(scene, compiled_output=False).render(spec, (0, 0, 1.6), 0.0, sensors=sensors)
    assert a.rgb is None and a.depth is None and a.semantic is not None
    _assert_same_frames(a, b)


def test_turning_some_pixels_rows_gives_those_of_every_pixel():
    """Turning a few pixels' pitched rows gives the same bits as turning all and picking them."""
    spec, pixels = CameraSpec(40, 30, 75.0), np.array([0, 7, 599, 1199])
    for yaw, pitch in ((0.0, 0.0), (33.3, -20.0), (271.0, 12.5)):
        expected = world_rays(spec, yaw, pitch)[pixels]
        some = turn_rows(pitched_rays(spec, pitch)[:, pixels], yaw_turn(yaw))
        assert some.tobytes() == expected.tobytes()


@needs_raster
def test_rays_turned_in_c_give_the_same_hits():
    """The rasteriser turning the pitched rays itself finds what it finds with every ray given."""
    scene = build_world("station", 0)
    caster, spec = RayCaster(scene), CameraSpec(48, 40)
    for eye, yaw, pitch in random_views(scene, seed=2, count=3):
        given, unsure = raster.drawn(caster, spec, eye, yaw, pitch, world_rays(spec, yaw, pitch))
        turned, unsure_turned = raster.drawn(caster, spec, eye, yaw, pitch)
        assert unsure.tobytes() == unsure_turned.tobytes()
        for name in ("t", "triangle", "u", "v"):
            assert getattr(given, name).tobytes() == getattr(turned, name).tobytes(), name


@needs_raster
def test_a_triangle_outside_the_table_is_refused():
    """The output stage names the pixel whose triangle the tables do not hold."""
    table = RayCaster(_poster_scene()).table
    n = 4
    hits = Hits(
        np.ones(n, np.float32),
        np.array([0, -1, len(table), 0], np.int32),
        *[np.zeros(n, np.float32)] * 2,
    )
    colors, shade = np.zeros((len(table) + 1, 3), np.uint8), np.ones(len(table) + 1, np.float32)
    image = np.zeros((1, 1, 3), np.uint8)
    ids = np.empty(n, np.int32)
    with pytest.raises(ValueError, match="pixel 2 hits triangle"):
        raster.output(hits, table, image, colors, shade, None, ids, None)


def test_compiled_output_without_the_extension_is_refused(monkeypatch):
    """Asking for the compiled output stage where it is not built is a configuration error."""
    monkeypatch.setattr(raster, "available", lambda: False)
    with pytest.raises(ConfigError, match="compiled output stage asked for"):
        Renderer(_poster_scene(), rasterise=False, compiled_output=True)
