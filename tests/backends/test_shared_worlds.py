"""Embedded backends in one process share built worlds, never their state."""

import gc
import os
import threading

import numpy as np
import pytest

from sortie.backends.embedded import EmbeddedBackend
from sortie.core.actions import Move
from sortie.core.episode import EpisodeSpec, WorldSpec
from sortie.core.observation import Observation
from sortie.core.pose import Pose
from sortie.sim.camera import CameraSpec
from sortie.sim.shared_worlds import SHARED_WORLDS, SharedWorlds

from .test_embedded import _room

WALK = (Move(speed=1.0), Move(turn=30.0, speed=0.5), Move(turn=-60.0, speed=1.0), Move())


@pytest.fixture(autouse=True)
def _no_kept_worlds():
    """Each test starts with no world kept from another."""
    SHARED_WORLDS.clear()
    yield
    SHARED_WORLDS.clear()


def _casualty_episode() -> EpisodeSpec:
    # The test_casualty_room world is registered by test_embedded (imported above).
    return _room(Pose(0.0, 0.0, 0.0, 0.0)).model_copy(
        update={"world": WorldSpec(builder="test_casualty_room", seed=1, params={"clutter": 0.0})}
    )


def _backend() -> EmbeddedBackend:
    return EmbeddedBackend(camera=CameraSpec(48, 48, 90.0))


def _walk(backend: EmbeddedBackend) -> list[tuple[Observation, Pose]]:
    """Return every observation of the walk and the pose after it."""
    return [(backend.step(move).observation, backend.pose()) for move in WALK]


def _assert_same(one: list[tuple[Observation, Pose]], other: list[tuple[Observation, Pose]]):
    for (seen, pose), (expected, expected_pose) in zip(one, other, strict=True):
        assert pose == expected_pose
        for name in ("rgb", "depth", "semantic"):
            assert np.array_equal(getattr(seen.frames, name), getattr(expected.frames, name))


def _alone(spec: EpisodeSpec, before=lambda backend: None) -> list[tuple[Observation, Pose]]:
    """Return the walk of a backend that built its world itself (nothing kept)."""
    SHARED_WORLDS.clear()
    backend = _backend()
    backend.reset(spec, 0)
    before(backend)
    return _walk(backend)


def test_two_backends_in_one_episode_share_its_static_data_but_not_its_scene():
    """Both casters use the same static table; each backend runs its own scene state."""
    first, second = _backend(), _backend()
    first.reset(_room(), 0)
    second.reset(_room(), 0)
    one, other = first._require_world(), second._require_world()  # noqa: SLF001
    assert one.shared is other.shared and one.caster.static is other.caster.static
    assert one.scene.objects is other.scene.objects and one.scene is not other.scene


def test_a_door_opened_by_one_backend_stays_shut_for_another():
    """The other backend's frames and poses are those of a backend alone in the world."""
    opener, other = _backend(), _backend()
    opener.reset(_room(), 0)
    other.reset(_room(), 0)
    opener.set_door("door_0", True)
    _walk(opener)
    assert not other.door_state("door_0")
    _assert_same(_walk(other), _alone(_room()))


def test_a_casualty_carried_by_one_backend_stays_put_for_another():
    """One backend carries the casualty off; the other still sees it where it lay."""
    carrier, other = _backend(), _backend()
    carrier.reset(_casualty_episode(), 0)
    other.reset(_casualty_episode(), 0)
    carrier.pick_up("casualty")
    _walk(carrier)
    assert other.holding() is None and other.visible("casualty")
    assert other.position_of("casualty") != carrier.position_of("casualty")
    _assert_same(_walk(other), _alone(_casualty_episode()))


def test_a_reset_to_a_kept_world_gives_the_walk_of_a_fresh_build():
    """A backend reset into a world another built (and changed) walks as if it built it."""
    first = _backend()
    first.reset(_casualty_episode(), 0)
    first.pick_up("casualty")
    _walk(first)
    second = _backend()
    second.reset(_casualty_episode(), 0)
    assert second._require_world().shared is first._require_world().shared  # noqa: SLF001
    _assert_same(_walk(second), _alone(_casualty_episode()))


def test_a_reset_after_changes_gives_the_walk_of_a_fresh_build():
    """The same backend reset after opening a door and carrying walks as a fresh one."""
    backend = _backend()
    backend.reset(_casualty_episode(), 0)
    backend.set_door("door_0", True)
    backend.pick_up("casualty")
    _walk(backend)
    backend.reset(_casualty_episode(), 0)
    _assert_same(_walk(backend), _alone(_casualty_episode()))


def _world(seed: int) -> WorldSpec:
    return WorldSpec(builder="flexible_room", seed=seed, params={"size": 8.0, "clutter": 0.0})


@pytest.fixture
def builds(monkeypatch) -> list[int]:
    """Record the seed of every world built from now on."""
    import sortie.sim.shared_worlds as shared_worlds

    seeds: list[int] = []
    real = shared_worlds.build_world

    def counted(builder, seed, params=None):
        seeds.append(seed)
        return real(builder, seed, params)

    monkeypatch.setattr(shared_worlds, "build_world", counted)
    return seeds


def test_the_worlds_kept_beyond_those_in_use_are_bounded(builds):
    """Only the last ``kept`` worlds asked for stay once nothing uses them."""
    worlds = SharedWorlds(kept=2)
    for seed in (1, 2, 3):
        worlds.get(_world(seed), [])
    gc.collect()
    assert [w.base.origin for w in worlds.recent()] == [
        "flexible_room(seed=2)",
        "flexible_room(seed=3)",
    ]
    worlds.get(_world(3), [])
    worlds.get(_world(1), [])
    assert builds == [1, 2, 3, 1]


def test_a_world_in_use_stays_past_the_bound(builds):
    """A world a backend still holds is not built again, however many were asked for since."""
    worlds = SharedWorlds(kept=1)
    held = worlds.get(_world(1), [])
    for seed in (2, 3):
        worlds.get(_world(seed), [])
    gc.collect()
    assert worlds.get(_world(1), []) is held and builds == [1, 2, 3]


def test_the_worlds_kept_hold_at_most_the_triangles_allowed(builds):
    """Worlds beyond the triangle budget are forgotten, oldest first, but the last one stays."""
    worlds = SharedWorlds(kept=5, triangles=1)
    for seed in (1, 2):
        worlds.get(_world(seed), [])
    gc.collect()
    assert [w.base.origin for w in worlds.recent()] == ["flexible_room(seed=2)"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_child_forked_while_a_thread_builds_a_world_can_build_its_own():
    """The lock a thread of the parent held is not the child's: it takes worlds at once."""
    held, release = threading.Event(), threading.Event()

    def build() -> None:
        with SHARED_WORLDS._lock:  # noqa: SLF001 - a build in progress, held as long as needed
            held.set()
            release.wait(10)

    thread = threading.Thread(target=build)
    thread.start()
    held.wait(10)
    pid = os.fork()
    if pid == 0:  # the child: without a fresh lock this would wait for good
        os._exit(0 if SHARED_WORLDS._lock.acquire(timeout=5) else 1)  # noqa: SLF001
    release.set()
    thread.join()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
