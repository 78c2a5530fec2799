"""``sortie export demos``: a row per step, checked against the record and its stored frames."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import numpy as np
import pytest
from datasets import load_dataset

from sortie.export.demos import MULTIROTOR, WALKER, action_vector, split_of, split_point
from sortie.run.frames import FRAMES_FOLDER, load_frame
from tests.export.conftest import cli, run


def export(store: Path, run_id: str, out: Path, *more: str) -> datasets.DatasetDict:
    """Export run ``run_id`` of ``store`` as demos into ``out``; return it as loaded."""
    cli(["export", "demos", "--run", run_id, "--store", str(store), "--out", str(out), *more])
    return load_dataset(str(out), cache_dir=str(out.parent / f"{out.name}-cache"))


def between(pair) -> float:
    """Return a validation share that puts exactly one of the pair's two episodes in each split."""
    low, high = sorted(split_point(episode) for episode in pair.records)
    return (low + high) / 2


def test_demo_rows_are_the_records_steps_with_the_frames_the_agent_saw(rescue_store, tmp_path):
    """Image k+1 is the frame stored after step k; state k+1 is step k's recorded pose."""
    store, record = rescue_store
    out = tmp_path / "demos"
    rows = export(store, "oracle", out)[split_of(record.header.episode.episode_id)]
    assert len(rows) == len(record.steps)
    later = rows.select(range(1, len(rows)))
    for row, before, step in zip(later, record.steps[:-1], record.steps[1:], strict=True):
        assert np.allclose(row["observation.state"], before.pose.as_list())
        assert np.array_equal(
            np.asarray(row["observation.image"]), load_frame(store.parent, before.frames["rgb"])
        )
        assert json.loads(row["action.json"]) == step.action.model_dump(mode="json")
    last = rows[len(rows) - 1]
    assert last["next.done"] and last["next.success"] == (record.footer.outcome == "success")
    assert [r["frame_index"] for r in rows] == list(range(len(rows)))
    manifest = json.loads((out / "export.json").read_text())
    assert manifest["settings"]["action"] == list(WALKER)


def test_pose_after_each_step_and_stage_labels_are_the_records(rescue_pair, tmp_path):
    """next.observation.state, stage and stage_index of every row are its step's, as recorded."""
    loaded = export(rescue_pair.store, "pair", tmp_path / "demos")
    rows = datasets.concatenate_datasets(list(loaded.values()))
    assert len(rows) == sum(len(r.steps) for r in rescue_pair.records.values())
    for row in rows:
        step = rescue_pair.records[row["episode_id"]].steps[row["frame_index"]]
        assert np.allclose(row["next.observation.state"], step.pose.as_list())
        assert row["stage"] == (step.stage or "")
        assert row["stage_index"] == (list(step.stages).index(step.stage) if step.stage else -1)
    assert len(set(rows["stage_index"])) > 2  # the labels change as the stages are done


def test_the_features_are_images_arrays_and_plain_columns(rescue_pair, tmp_path):
    """RGB is a datasets.Image, depth a float32 and semantic an int32 Array2D of the RGB's size."""
    features = export(rescue_pair.store, "pair", tmp_path / "demos")["train"].features
    assert isinstance(features["observation.image"], datasets.Image)
    for column, dtype in (("observation.depth", "float32"), ("observation.semantic", "int32")):
        assert isinstance(features[column], datasets.Array2D)
        assert features[column].shape == (128, 128) and features[column].dtype == dtype
    assert features["stage_index"] == datasets.Value("int64")
    assert features["next.observation.state"] == datasets.List(datasets.Value("float64"))


def test_depth_and_semantic_frames_have_the_rgb_shape_and_their_dtypes(rescue_pair, tmp_path):
    """Read back as arrays: depth float32 metres, semantic ids each named by semantic_classes."""
    rows = export(rescue_pair.store, "pair", tmp_path / "demos")["train"]
    row = rows.with_format("numpy")[len(rows) // 2]
    depth, semantic = row["observation.depth"], row["observation.semantic"]
    assert depth.dtype == np.float32 and depth.shape == row["observation.image"].shape[:2]
    assert semantic.shape == depth.shape and np.issubdtype(semantic.dtype, np.integer)
    assert np.nanmin(depth) > 0.0
    named = {int(k) for k in json.loads(str(row["semantic_classes"]))}
    assert set(np.unique(semantic).tolist()) - {0} <= named


def test_splits_hold_whole_episodes_as_their_episode_ids_hash(rescue_pair, tmp_path):
    """Each episode's every step is in the split split_of gives it, frames 0 to the last."""
    share = between(rescue_pair)
    loaded = export(rescue_pair.store, "pair", tmp_path / "demos", "--validation", str(share))
    assert sorted(loaded) == ["train", "validation"]
    for name, rows in loaded.items():
        (episode,) = set(rows["episode_id"])
        assert split_of(episode, share) == name
        assert rows["frame_index"] == list(range(len(rescue_pair.records[episode].steps)))
    manifest = json.loads((tmp_path / "demos" / "export.json").read_text())
    assert manifest["settings"]["validation"] == share


def test_an_episode_lands_in_the_same_split_whatever_else_the_run_holds(
    rescue_pair, rescue_store, tmp_path
):
    """Episode 0000 alone and beside 0001: the same split, by its id, not by its neighbours."""
    share = between(rescue_pair)
    store, record = rescue_store
    episode = record.header.episode.episode_id
    alone = export(store, "oracle", tmp_path / "alone", "--validation", str(share))
    beside = export(rescue_pair.store, "pair", tmp_path / "beside", "--validation", str(share))
    (name,) = alone
    assert episode in beside[name]["episode_id"]
    assert beside[name]["observation.depth"] == alone[name]["observation.depth"]


def test_a_run_played_without_recorded_frames_is_exported_with_every_image(rescue_pair, tmp_path):
    """No frame store beside the run: the replay renders RGB, depth and semantic for each row."""
    assert not (rescue_pair.store.parent / FRAMES_FOLDER).exists()
    rows = export(rescue_pair.store, "pair", tmp_path / "demos")["train"]
    columns = ("observation.image", "observation.depth", "observation.semantic")
    assert all(row[c] is not None for row in rows for c in columns)


def test_a_larger_validation_share_only_moves_episodes_into_validation():
    """split_of is monotone in the share: what 0.1 puts in validation, 0.5 does too."""
    episodes = [f"rescue-l3-v2/{i:04d}" for i in range(200)]
    at_10 = {e for e in episodes if split_of(e, 0.1) == "validation"}
    at_50 = {e for e in episodes if split_of(e, 0.5) == "validation"}
    assert at_10 < at_50 and 5 < len(at_10) < 40 and 60 < len(at_50) < 140


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["--run", "nobody"], "run 'nobody' is not in"),
        (["--run", "pair", "--validation", "1"], "--validation 1.0: expected a share in [0, 1)"),
        (["--run", "pair", "-a", "x=1"], "sortie export demos takes no -a arguments"),
    ],
)
def test_a_demos_export_that_cannot_be_made_says_why_and_writes_nothing(
    rescue_pair, tmp_path, words, said
):
    """An unknown run, a share out of range or an -a argument: one line, no folder."""
    out = tmp_path / "out"
    base = ["export", "demos", "--store", str(rescue_pair.store), "--out", str(out)]
    assert said in " ".join(cli([*base, *words], code=2).split())
    assert not list(tmp_path.iterdir())


def test_action_vectors_put_each_action_in_its_named_place():
    """Hand-made actions: every entry where ACTION_NAMES says, all zeros for an invalid one."""
    move = {"type": "move", "turn": -15.0, "speed": 1.5, "pitch": -30.0}
    assert action_vector("rescue", move) == [-15.0, 1.5, 1.0, -30.0, 0.0, 0.0, 0.0]
    grab = {"type": "interact", "kind": "grab"}
    assert action_vector("rescue", grab) == [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    fly = {"type": "fly", "primitive": "up", "magnitude": 4.0, "report": None}
    assert action_vector("aerial", fly)[MULTIROTOR.index("up")] == 4.0
    assert sum(action_vector("aerial", fly)) == 4.0
    land = {"type": "task", "kind": "land", "report": None}
    assert action_vector("aerial", land) == [0.0] * 8 + [1.0, 0.0, 0.0, 0.0]
    assert action_vector("aerial", {"type": "invalid", "raw": "?", "error": "x"}) == [0.0] * 12


def test_a_run_through_its_own_camera_is_exported_at_that_camera(tmp_path):
    """The frames are replayed through the camera the run gave its agent, not the family's."""
    store = tmp_path / "s.db"
    run(store, "rescue-smoke-v2", "cam", "oracle", "--camera", "48x32@110")
    rows = export(store, "cam", tmp_path / "demos")
    split = next(iter(rows.values()))
    assert np.asarray(split[0]["observation.image"]).shape == (32, 48, 3)
    assert np.asarray(split[0]["observation.depth"]).shape == (32, 48)
