"""The rasteriser gives the ray caster's hits, pixel for pixel and bit for bit."""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from sortie.core.errors import ConfigError
from sortie.sim import packets, raster
from sortie.sim.camera import CameraSpec, world_rays
from sortie.sim.chunks import CHUNK, Chunks, in_order, near_one_another
from sortie.sim.mesh import Mesh, box, pose_matrix
from sortie.sim.raycast import Hits, RayCaster, TextureAtlas, TriangleTable
from sortie.sim.render import Renderer
from sortie.sim.scene import Dynamics, Scene, SceneObject
from sortie.sim.worlds import FLIGHT_WORLDS, WORLDS, build_world
from tests.sim.views import random_views

needs_raster = pytest.mark.skipif(
    not raster.available(), reason="the rasteriser extension is not built here"
)


def _cast(caster: RayCaster, eye, dirs) -> Hits:
    return caster.cast(np.array([eye], np.float32), dirs)


def _assert_same_hits(cast: Hits, drawn: Hits) -> None:
    """Same triangle, and the same bits of t, u and v, on every pixel."""
    assert np.array_equal(cast.triangle, drawn.triangle)
    for name in ("t", "u", "v"):
        a, b = getattr(cast, name), getattr(drawn, name)
        assert np.array_equal(a.view(np.uint32), b.view(np.uint32)), name


def _compare(scene: Scene, views, spec: CameraSpec) -> tuple[int, int]:
    """Compare every view's rasterised hits with its cast ones; return (pixels, cast pixels)."""
    caster, pixels, unsure = RayCaster(scene), 0, 0
    for eye, yaw, pitch in views:
        dirs = world_rays(spec, yaw, pitch)
        caster.sync()
        drawn, cast_count = raster.frame_hits(caster, spec, eye, yaw, pitch, dirs)
        _assert_same_hits(_cast(caster, eye, dirs), drawn)
        pixels, unsure = pixels + len(dirs), unsure + cast_count
    return pixels, unsure


@needs_raster
@pytest.mark.parametrize("world", sorted(WORLDS.names()))
def test_every_world_draws_the_cast_hits(world):
    """Every world, eyes anywhere (inside walls and furniture too): the same hits as casting.

    And the rasteriser decides most pixels itself (a bug marking all unsure would pass the
    comparison alone).
    """
    params = FLIGHT_WORLDS.get(world) or {}
    scene = build_world(world, 3, params)
    pixels, unsure = _compare(scene, random_views(scene, seed=7, count=6), CameraSpec(96, 72, 90.0))
    assert unsure < 0.1 * pixels


@needs_raster
@pytest.mark.parametrize(
    "spec", [CameraSpec(64, 64, 170.0), CameraSpec(40, 120, 10.0, pitch=-30.0), CameraSpec(8, 8)]
)
def test_any_camera_draws_the_cast_hits(spec):
    """Wide, narrow, tall, tiny and pitched cameras."""
    scene = build_world("apartment", 1)
    _compare(scene, [(view[0], view[1], spec.pitch) for view in random_views(scene, 2, 6)], spec)


@needs_raster
def test_moved_doors_are_drawn_where_they_are_now():
    """Dynamic objects (opened doors) are drawn at their current place."""
    scene = build_world("apartment", 0)
    doors = [o.name for o in scene.objects if o.dynamics is Dynamics.OPENABLE]
    assert doors
    views = random_views(scene, seed=3, count=6)
    _compare(scene, views, CameraSpec(64, 48))
    for name in doors:
        scene.set_open(name, not scene.is_open(name))
    _compare(scene, views, CameraSpec(64, 48))


def _wall_scene() -> Scene:
    """A floor, a wall and a box: flat faces meeting at edges, one face edge-on to the eye."""
    return Scene(
        [
            SceneObject("floor_0", "floor", (box((10, 10, 0.1), (5, 0, -0.05)),)),
            SceneObject("wall_0", "wall", (box((0.2, 10, 3), (5.1, 0, 1.5)),)),
            SceneObject("crate_0", "crate", (box((1, 1, 1), (2.5, 0, 0.5)),)),
        ],
        (0, -5, 10, 5),
    )


@needs_raster
@pytest.mark.skipif(not packets.available(), reason="the Embree packet extension is not built here")
@pytest.mark.parametrize("given", [False, True], ids=["turned", "given"])
def test_unsure_pixels_cast_through_embreex_get_the_packets_hits(given):
    """cast_marked's numpy path (embreex) turns and casts the unsure pixels as the C one does."""
    scene = build_world("campus", 0)
    spec, cast = CameraSpec(80, 60, 90.0), 0
    engines = RayCaster(scene, use_packets=True), RayCaster(scene, use_packets=False)
    for eye, yaw, pitch in random_views(scene, seed=11, count=6):
        dirs = world_rays(spec, yaw, pitch) if given else None
        (fast, count), (slow, _) = (
            raster.frame_hits(c, spec, eye, yaw, pitch, dirs) for c in engines
        )
        _assert_same_hits(slow, fast)
        cast += count
    assert cast > 0


@needs_raster
def test_an_eye_at_a_surface_casts_the_whole_frame():
    """An eye within a millimetre of a face: no pixel is drawn, every one is cast."""
    scene, spec = _wall_scene(), CameraSpec(32, 32)
    eye = (4.9995, 0.0, 1.0)  # half a millimetre from the wall's face at x = 5
    caster = RayCaster(scene)
    dirs = world_rays(spec, 0.0, 0.0)
    drawn, cast_count = raster.frame_hits(caster, spec, eye, 0.0, 0.0, dirs)
    assert cast_count == len(dirs)
    _assert_same_hits(_cast(caster, eye, dirs), drawn)


@needs_raster
def test_faces_seen_edge_on_are_cast():
    """An eye level with the crate's top sees it edge-on: those pixels are cast, and agree.

    With an odd height, the middle row's rays run in the top face's plane.
    """
    scene, spec = _wall_scene(), CameraSpec(64, 63)
    eye = (0.5, 0.0, 1.0)  # level with the top face of the crate
    pixels, unsure = _compare(scene, [(eye, 0.0, 0.0)], spec)
    assert 0 < unsure < pixels


@needs_raster
def test_a_plain_view_is_drawn_not_cast():
    """Away from outlines, pixels are the rasteriser's own: only a few near edges are cast."""
    scene, spec = _wall_scene(), CameraSpec(64, 64)
    pixels, unsure = _compare(scene, [((0.5, 0.0, 1.6), 0.0, -10.0)], spec)
    assert 0 < unsure < 0.05 * pixels


def _near_coincident_scene() -> Scene:
    """Two overlapping faces 0.09 mm apart, one plane at 0.1 mm (exact.PLANE_DECIMALS).

    The farther face comes first in the table, so the ray caster's coincident-face rule (the
    lowest index) gives the farther one, though the nearer one's depth is clearly smaller.
    """
    far, near = 5.940844, 5.940751  # both round to x = 5.9408
    corners = [[[x, -4.0, -3.0], [x, 4.0, -3.0], [x, 0.0, 5.0]] for x in (far, near)]
    vertices = np.asarray(corners, np.float32).reshape(-1, 3)
    faces = np.arange(len(vertices), dtype=np.int32).reshape(-1, 3)
    panels = Mesh(vertices, faces, np.full((len(faces), 3), 120, np.uint8))
    wall = box((0.2, 20, 10), (8.0, 0, 1))
    return Scene(
        [SceneObject("wall_0", "wall", (wall,)), SceneObject("panel_0", "crate", (panels,))],
        (0, -5, 10, 5),
    )


@needs_raster
def test_faces_coincident_by_rounding_draw_the_cast_hits():
    """Faces the ray caster counts as one plane, though apart by more than a tie: its hits."""
    scene, spec = _near_coincident_scene(), CameraSpec(48, 40, 90.0)
    views = [((0.0, 0.3, 1.0), 10.0, 5.0), ((1.5, -0.5, 0.5), -20.0, 0.0)]
    try:
        for on in (True, False):
            raster.simd(on)
            _compare(scene, views, spec)
    finally:
        raster.simd(True)


def test_apart_is_how_far_partners_lie_off_a_faces_plane():
    """The two panels lie their distance apart; the wall's faces, each in its plane, about 0."""
    table = RayCaster(_near_coincident_scene()).table
    apart = raster.apart(table)
    panels = np.flatnonzero(np.isclose(table.corners[:, 0, 0], 5.9408, atol=1e-3))
    gap = float(table.corners[panels[0], 0, 0]) - float(table.corners[panels[1], 0, 0])
    assert len(panels) == 2 and np.allclose(apart[panels], abs(gap), rtol=1e-6)
    assert np.delete(apart, panels).max() < 1e-9


@needs_raster
def test_renderer_frames_are_the_same_either_way():
    """RGB, depth and semantic images rasterised and cast are identical."""
    scene = build_world("campus", 0)
    spec = CameraSpec(64, 48)
    drawn, cast = Renderer(scene), Renderer(scene, rasterise=False)
    assert drawn.rasterise and not cast.rasterise
    for eye, yaw, pitch in random_views(scene, seed=5, count=4):
        a, b = drawn.render(spec, eye, yaw, pitch), cast.render(spec, eye, yaw, pitch)
        assert np.array_equal(a.rgb, b.rgb) and np.array_equal(a.semantic, b.semantic)
        assert np.array_equal(a.depth, b.depth)


def _drawn_both_ways(scene: Scene, views, spec: CameraSpec) -> list[tuple[Hits, np.ndarray]]:
    """Return each view's rasterised hits and unsure pixels, four pixels at a time then one."""
    caster, found = RayCaster(scene), []
    try:
        for eye, yaw, pitch in views:
            for on in (True, False):
                raster.simd(on)
                found.append(raster.drawn(caster, spec, eye, yaw, pitch))
    finally:
        raster.simd(True)
    return found


@needs_raster
@pytest.mark.skipif(not raster.simd(), reason="this CPU has no AVX2, or SORTIE_RASTER_SIMD=0")
@pytest.mark.parametrize("world", ["apartment", "forest", "suburb"])
def test_the_vector_path_draws_the_one_pixel_paths_bits(world):
    """AVX2 lanes keep the same candidates as one pixel at a time: same hits, same unsure."""
    scene = build_world(world, 2)
    views = random_views(scene, seed=13, count=4)
    for spec in (CameraSpec(97, 61, 90.0), CameraSpec(128, 128, 90.0), CameraSpec(9, 8, 120.0)):
        found = _drawn_both_ways(scene, views, spec)
        for (hits, unsure), (hits_2, unsure_2) in zip(found[::2], found[1::2], strict=True):
            _assert_same_hits(hits, hits_2)
            assert np.array_equal(unsure, unsure_2)


def test_the_vector_path_can_be_switched_off():
    """SORTIE_RASTER_SIMD=0 starts a process with one pixel at a time."""
    code = "from sortie.sim import raster; print(raster.simd())"
    env = {**os.environ, raster.SIMD_SWITCH: "0"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def test_rasterising_without_the_extension_is_refused(monkeypatch):
    monkeypatch.setattr(raster, "available", lambda: False)
    with pytest.raises(ConfigError, match="rasterising asked for"):
        Renderer(_wall_scene(), rasterise=True)


def test_a_tables_chunks_are_kept_for_the_next_frame():
    """A table's chunks are made once, by place (tests/sim/test_chunks.py checks them)."""
    table = RayCaster(build_world("station", 0)).table
    chunks = raster.chunks(table)
    by_place = near_one_another(table.corners)
    assert np.array_equal(chunks.members, by_place.members)
    assert np.array_equal(chunks.bounds.view(np.uint64), by_place.bounds.view(np.uint64))
    assert raster.chunks(table) is chunks


@needs_raster
@pytest.mark.parametrize("world", ["forest", "campus"])
def test_frames_are_the_same_whatever_the_chunks(world, monkeypatch):
    """Chunks in table order, by place, or backwards: the same hits.

    The order decides only what is skipped; each draws most pixels rather than casting them.
    """
    scene, spec = build_world(world, 3), CameraSpec(96, 72, 90.0)
    caster = RayCaster(scene)
    views = random_views(scene, seed=11, count=6)
    table, made = caster.table, raster.kept(caster.table, caster.static)
    orders = {
        "by place": made.chunks,
        "in order": in_order(table.corners),
        "backwards": _backwards(in_order(table.corners)),
    }
    frames, cast = {}, {}
    for name, chunks in orders.items():
        monkeypatch.setattr(raster, "kept", lambda *_, c=chunks: raster.Kept(c, made.apart))
        drawn = [raster.frame_hits(caster, spec, eye, yaw, pitch) for eye, yaw, pitch in views]
        frames[name], cast[name] = [hits for hits, _ in drawn], sum(n for _, n in drawn)
    for name in ("in order", "backwards"):
        for one, other in zip(frames["by place"], frames[name], strict=True):
            _assert_same_hits(one, other)
    assert all(n < spec.width * spec.height * len(views) // 4 for n in cast.values())


def _backwards(chunks: Chunks) -> Chunks:
    """Return ``chunks`` with their order, and each one's triangles, reversed."""
    members = chunks.members.reshape(-1, CHUNK)[::-1]
    members = np.sort(members, axis=1)[:, ::-1]  # the -1 padding still last
    return Chunks(np.ascontiguousarray(members.ravel()), np.ascontiguousarray(chunks.bounds[::-1]))


@needs_raster
@pytest.mark.parametrize(
    ("at", "value"),
    [(1, None), (2, -2), (0, -1)],
    ids=["past the table", "below -1", "a -1 before a triangle"],
)
def test_a_member_that_is_no_triangle_is_refused(at, value):
    """A member past the table, below -1, or a triangle after a chunk's -1 is a clear error.

    (The loop would skip a triangle after a -1, leaving its pixels wrongly sure.) Members are
    checked as the chunks in view are drawn; the frame's scratch is left clean for the next.
    """
    caster = RayCaster(_wall_scene())
    made = raster.kept(caster.table, caster.static)
    assert (made.chunks.members[:3] >= 0).all()  # the first chunk holds three triangles or more
    members = made.chunks.members.copy()
    members[at] = len(caster.table) if value is None else value
    bad = raster.Kept(Chunks(members, made.chunks.bounds), made.apart)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(raster, "kept", lambda *_: bad)
        wrong = at + 1 if value == -1 else at  # the triangle after the -1
        with pytest.raises(
            ValueError, match=rf"members\[{wrong}\] is {members[wrong]}; allowed: -1"
        ):
            raster.frame_hits(caster, CameraSpec(32, 24, 90.0), (0.0, 0.0, 1.0), 0.0, 0.0)
    spec, eye = CameraSpec(32, 24, 90.0), (0.0, 0.0, 1.0)
    dirs = world_rays(spec, 0.0, 0.0)
    drawn, _ = raster.frame_hits(caster, spec, eye, 0.0, 0.0, dirs)
    _assert_same_hits(_cast(caster, eye, dirs), drawn)


def _moved_tables(scene: Scene, caster: RayCaster) -> list:
    """Return the caster's tables as its scene's doors open and its bodies move and hide."""
    tables = [caster.table]
    for name in [o.name for o in scene.objects if o.open_transform is not None][:2]:
        scene.set_open(name, True)
        caster.sync()
        tables.append(caster.table)
    for k, name in enumerate([o.name for o in scene.objects if o.is_dynamic][:2]):
        scene.set_transform(name, pose_matrix((0.3 * (k + 1), 0.1, 0.0)))
        caster.sync()
        tables.append(caster.table)
        scene.set_hidden(name, True)
        caster.sync()
        tables.append(caster.table)
    return tables


@pytest.mark.parametrize("world", ["apartment", "campus"])
def test_a_moved_tables_kept_rows_are_the_whole_tables(world):
    """Apart from the static table's and the new rows is the whole table's bits.

    The chunks are the static table's, then the new rows' in their order.

    (And the new rows alone were computed: none of them partners a static row.)
    """
    scene = build_world(world, 3)
    caster = RayCaster(scene)
    static = len(caster.static)
    tables = _moved_tables(scene, caster)
    assert len({len(t) for t in tables}) > 1 and min(len(t) for t in tables) > static
    for table in tables:
        kept = raster.kept(table, caster.static)
        assert raster._apart(table.corners, table.faces, static) is not None
        whole = raster._apart_all(table.corners, table.faces)
        assert np.array_equal(kept.apart.view(np.uint64), whole.view(np.uint64))
        _assert_chunks_follow(kept.chunks, caster.static, table)


def _assert_chunks_follow(chunks: Chunks, static: TriangleTable, table: TriangleTable) -> None:
    """Assert ``chunks`` are ``static``'s chunks, then ``table``'s rows after it in order."""
    first, after = raster.chunks(static), in_order(table.corners, len(static))
    assert np.array_equal(chunks.members, np.concatenate([first.members, after.members]))
    bounds = np.concatenate([first.bounds, after.bounds])
    assert np.array_equal(chunks.bounds.view(np.uint64), bounds.view(np.uint64))


def test_a_table_whose_new_rows_partner_the_static_ones_is_kept_whole():
    """A row after the static prefix partnering one in it: the whole table's values are made."""
    far, near = 5.940844, 5.940751  # coincident at exact.PLANE_DECIMALS (see above)
    panels = [
        Mesh(
            np.asarray([[x, -4.0, -3.0], [x, 4.0, -3.0], [x, 0.0, 5.0]], np.float32),
            np.asarray([[0, 1, 2]], np.int32),
            np.full((1, 3), 120, np.uint8),
        )
        for x in (far, near)
    ]
    parts = [(1, box((0.2, 20, 10), (8.0, 0, 1))), (2, panels[0]), (3, panels[1])]
    atlas = TextureAtlas([mesh for _, mesh in parts])
    table, static = TriangleTable.build(parts, atlas), TriangleTable.build(parts[:2], atlas)
    assert raster._apart(table.corners, table.faces, len(static)) is None  # a partner across
    kept = raster.kept(table, static)
    whole = raster._apart_all(table.corners, table.faces)
    assert whole.max() > 0 and np.array_equal(kept.apart.view(np.uint64), whole.view(np.uint64))
    _assert_chunks_follow(kept.chunks, static, table)


@needs_raster
def test_a_scene_of_dynamic_objects_alone_keeps_its_rows_in_order():
    """No static prefix to reuse: a moved table's chunks are its rows in order.

    (Not grouped anew each step.) And its frames are the cast ones.
    """
    scene = Scene(
        [
            SceneObject(
                f"crate_{k}",
                "crate",
                (box((1, 1, 1), (3.0, k - 1.0, 0.5)),),
                dynamics=Dynamics.PORTABLE,
            )
            for k in range(3)
        ],
        (0, -5, 10, 5),
    )
    caster = RayCaster(scene)
    assert len(caster.static) == 0
    scene.set_transform("crate_0", pose_matrix((0.0, 0.2, 0.0)))
    caster.sync()
    table = caster.table
    _assert_chunks_follow(raster.kept(table, caster.static).chunks, caster.static, table)
    spec, eye = CameraSpec(48, 36, 90.0), (0.0, 0.0, 0.5)
    dirs = world_rays(spec, 0.0, 0.0)
    drawn, _ = raster.frame_hits(caster, spec, eye, 0.0, 0.0, dirs)
    _assert_same_hits(_cast(caster, eye, dirs), drawn)
    assert (drawn.triangle >= 0).sum() > 100


@needs_raster
def test_chunks_behind_what_is_drawn_are_skipped_whole():
    """Crates behind a wall that fills the view: their own chunks are hidden, not set up.

    Without the wall the same crates are drawn; the frames are the cast ones either way.
    """
    crates = [
        SceneObject(f"crate_{k}", "crate", (box((0.5, 0.5, 0.5), (9.0, k * 0.7 - 3.0, 1.0)),))
        for k in range(10)
    ]
    wall = SceneObject("wall_0", "wall", (box((0.2, 20, 10), (5.0, 0, 1.5)),))
    spec, eye, dirs = CameraSpec(64, 48, 60.0), (0.0, 0.0, 1.5), None
    counts = {}
    for name, objects in (("walled", [wall, *crates]), ("open", crates)):
        caster = RayCaster(Scene(objects, (0, -10, 12, 10)))
        dirs = world_rays(spec, 0.0, 0.0)
        drawn, _ = raster.frame_hits(caster, spec, eye, 0.0, 0.0, dirs)
        counts[name] = raster.work()
        _assert_same_hits(_cast(caster, eye, dirs), drawn)
    walled, open_ = counts["walled"], counts["open"]
    # 132 triangles by place: the wall's 12 lie spread over four chunks, the crates' alone fill five
    assert walled["chunks hidden"] >= 4
    assert walled["triangles set up"] <= 4 * CHUNK
    assert open_["chunks hidden"] == 0 and open_["triangles set up"] == 120


def test_chunks_are_kept_for_every_live_table():
    """Each of many live tables (a vector env's copies) keeps its chunks between frames."""
    tables = [RayCaster(_wall_scene()).table for _ in range(20)]
    first = [raster.chunks(table) for table in tables]
    assert all(raster.chunks(t) is c for t, c in zip(tables, first, strict=True))


def test_chunks_of_a_table_that_is_gone_are_dropped():
    """The chunks of a table whose corners are gone are not kept."""
    table = RayCaster(_wall_scene()).table
    raster.chunks(table)
    key = id(table.corners)
    assert key in raster._KEPT
    del table
    assert key not in raster._KEPT


@needs_raster
def test_frames_drawn_at_once_in_two_threads_are_those_drawn_alone():
    """Two threads drawing at once (the extension lets go of the GIL) get the frames of one."""
    caster = RayCaster(build_world("station", 0))
    views = random_views(caster.scene, seed=11, count=24)
    specs = [CameraSpec(64, 48, 90.0), CameraSpec(96, 96, 70.0)]
    jobs = [(spec, view) for view in views for spec in specs]

    def draw(job):
        spec, (eye, yaw, pitch) = job
        return raster.drawn(caster, spec, eye, yaw, pitch)

    alone = [draw(job) for job in jobs]
    with ThreadPoolExecutor(2) as pool:
        together = list(pool.map(draw, jobs))
    for (hits, unsure), (hits_2, unsure_2) in zip(alone, together, strict=True):
        _assert_same_hits(hits, hits_2)
        assert np.array_equal(unsure, unsure_2)


@needs_raster
def test_frames_larger_than_the_kept_scratch_draw_the_cast_hits():
    """A frame too large for the process's kept scratch, between small ones, is drawn right."""
    scene = _wall_scene()
    views = [((0.5, -1.0, 1.2), 10.0, -5.0)]
    for spec in (CameraSpec(48, 32, 90.0), CameraSpec(720, 600, 90.0), CameraSpec(48, 32, 90.0)):
        pixels, unsure = _compare(scene, views, spec)
        assert unsure < 0.1 * pixels
