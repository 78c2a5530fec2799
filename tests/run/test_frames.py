import numpy as np
import pytest

from sortie.backends.embedded import EmbeddedBackend
from sortie.core.errors import ConfigError
from sortie.core.records import PluginRef, TrajectoryHeader
from sortie.core.records_io import read_trajectory
from sortie.missions.household.mission import HouseholdMission
from sortie.run.batch import RunRequest
from sortie.run.episode import run_episode
from sortie.run.frames import FrameKeeper, frame_path, load_frame, save_frame
from sortie.sim.camera import CameraSpec
from sortie.sim.worlds.base import WORLDS
from sortie.testing.household import ScriptedPlanner
from tests.conftest import comparable, run_stored
from tests.missions.household.conftest import PUT_MUG, Recorder
from tests.missions.household.kitchen import KITCHEN, episode


def test_identical_frames_are_stored_once_and_read_back_exactly(tmp_path):
    """Two equal images give one file and one hash; another image another hash."""
    image = np.random.default_rng(0).integers(0, 255, (8, 8, 3), dtype=np.uint8)
    first, second = save_frame(tmp_path, image), save_frame(tmp_path, image.copy())
    other = save_frame(tmp_path, 255 - image)
    assert first == second != other
    assert len(list(tmp_path.rglob("*.png"))) == 2
    np.testing.assert_array_equal(load_frame(tmp_path, first), image)


def test_a_damaged_or_missing_frame_is_a_clear_error(tmp_path):
    """Bytes that no longer match the hash, or no file, are named with the path."""
    digest = save_frame(tmp_path, np.zeros((4, 4, 3), np.uint8))
    frame_path(tmp_path, digest).write_bytes(b"not a png")
    with pytest.raises(ConfigError, match="does not match its hash"):
        load_frame(tmp_path, digest)
    with pytest.raises(ConfigError, match="missing"):
        load_frame(tmp_path, "ab" * 32)


def test_record_frames_stores_every_step_and_changes_no_metric(tmp_path, smoke3):
    """With --record-frames each step names an existing RGB frame; metrics stay the same."""
    plain = run_stored(
        RunRequest((str(smoke3),), "oracle", store=tmp_path / "s.db", run_id="plain")
    )
    framed = run_stored(
        RunRequest(
            (str(smoke3),), "oracle", store=tmp_path / "s.db", run_id="framed", record_frames=True
        )
    )
    assert comparable(plain) == comparable(framed)
    steps = read_trajectory(framed[0].record).steps
    digests = [step.frames["rgb"] for step in steps]
    assert len(digests) == len(steps) and load_frame(tmp_path, digests[-1]).ndim == 3
    assert all(not step.frames for step in read_trajectory(plain[0].record).steps)


@pytest.fixture
def kitchen():
    """Register the household tests' one-room kitchen while the test runs."""
    with WORLDS.override("test_kitchen", KITCHEN):
        yield


def _household(sensors: tuple[str, ...]):
    """Return the kitchen's first household observation with ``sensors``."""
    backend = EmbeddedBackend(body="manipulator", sensors=sensors, camera=CameraSpec(16, 16))
    return HouseholdMission(backend).reset(episode([PUT_MUG]), 0)


def test_a_household_round_keeps_its_four_views_by_name(tmp_path, kitchen):
    """A household observation's frames are stored as front, left, back and right, in order."""
    observation = _household(("rgb",))
    kept = FrameKeeper(tmp_path)(observation)
    assert list(kept) == ["front", "left", "back", "right"]
    for view, digest in zip(observation.views, kept.values(), strict=True):
        np.testing.assert_array_equal(load_frame(tmp_path, digest), view.rgb)


def test_a_household_round_without_rgb_keeps_nothing(tmp_path, kitchen):
    """Views rendered without the RGB sensor (semantic only) give no frames."""
    assert FrameKeeper(tmp_path)(_household(())) == {}


def test_a_household_episode_records_four_views_per_round(tmp_path, kitchen):
    """Run through the runner's episode loop, every round's record names four stored views."""
    backend = EmbeddedBackend(body="manipulator", sensors=("rgb",), camera=CameraSpec(16, 16))
    header = TrajectoryHeader(
        episode=episode([PUT_MUG]),
        agent=PluginRef(name="test"),
        backend=PluginRef(name="embedded"),
        seed=0,
        code_version="test",
    )
    recorder = Recorder()
    planner = ScriptedPlanner([("go_to", "table_0", "image_nav")])
    run_episode(HouseholdMission(backend), planner, header, [recorder], FrameKeeper(tmp_path))
    assert len(recorder.steps) == 2
    for step in recorder.steps:
        assert set(step.frames) == {"front", "left", "back", "right"}
        assert all(frame_path(tmp_path, d).exists() for d in step.frames.values())
