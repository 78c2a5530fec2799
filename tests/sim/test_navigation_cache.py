import random

import numpy as np
import pytest

from sortie.sim.mesh import box
from sortie.sim.navigation import NavGraph, cache
from sortie.sim.navigation import graph as graph_module
from sortie.sim.scene import Dynamics, SceneObject
from sortie.sim.shapes import PLANNING
from sortie.sim.worlds import build_world


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    """Every test gets an empty disk cache and an empty in-process cache."""
    monkeypatch.setenv("SORTIE_CACHE", str(tmp_path))
    monkeypatch.delenv(cache.SWITCH, raising=False)
    monkeypatch.setattr(cache, "_memory", type(cache._memory)())


def _same(a: NavGraph, b: NavGraph) -> bool:
    return (
        np.array_equal(a.positions, b.positions)
        and np.array_equal(a.columns, b.columns)
        and np.array_equal(a.semantic, b.semantic)
        and a.adjacency.same_as(b.adjacency)
        and a.doors == b.doors
        and all(np.array_equal(x, y) for x, y in zip(a.door_nodes, b.door_nodes, strict=True))
    )


def _count_builds(monkeypatch) -> list[int]:
    calls: list[int] = []
    original = graph_module._find_parts

    def counted(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(graph_module, "_find_parts", counted)
    return calls


def test_a_graph_read_from_disk_equals_a_fresh_build(monkeypatch, tmp_path):
    """The flexible room's graph (a door included) comes back from disk identical."""
    scene = build_world("flexible_room", 0)
    fresh = NavGraph.build(scene, PLANNING)
    assert list((tmp_path / "graphs").glob("*.npz"))
    monkeypatch.setattr(cache, "_memory", type(cache._memory)())
    builds = _count_builds(monkeypatch)
    loaded = NavGraph.build(scene, PLANNING)
    assert not builds and loaded is not fresh and fresh.doors
    assert _same(fresh, loaded)


def test_the_same_scene_twice_in_a_process_costs_one_build(monkeypatch):
    """A second build of the same geometry returns the graph kept in memory."""
    builds = _count_builds(monkeypatch)
    scene = build_world("flexible_room", 0)
    first = NavGraph.build(scene, PLANNING)
    assert NavGraph.build(build_world("flexible_room", 0), PLANNING) is first
    assert len(builds) == 1


def test_moving_a_portable_object_keeps_the_key_and_a_wall_changes_it():
    """Portable objects are not planned around; any other geometry is part of the key."""
    scene = build_world("flexible_room", 0)
    key = cache.graph_key(scene, PLANNING, 0.25)
    crate = SceneObject(
        "crate_9", "crate", (box((0.5, 0.5, 0.5), (0, 0, 0.25), (9, 9, 9)),), {}, Dynamics.PORTABLE
    )
    wall = SceneObject("extra_wall", "wall", (box((0.2, 3, 2), (1, 1, 1), (9, 9, 9)),))
    with_crate = type(scene)([*scene.objects, crate], scene.bounds)
    with_wall = type(scene)([*scene.objects, wall], scene.bounds)
    assert cache.graph_key(with_crate, PLANNING, 0.25) == key
    assert cache.graph_key(with_wall, PLANNING, 0.25) != key
    assert cache.graph_key(scene, PLANNING, 0.5) != key


def test_a_damaged_file_is_rebuilt_and_replaced(monkeypatch, tmp_path):
    """An unreadable cache file costs a build, never an error, and is written again."""
    scene = build_world("flexible_room", 0)
    fresh = NavGraph.build(scene, PLANNING)
    (path,) = (tmp_path / "graphs").glob("*.npz")
    path.write_bytes(b"not a graph")
    monkeypatch.setattr(cache, "_memory", type(cache._memory)())
    builds = _count_builds(monkeypatch)
    assert _same(NavGraph.build(scene, PLANNING), fresh)
    assert len(builds) == 1 and cache.load(path.stem) is not None


@pytest.mark.parametrize(
    "damage",
    [
        lambda good: good[: len(good) // 2],
        lambda good: good[:-1],
        lambda good: random.Random(0).randbytes(len(good)),
        lambda good: b"PK\x03\x04" + random.Random(1).randbytes(4000),
    ],
    ids=["half", "last-byte-cut", "garbage", "zip-magic-then-garbage"],
)
def test_a_truncated_or_garbage_file_is_rebuilt_identical_and_replaced(
    damage, monkeypatch, tmp_path
):
    """A cache file cut short or of random bytes is a miss: built again, equal, and rewritten."""
    scene = build_world("flexible_room", 0)
    fresh = NavGraph.build(scene, PLANNING)
    (path,) = (tmp_path / "graphs").glob("*.npz")
    path.write_bytes(damage(path.read_bytes()))
    assert cache.load(path.stem) is None
    monkeypatch.setattr(cache, "_memory", type(cache._memory)())
    builds = _count_builds(monkeypatch)
    assert _same(NavGraph.build(scene, PLANNING), fresh)
    assert len(builds) == 1 and cache.load(path.stem) is not None


def test_a_swapped_file_is_rebuilt_not_used(monkeypatch, tmp_path):
    """Two worlds' cache files swapped: each world is built again, its own graph, and rewritten."""
    scenes = [build_world("flexible_room", 0), build_world("flexible_room", 1)]
    fresh = [NavGraph.build(scene, PLANNING) for scene in scenes]
    paths = [tmp_path / "graphs" / f"{cache.graph_key(s, PLANNING, 0.25)}.npz" for s in scenes]
    assert paths[0] != paths[1] and all(path.is_file() for path in paths)
    first, second = (path.read_bytes() for path in paths)
    paths[0].write_bytes(second)
    paths[1].write_bytes(first)
    assert cache.load(paths[0].stem) is None and cache.load(paths[1].stem) is None
    monkeypatch.setattr(cache, "_memory", type(cache._memory)())
    builds = _count_builds(monkeypatch)
    assert all(_same(NavGraph.build(s, PLANNING), f) for s, f in zip(scenes, fresh, strict=True))
    assert len(builds) == 2 and paths[0].read_bytes() == first


def test_a_file_whose_arrays_were_changed_is_rebuilt(monkeypatch, tmp_path):
    """A well-formed file under the right key whose heights were edited is not used."""
    scene = build_world("flexible_room", 0)
    fresh = NavGraph.build(scene, PLANNING)
    (path,) = (tmp_path / "graphs").glob("*.npz")
    with np.load(path) as stored:
        arrays = dict(stored)
    arrays["z"] = arrays["z"] + 1.0
    with path.open("wb") as out:
        np.savez(out, **arrays)
    assert cache.load(path.stem) is None
    monkeypatch.setattr(cache, "_memory", type(cache._memory)())
    builds = _count_builds(monkeypatch)
    assert _same(NavGraph.build(scene, PLANNING), fresh) and len(builds) == 1


def test_no_flipped_byte_of_a_cache_file_raises(tmp_path):
    """Seeded single-bit flips over a real cache file never make loading it raise."""
    NavGraph.build(build_world("flexible_room", 0), PLANNING)
    (path,) = (tmp_path / "graphs").glob("*.npz")
    good, rng = path.read_bytes(), random.Random(7)
    for _ in range(300):
        flipped = bytearray(good)
        flipped[rng.randrange(len(good))] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(flipped))
        cache.load(path.stem)  # a graph or None, never an exception


def test_switching_the_disk_cache_off_writes_nothing(monkeypatch, tmp_path):
    """With SORTIE_GRAPH_CACHE=0 a build leaves no file behind."""
    monkeypatch.setenv(cache.SWITCH, "0")
    NavGraph.build(build_world("flexible_room", 0), PLANNING)
    assert not (tmp_path / "graphs").exists()


def test_only_the_newest_files_are_kept(monkeypatch, tmp_path):
    """Past ``DISK_KEPT`` files the oldest are deleted."""
    monkeypatch.setattr(cache, "DISK_KEPT", 1)
    NavGraph.build(build_world("flexible_room", 0), PLANNING)
    NavGraph.build(build_world("flexible_room", 1), PLANNING)
    assert len(list((tmp_path / "graphs").glob("*.npz"))) == 1


def test_the_key_covers_the_sources_that_decide_a_graph():
    names = {path.name for path in cache.code_files()}
    assert {"exact.py", "raycast.py", "_packets.c", "_exact.h"} <= names  # how hits are decided
    assert {"clearance.py", "surfaces.py", "links.py", "kernels.py", "_grid.c"} <= names
    assert all(path.is_file() for path in cache.code_files())  # a source checkout has them all
