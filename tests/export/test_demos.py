"""``sortie export demos``: a row per step, checked against the record and its stored frames."""

from __future__ import annotations

import json

import numpy as np
from datasets import load_dataset

from sortie.export.demos import MULTIROTOR, WALKER, action_vector
from sortie.run.frames import load_frame
from tests.export.conftest import cli


def test_demo_rows_are_the_records_steps_with_the_frames_the_agent_saw(rescue_store, tmp_path):
    """Image k+1 is the frame stored after step k; state k+1 is step k's recorded pose."""
    store, record = rescue_store
    out = tmp_path / "demos"
    cli(["export", "demos", "--run", "oracle", "--store", str(store), "--out", str(out)])
    rows = load_dataset(str(out), split="train", cache_dir=str(tmp_path / "cache"))
    assert len(rows) == len(record.steps)
    later = rows.select(range(1, len(rows)))
    for row, before, step in zip(later, record.steps[:-1], record.steps[1:], strict=True):
        assert np.allclose(row["observation.state"], before.pose.as_list())
        assert np.array_equal(
            np.asarray(row["observation.image"]), load_frame(store.parent, before.frames["rgb"])
        )
        assert json.loads(row["action.json"]) == step.action.model_dump(mode="json")
        assert row["stage"] == (step.stage or "")
    last = rows[len(rows) - 1]
    assert last["next.done"] and last["next.success"] == (record.footer.outcome == "success")
    assert [r["frame_index"] for r in rows] == list(range(len(rows)))
    manifest = json.loads((out / "export.json").read_text())
    assert manifest["settings"]["action"] == list(WALKER)


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
