import numpy as np
import pytest

from sortie.core.errors import ConfigError
from sortie.core.pose import Pose
from sortie.sim import exact, packets, raycast
from sortie.sim.bodies import Walker
from sortie.sim.bodies.walker import _Stride
from sortie.sim.bodies.walker_rays import template
from sortie.sim.camera import CameraSpec, pitched_rays, world_rays, yaw_turn
from sortie.sim.compiled import PACKETS_SWITCH
from sortie.sim.linear import product
from sortie.sim.mesh import Mesh, box
from sortie.sim.raycast import NUDGE_TABLE, Hits, RayCaster
from sortie.sim.render import Renderer
from sortie.sim.scene import Dynamics, Scene, SceneObject
from sortie.sim.worlds import build_world

needs_packets = pytest.mark.skipif(
    not packets.available(), reason="the Embree packet extension is not built here"
)


def _frames(scene: Scene, use_packets: bool, poses: list[Pose]) -> list:
    """Render RGB, depth and semantic images from ``poses`` with one engine."""
    renderer = Renderer(scene, RayCaster(scene, use_packets=use_packets), rasterise=False)
    spec = CameraSpec(64, 48, 90.0)
    return [renderer.render(spec, (p.x, p.y, p.z + 1.6), p.yaw) for p in poses]


def _random_poses(scene: Scene, seed: int, count: int, turn: float) -> list[Pose]:
    """Return ``count`` poses drawn in the scene's bounds, each turned ``turn`` more."""
    rng = np.random.default_rng(seed)
    xmin, ymin, xmax, ymax = scene.bounds
    return [
        Pose(float(rng.uniform(xmin, xmax)), float(rng.uniform(ymin, ymax)), 0.0, turn * k)
        for k in range(count)
    ]


def _same_frames(a: list, b: list) -> bool:
    return all(
        np.array_equal(x.rgb, y.rgb)
        and np.array_equal(x.depth, y.depth)
        and np.array_equal(x.semantic, y.semantic)
        for x, y in zip(a, b, strict=True)
    )


@needs_packets
@pytest.mark.parametrize("world", ["campus", "forest", "station", "tower"])
def test_packet_frames_equal_embreex_frames_pixel_for_pixel(world):
    """RGB, depth and semantic images are identical through packets and through embreex."""
    scene = build_world(world, 0)
    poses = _random_poses(scene, seed=0, count=8, turn=45.0)
    assert _same_frames(_frames(scene, False, poses), _frames(scene, True, poses))


@pytest.fixture
def width_8():
    """Cast 8 rays per Embree call, as on a CPU without AVX-512, then restore the width."""
    module = packets.extension()
    assert module is not None
    before = module.packet_width()
    module.packet_width(8)
    yield
    module.packet_width(before)


@needs_packets
@pytest.mark.parametrize("world", ["campus", "apartment"])
def test_eight_ray_calls_give_the_same_frames_as_embreex(world, width_8):
    """Embree's 8-wide kernels (native on AVX2) meet the same triangles, once settled."""
    assert packets.extension().packet_width() == 8
    scene = build_world(world, 0)
    poses = _random_poses(scene, seed=1, count=9, turn=40.0)
    assert _same_frames(_frames(scene, False, poses), _frames(scene, True, poses))


def test_an_odd_packet_width_is_refused():
    module = packets.extension()
    if module is None:
        pytest.skip("the Embree packet extension is not built here")
    with pytest.raises(ValueError, match="expected 8 or 16, got 4"):
        module.packet_width(4)


@needs_packets
def test_packet_frames_equal_embreex_frames_with_doors_moving():
    """Opening and closing the campus doors changes both engines' images identically."""
    scene = build_world("campus", 0)
    doors = [o for o in scene.objects if o.dynamics is Dynamics.OPENABLE]
    poses = []
    for door in doors[:4]:
        (x, y, _), yaw = door.center(), 0.0
        poses += [
            Pose(float(x) - 3.0, float(y), 0.0, yaw),
            Pose(float(x) + 3.0, float(y), 0.0, 180),
        ]
    for state in (False, True):
        for door in doors:
            scene.set_open(door.name, state)
        assert _same_frames(_frames(scene, False, poses), _frames(scene, True, poses))


@needs_packets
def test_walker_walks_the_same_path_through_packets_and_embreex():
    """Two hundred random walker steps in the campus end at identical poses with either engine."""
    scene = build_world("campus", 0)
    paths = []
    for use in (False, True):
        scene.reset_state()
        walker = Walker(RayCaster(scene, use_packets=use))
        walker.place(Pose(0.0, -20.0, 0.0, 90.0))
        rng = np.random.default_rng(3)
        paths.append([walker.step(float(rng.uniform(-40, 40)), 1.2, 0.2).pose for _ in range(200)])
    assert paths[0] == paths[1]


@needs_packets
@pytest.mark.parametrize("world", ["apartment", "campus", "station"])
def test_probes_built_and_read_in_c_walk_the_same_path(world):
    """Compiled probes (rays and reading) and numpy's walk the same 400 steps and touch alike."""
    scene = build_world(world, 0)
    start = _random_poses(scene, seed=4, count=1, turn=0.0)[0]
    paths = []
    for compiled in (True, False):
        scene.reset_state()
        walker = Walker(RayCaster(scene))
        assert walker._rays is not None and walker._read is not None  # the extension's, by default
        if not compiled:
            walker._rays = walker._read = None
        walker.place(start)
        rng = np.random.default_rng(5)
        steps = [walker.step(float(rng.uniform(-60, 60)), 1.2, 0.2) for _ in range(400)]
        paths.append([(s.pose, s.contacts, s.blocked) for s in steps])
    assert paths[0] == paths[1]


def _shelf_scene() -> Scene:
    """A floor, a low shelf to walk under, a ramp and a wall: ceilings, slopes and walls."""
    ramp = box((2.0, 2.0, 0.1), (0.0, 3.0, 0.2))
    slope = np.array([[1, 0, 0], [0, 1, 0], [0, 0.25, 1]], np.float32)  # z rises with y
    ramp_turned = Mesh(ramp.vertices @ slope.T, ramp.faces, ramp.colors)
    return Scene(
        [
            SceneObject("floor_0", "floor", (box((12, 12, 0.1), (0, 0, -0.05)),)),
            SceneObject("shelf_0", "shelf", (box((1.5, 1.5, 0.1), (2.0, 0.0, 1.2)),)),
            SceneObject("ramp_0", "ramp", (ramp_turned,)),
            SceneObject("wall_0", "wall", (box((0.2, 12, 3), (4.0, 0, 1.5)),)),
        ],
        (-5, -5, 5, 5),
    )


@needs_packets
def test_the_compiled_reader_finds_what_the_python_readers_find():
    """Probes in every direction around a shelf, a ramp and a wall read the same both ways."""
    scene = _shelf_scene()
    compiled, python = Walker(RayCaster(scene)), Walker(RayCaster(scene))
    python._read = None
    rng = np.random.default_rng(8)
    seen_ceiling = seen_wall = False
    for _ in range(300):
        x, y, heading = rng.uniform(-1, 3.5), rng.uniform(-3, 4), rng.uniform(0, 2 * np.pi)
        length = float(rng.uniform(0.05, 1.5))
        n = compiled._samples(length)
        probes = [
            walker._probe(_Stride(x, y, 0.0), np.cos(heading), np.sin(heading), length, n)
            for walker in (compiled, python)
        ]
        a, b = probes
        assert (a.free, a.normal, a.obstacle, a.ceiling) == (
            b.free,
            b.normal,
            b.obstacle,
            b.ceiling,
        )
        assert np.array_equal(a.ground, b.ground, equal_nan=True)
        seen_ceiling |= any(a.ceiling)
        seen_wall |= a.obstacle != 0
    assert seen_ceiling and seen_wall  # the readers met what they must read


@needs_packets
def test_probe_rays_are_the_fixed_order_products_bit_for_bit():
    """The compiled builder gives ``product``'s float64 sums rounded to float32, bit for bit."""
    rng = np.random.default_rng(6)
    tpl = template(3, 0.25, 1.7, 0.35, 0.65)
    frame = rng.normal(size=(5, 3))
    frame[2] = (0.0, -0.0, 1.0)  # signed zeros, as a real frame has
    n = len(tpl.origins)
    origins, directions = np.empty((n, 3), np.float32), np.empty((n, 3), np.float32)
    tmax = tpl.tmax.astype(np.float32)
    packets.extension().probe_rays(
        tpl.origins, tpl.directions, frame, tpl.lead, 0.305, origins, directions, tmax
    )
    assert np.array_equal(
        origins.view(np.uint32), product(tpl.origins, frame).astype(np.float32).view(np.uint32)
    )
    expected = product(tpl.directions, frame[:3]).astype(np.float32)
    assert np.array_equal(directions.view(np.uint32), expected.view(np.uint32))
    sweep = len(tpl.lead)
    assert np.array_equal(tmax[:sweep], (tpl.lead + 0.305).astype(np.float32))
    assert np.array_equal(tmax[sweep:], tpl.tmax[sweep:].astype(np.float32))


@needs_packets
def test_probe_rays_of_the_wrong_shape_are_refused():
    tpl = template(2, 0.25, 1.7, 0.35, 0.65)
    out = np.empty((3, 3), np.float32)
    with pytest.raises(ValueError, match="probe_rays: expected layouts"):
        packets.extension().probe_rays(
            tpl.origins,
            tpl.directions,
            np.zeros((5, 3)),
            tpl.lead,
            0.3,
            out,
            out,
            np.empty(3, np.float32),
        )


@needs_packets
def test_one_origin_serves_every_ray():
    """Casting with a single origin row gives the hits of that origin repeated for every ray."""
    wall = SceneObject("wall", "wall", (box((0.2, 20, 6), (5.0, 0, 3), (200, 50, 50)),))
    caster = RayCaster(Scene([wall], (-10, -10, 10, 10)), use_packets=True)
    directions = np.float32([[1, 0, 0], [1, 0.5, 0], [-1, 0, 0]])
    one = caster.cast(np.float32([[0, 0, 1]]), directions)
    many = caster.cast(np.float32([[0, 0, 1]] * 3), directions)
    assert np.array_equal(one.t, many.t) and np.array_equal(one.triangle, many.triangle)
    assert np.isinf(one.t[2]) and one.t[0] == pytest.approx(4.9)


@needs_packets
def test_dynamic_rows_limit_the_rays_that_meet_moving_objects():
    """A ray left out of ``dynamic_rows`` passes through a door to the wall behind it."""
    wall = SceneObject("wall", "wall", (box((0.2, 20, 6), (10.0, 0, 3), (200, 50, 50)),))
    door = SceneObject(
        "door", "door", (box((0.1, 1, 2), (5, 0, 1), (50, 50, 200)),), dynamics=Dynamics.OPENABLE
    )
    scene = Scene([wall, door], (-10, -10, 10, 10))
    caster = RayCaster(scene, use_packets=True)
    directions = np.float32([[1, 0, 0], [1, 0, 0]])
    hits = caster.cast(np.float32([[0, 0, 1]]), directions, dynamic_rows=np.array([1]))
    assert caster.object_ids(hits).tolist() == [scene.id_of("wall"), scene.id_of("door")]


def _edge_rays(caster: RayCaster, seed: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Return rays from in front of random triangles aimed at points on their edges and corners."""
    rng = np.random.default_rng(seed)
    chosen = rng.integers(0, len(caster.table.corners), count)
    a, b, c = (caster.table.corners[chosen, i].astype(np.float64) for i in range(3))
    s = rng.random((count, 1))
    target = np.where(s < 0.3, a, np.where(s < 0.6, a + s * (b - a), b + s * (c - b)))
    ahead = caster.table.normal[chosen] * 0.3 + rng.normal(size=(count, 3)) * 0.1
    origins = (target + ahead).astype(np.float32)
    return origins, (target - origins).astype(np.float32)


def _bits(hits) -> list[bytes]:
    return [np.asarray(x).tobytes() for x in (hits.t, hits.triangle, hits.u, hits.v)]


@needs_packets
@pytest.mark.parametrize("world", ["campus", "forest"])
def test_rays_at_edges_are_cast_again_in_c_as_embreex_casts_them(world):
    """Rays aimed at edges and corners, cast again nudged in the extension: embreex's hits."""
    scene = build_world(world, 0)
    fast = RayCaster(scene, use_packets=True)
    slow = RayCaster(scene, use_packets=False)
    origins, directions = _edge_rays(fast, seed=3, count=600)
    tmax = np.random.default_rng(4).uniform(0.5, 4.0, len(directions)).astype(np.float32)
    unsure = np.empty(len(directions), np.uint8)
    packets.trace(
        fast._static_packets, None, origins, directions, tmax, decider=fast._decider, unsure=unsure
    )
    assert unsure.sum() > 100  # many rays met an edge and were cast again
    for limit in (None, tmax):
        assert _bits(fast.cast(origins, directions, limit)) == _bits(
            slow.cast(origins, directions, limit)
        )


@needs_packets
def test_the_remeasure_tolerance_reaches_the_extension(monkeypatch):
    """A tolerance of zero changes the hits at edges, and the extension's stay embreex's."""
    scene = build_world("campus", 0)
    fast = RayCaster(scene, use_packets=True)
    slow = RayCaster(scene, use_packets=False)
    origins, directions = _edge_rays(fast, seed=3, count=600)
    usual = _bits(fast.cast(origins, directions))
    monkeypatch.setattr(raycast, "REMEASURE_TOLERANCE", 0.0)
    strict = _bits(fast.cast(origins, directions))
    assert strict != usual
    assert strict == _bits(slow.cast(origins, directions))


@needs_packets
def test_a_negative_tolerance_is_refused():
    """The tolerance is a distance: the extension names a negative one and what it allows."""
    caster = RayCaster(build_world("station", 0))
    origins, directions = np.zeros((1, 3), np.float32), np.ones((1, 3), np.float32)
    with pytest.raises(ValueError, match="tolerance of -1; allowed: metres >= 0"):
        packets.trace(
            caster._static_packets,
            None,
            origins,
            directions,
            decider=caster._decider,
            unsure=np.empty(1, np.uint8),
            nudges=NUDGE_TABLE,
            tolerance=-1.0,
        )


@needs_packets
def test_a_marked_cast_writes_the_hits_cast_gives_at_the_marked_rows_only():
    """cast_marked turns the pitched rays, casts the marked ones and leaves the others as given."""
    scene = build_world("campus", 0)
    caster = RayCaster(scene)
    spec, eye, yaw = CameraSpec(40, 30, 90.0), (1.0, -20.0, 1.6), 35.0
    dirs = world_rays(spec, yaw, 0.0)
    marked = np.random.default_rng(5).random(len(dirs)) < 0.3
    hits = Hits(
        *(np.full(len(dirs), 7, dtype) for dtype in (np.float32, np.int32, np.float32, np.float32))
    )
    count = caster.cast_marked(eye, pitched_rays(spec, 0.0), marked, hits, yaw_turn(yaw))
    expected = caster.cast(np.array([eye], np.float32), dirs[marked])
    assert count == marked.sum()
    assert _bits(hits.subset(marked)) == _bits(expected)
    assert (hits.triangle[~marked] == 7).all() and (hits.t[~marked] == 7).all()


@needs_packets
def test_nudges_without_a_decider_are_refused():
    """Nudging needs the decider's tables to settle and measure: the extension says so."""
    caster = RayCaster(build_world("station", 0))
    origins = np.zeros((1, 3), np.float32)
    with pytest.raises(ValueError, match="nudges given without a decider"):
        packets.trace(
            caster._static_packets, None, origins, np.ones((1, 3), np.float32), nudges=NUDGE_TABLE
        )


@needs_packets
def test_marked_rays_of_the_wrong_count_are_refused_naming_the_sizes():
    """Three rays for two marks: cast_pixels names what it got and what it allows."""
    caster = RayCaster(build_world("station", 0))
    hits = packets.hit_arrays(2)
    with pytest.raises(ValueError, match="rays of 36, 2 marks.*allowed: 3 float32, 3N float32"):
        packets.cast_pixels(
            caster._static_packets,
            None,
            np.zeros((1, 3), np.float32),
            np.zeros((3, 3), np.float32),
            None,
            np.zeros(2, bool),
            hits,
            caster._decider,
            NUDGE_TABLE,
        )


@needs_packets
def test_rays_cast_again_meet_moving_objects_whatever_dynamic_rows_said():
    """Rays at a door's edges, none in ``dynamic_rows``: nudged, they meet it, as embreex's do."""
    scene = build_world("campus", 0)
    fast, slow = RayCaster(scene, use_packets=True), RayCaster(scene, use_packets=False)
    table = fast.table
    doors = np.arange(len(fast.static), len(table.corners))
    chosen = np.random.default_rng(9).choice(doors, 500)
    a, b = (table.corners[chosen, i].astype(np.float64) for i in range(2))
    target = a + np.random.default_rng(10).random((500, 1)) * (b - a)
    origins = (target + table.normal[chosen] * 0.5).astype(np.float32)
    directions = (target - origins).astype(np.float32)
    none = np.array([], np.intp)
    hits = fast.cast(origins, directions, dynamic_rows=none)
    assert _bits(hits) == _bits(slow.cast(origins, directions, dynamic_rows=none))
    assert (hits.triangle >= len(fast.static)).any()


def test_switching_packets_off_keeps_casts_on_embreex(monkeypatch):
    """With SORTIE_PACKETS=0 the extension is not used and casters fall back to embreex."""
    monkeypatch.setenv(PACKETS_SWITCH, "0")
    assert packets.extension.__wrapped__() is None


def test_switching_packets_off_keeps_coincident_faces_in_numpy(monkeypatch):
    """SORTIE_PACKETS=0 also keeps the coincident-face pairs off the extension (the same switch)."""
    monkeypatch.setenv(PACKETS_SWITCH, "0")
    assert exact._compiled.__wrapped__() is None


def test_asking_for_packets_where_there_are_none_is_an_error(monkeypatch):
    """A caster told to use packets in a process without them refuses instead of falling back."""
    monkeypatch.setattr(packets, "available", lambda: False)
    with pytest.raises(ConfigError, match="packets asked for"):
        RayCaster(Scene([], (-1, -1, 1, 1)), use_packets=True)


IDLE_CHECK = """
import resource, time
from sortie.backends.embedded import EmbeddedBackend
from sortie.missions.loading import load_suite
backend = EmbeddedBackend(body="walker", sensors=("rgb",))
backend.reset(load_suite("rescue-smoke-v2").episodes[0], 0)
used = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
before = used()
time.sleep(1.0)
print(used() - before)
"""


@needs_packets
def test_an_idle_process_uses_no_cpu_after_building_a_world():
    """No thread is left spinning after the packet self-test and a world's build.

    Releasing embreex's default device beside the extension's one-thread device once left a
    oneTBB worker spinning on sched_yield for the rest of the process: a core taken from a
    model server while a run waited on it. CPU seconds while asleep show it plainly.
    """
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", IDLE_CHECK], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout.split()[-1]) < 0.2


def test_an_unknown_embree_isa_is_refused_naming_the_allowed_ones(monkeypatch):
    """SORTIE_EMBREE_ISA=avx3 is a ConfigError listing sse4.2, avx, avx2 and avx512."""
    monkeypatch.setenv(packets.ENV_ISA, "avx3")
    with pytest.raises(ConfigError, match="avx3.*allowed: sse4.2, avx, avx2, avx512"):
        packets.device_config()
    monkeypatch.setenv(packets.ENV_ISA, "avx2")
    assert packets.device_config() == "threads=1,isa=avx2"
