import numpy as np
import pytest

from sortie.core.errors import ConfigError
from sortie.core.records_io import read_trajectory
from sortie.run.batch import RunRequest
from sortie.run.frames import frame_path, load_frame, save_frame
from tests.conftest import comparable, run_stored


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
