import imageio.v3 as iio
import numpy as np
import pytest

from sortie.report.clips import clip_digests, write_clip
from sortie.report.maps import WorldMaps
from sortie.report.plots import level_decay, plot_cascade, plot_decay, stage_cascade
from sortie.report.tables import report_rows
from sortie.run.store import Store
from sortie.testing.episodes import room_rescue
from sortie.testing.frames import colour_frames

from .conftest import CLIP_FRAMES, SAYING_RUN


def test_the_cascade_gives_the_share_of_episodes_that_completed_each_stage(store_path):
    """good: L1 one of two episodes finished all stages, L2 only S1; idle: L1 half did S1."""
    with Store(store_path) as store:
        cascades = stage_cascade(store, ["good", "idle"])
    got = {(c.run, c.level): (c.n, c.done) for c in cascades}
    assert got == {
        ("good", "L1"): (2, {"S1": 50.0, "S2": 50.0, "S3": 50.0, "S4": 50.0}),
        ("good", "L2"): (1, {"S1": 100.0, "S2": 0.0, "S3": 0.0, "S4": 0.0}),
        ("idle", "L1"): (2, {"S1": 50.0, "S2": 0.0, "S3": 0.0, "S4": 0.0}),
    }


def test_the_decay_plot_shows_tcr_per_level_in_percent_without_the_all_row(store_path):
    """Run good succeeds in one of two L1 episodes and in no L2 one; idle in none."""
    with Store(store_path) as store:
        rows = report_rows(store, ["good", "idle"])
    means = {
        run: [(level, e.mean) for level, e in points]
        for run, points in level_decay(rows, "tcr").items()
    }
    assert means == {"good": [("L1", 50.0), ("L2", 0.0)], "idle": [("L1", 0.0)]}


def test_the_run_plots_are_written_as_png(store_path, tmp_path):
    """Both run plots come out as PNG files of a readable size."""
    with Store(store_path) as store:
        cascade = plot_cascade(stage_cascade(store, ["good", "idle"]), tmp_path / "c.png")
        decay = plot_decay(report_rows(store, ["good", "idle"]), tmp_path / "d.png")
    for path in (cascade, decay):
        height, width = iio.imread(path).shape[:2]
        assert 150 < height < 600 and 200 < width < 1200


def test_a_world_map_is_rendered_once_for_all_its_episodes():
    """Two episodes of the same world share one background; another seed gets its own."""
    maps = WorldMaps()
    first, second = room_rescue("a"), room_rescue("b", casualty=(1.0, 1.0))
    assert maps.background(first.world) is maps.background(second.world)
    other = first.world.model_copy(update={"seed": 4})
    assert maps.background(other) is not maps.background(first.world)


def _recorded_steps(store_path):
    from sortie.core.records_io import read_trajectory

    with Store(store_path) as store:
        episode = next(e for e in store.episodes(SAYING_RUN) if e.episode_id == "s/frames")
        return read_trajectory(episode.record).steps, store.folder


def test_the_clip_is_a_webm_of_the_recorded_frames_in_order(store_path, tmp_path):
    """The WebM decodes to one frame per recorded step, each close to the colour stored."""
    av = pytest.importorskip("av", reason="WebM clips need PyAV")
    steps, frames_root = _recorded_steps(store_path)
    clip = write_clip(steps, frames_root, tmp_path / "c")
    assert clip == tmp_path / "c.webm"
    with av.open(str(clip)) as container:
        frames = np.stack([f.to_ndarray(format="rgb24") for f in container.decode(video=0)])
    assert frames.shape[0] == CLIP_FRAMES
    expected = np.stack(colour_frames(CLIP_FRAMES))[:, : frames.shape[1], : frames.shape[2]]
    # VP9 is lossy and subsamples colour: flat colours come back within a few levels
    assert np.abs(frames.astype(int).mean(axis=(1, 2)) - expected.mean(axis=(1, 2))).max() <= 6


def test_without_a_video_encoder_the_clip_is_a_gif_of_the_frames(store_path, tmp_path, monkeypatch):
    """With PyAV unavailable, the GIF fallback holds every recorded frame, in order."""
    from sortie.report import clips

    monkeypatch.setattr(clips, "write_webm", lambda frames, path: None)
    steps, frames_root = _recorded_steps(store_path)
    clip = write_clip(steps, frames_root, tmp_path / "c")
    assert clip == tmp_path / "c.gif"
    frames = iio.imread(clip, index=None)
    assert frames.shape[0] == CLIP_FRAMES
    expected = np.stack(colour_frames(CLIP_FRAMES))
    assert np.abs(frames[..., :3].astype(int) - expected.astype(int)).max() <= 8


def test_an_episode_without_frames_has_no_clip(store_path, tmp_path):
    """No recorded frames: no file and None."""
    from sortie.core.records_io import read_trajectory

    with Store(store_path) as store:
        steps = read_trajectory(store.episodes("good")[0].record).steps
        assert write_clip(steps, store.folder, tmp_path / "c") is None
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("count", "expected"), [(5, 5), (300, 120)])
def test_long_clips_are_sampled_evenly_keeping_the_first_and_last_frame(count, expected):
    """Up to 120 frames are kept; a longer episode is sampled from its first to its last."""
    from sortie.core.pose import Pose
    from sortie.core.records import StepRecord

    steps = [
        StepRecord(
            index=i,
            pose=Pose(0, 0, 0, 0),
            action={"type": "move"},
            clock_sim=0.0,
            clock_latency=0.0,
            frames={"rgb": f"{i:064x}"},
        )
        for i in range(count)
    ]
    digests = clip_digests(steps, "rgb")
    assert len(digests) == expected
    assert digests[0] == f"{0:064x}" and digests[-1] == f"{count - 1:064x}"
