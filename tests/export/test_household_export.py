"""``sortie export sft|dpo`` from household runs: the requests homiebot sent, EMMOE's pairs."""

from __future__ import annotations

import base64
import io
import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from datasets import load_dataset
from PIL import Image

from sortie.core.errors import ConfigError
from sortie.export.replay import replay
from sortie.missions.household.executor import parse_verb
from sortie.missions.household.records import RoundStatus
from sortie.missions.household.skills import SKILLS, Profile
from sortie.run.store import Store
from sortie.testing.model_server import ModelServer
from tests.export.conftest import (
    WRONG_FIRST,
    HouseholdRuns,
    answers_of,
    cli,
    homiebot_args,
    run,
)
from tests.models.conftest import SECRET


def export(runs: HouseholdRuns, kind: str, run_id: str, out: Path, *more: str) -> Any:
    """Export ``run_id`` and load the dataset it wrote."""
    cli(["export", kind, "--run", run_id, "--store", str(runs.store), "--out", str(out), *more])
    return load(out)


def load(out: Path) -> Any:
    """Load an export (datasets caches by folder name: each load gets a cache of its own)."""
    return load_dataset(str(out), split="train", cache_dir=str(out.parent / f"{out.name}-cache"))


def rounds(record) -> list:
    return [s.part for s in record.steps if s.part is not None]


def answer(message: dict[str, Any]) -> dict[str, Any]:
    content = message["content"]
    return json.loads(content if isinstance(content, str) else content[0]["text"])


def sent(request: dict[str, Any]) -> list[tuple[str, list[str], list[np.ndarray]]]:
    """Return a request as the server got it: per message its role, texts and images."""
    out = []
    for message in request["messages"]:
        content = message["content"]
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts = [p["text"] for p in parts if p["type"] == "text"]
        images = [
            np.asarray(
                Image.open(io.BytesIO(base64.b64decode(p["image_url"]["url"].split(",")[1])))
            )
            for p in parts
            if p["type"] == "image_url"
        ]
        out.append((message["role"], texts, images))
    return out


def exported(row: dict[str, Any]) -> list[tuple[str, list[str], list[np.ndarray]]]:
    """Return an SFT row's request (its answer aside) in the same shape as ``sent``."""
    images = iter(row["images"])
    out = []
    for message in row["messages"][:-1]:
        texts = [p["text"] for p in message["content"] if p["type"] == "text"]
        shown = [np.asarray(next(images)) for p in message["content"] if p["type"] == "image"]
        out.append((message["role"], texts, shown))
    return out


def test_sft_rows_are_the_requests_homiebot_sent_and_the_answers_it_acted_on(household, tmp_path):
    """Row by row: the same messages, the same pixels, and the accepted answer after them."""
    rows = export(household, "sft", "homiebot", tmp_path / "sft")
    carried = [r for r in rounds(household.homiebot) if r.status is not RoundStatus.FAILURE]
    assert [row["round"] for row in rows] == [r.round for r in carried]
    first_asks = {}
    for request in household.requests:  # a re-ask repeats the round: keep its first request
        text = request["messages"][-1]["content"]
        text = text if isinstance(text, str) else text[0]["text"]
        if text.startswith("Task:"):
            first_asks.setdefault(int(text.split("Round ")[1].split(";")[0]), request)
    for row, record in zip(rows, carried, strict=True):
        server_saw, row_has = sent(first_asks[record.round]), exported(row)
        assert [(r, t) for r, t, _ in row_has] == [(r, t) for r, t, _ in server_saw]
        pairs = zip([i for *_, i in row_has], [i for *_, i in server_saw], strict=True)
        assert all(
            np.array_equal(a, b)
            for ours, theirs in pairs
            for a, b in zip(ours, theirs, strict=True)
        )
        said = answer(row["messages"][-1])
        assert said["subtask"]["action"] == record.action and said["skill"] == record.skill
        assert said["analysis"] == f"round {record.round - 1} as planned"  # round 1 failed
    assert len(rows[0]["images"]) == 4 and rows[0]["images"][0].size == (256, 256)


def test_sft_from_the_expert_writes_its_subtasks_with_a_templated_analysis(household, tmp_path):
    """The oracle's run: one row per round (all carried out, then end), answers from records."""
    rows = export(household, "sft", "oracle", tmp_path / "sft")
    records = rounds(household.oracle)
    assert len(rows) == len(records) and records[-1].status is RoundStatus.END
    first = answer(rows[0]["messages"][-1])
    assert first == {
        "analysis": "I hold nothing. The next step towards the task is to go to the table_0.",
        "subtask": {"action": "go_to", "target": "table_0", "place": None},
        "skill": "image_nav",
    }
    assert answer(rows[-1]["messages"][-1])["subtask"]["action"] == "end"
    manifest = json.loads((tmp_path / "sft" / "export.json").read_text())
    assert manifest["rows"] == len(rows) and manifest["run"] == "oracle"


def test_dpo_pairs_a_failed_subtask_with_the_replanned_one(household, tmp_path):
    """EMMOE's pair: at the failed round's request, the re-planned answer beats the failed one."""
    rows = export(household, "dpo", "homiebot", tmp_path / "dpo")
    (replan,) = [row for row in rows if row["kind"] == "replan"]
    assert replan["round"] == 1
    assert answer(replan["rejected"][0])["subtask"] == WRONG_FIRST["subtask"]
    assert answer(replan["chosen"][0])["subtask"]["action"] == "go_to"
    assert "Round 1;" in replan["prompt"][-1]["content"][0]["text"]


def test_dpo_corrects_a_failed_round_with_the_experts_choice_from_there(household, tmp_path):
    """The learner's failed round: the oracle's answer from that state beats the learner's."""
    rows = export(household, "dpo", "homiebot", tmp_path / "dpo")
    (correction,) = [row for row in rows if row["kind"] == "correction"]
    assert correction["round"] == 1
    assert answer(correction["rejected"][0])["subtask"] == WRONG_FIRST["subtask"]
    expert = export(household, "sft", "oracle", tmp_path / "sft")
    assert answer(correction["chosen"][0]) == answer(expert[0]["messages"][-1])


def test_a_repeated_subtask_is_corrected_and_never_an_example(household, tmp_path, monkeypatch):
    """The learner walks to the table twice: the oracle's next subtask beats the repeat.

    The repeat is neither an SFT row nor any other pair.
    """
    planned = answers_of(household.oracle)
    queue = [planned[0], planned[0], *planned[1:]]
    monkeypatch.setenv("SORTIE_MODEL_API_KEY", SECRET)
    own = replace(household, store=tmp_path / "s.db")  # the shared store stays as it was
    shutil.copy(household.store, own.store)
    with ModelServer(lambda messages: queue.pop(0), models=("test-vlm",)) as server:
        run(own.store, "household-smoke-v1", "repeat", "homiebot", *homiebot_args(server))
    pairs = export(own, "dpo", "repeat", tmp_path / "dpo")
    assert [row["kind"] for row in pairs if row["round"] == 2] == ["correction"]
    (pair,) = [row for row in pairs if row["round"] == 2]
    assert answer(pair["rejected"][0])["subtask"] == json.loads(planned[0])["subtask"]
    assert answer(pair["chosen"][0])["subtask"] == json.loads(planned[1])["subtask"]
    sft = export(own, "sft", "repeat", tmp_path / "sft")
    assert 2 not in sft["round"] and 3 in sft["round"]


def test_dpo_changes_order_action_and_skill_as_emmoe_does(household, tmp_path):
    """Each change is a worse answer: an unknown action, a weaker skill, the next subtask."""
    rows = export(household, "dpo", "oracle", tmp_path / "dpo")
    done = [r for r in rounds(household.oracle) if r.status is RoundStatus.SUCCESS]
    kinds = [row["kind"] for row in rows]
    assert kinds.count("order") == len(done) and kinds.count("action") == len(done)
    assert "replan" not in kinds  # the oracle with perfect skills never fails
    by_round = {r.round: r for r in rounds(household.oracle)}
    objects = household.oracle.header.episode.mission["objects"]
    for row in rows:
        chosen, rejected = answer(row["chosen"][0]), answer(row["rejected"][0])
        record = by_round[row["round"]]
        assert chosen["subtask"]["action"] == record.action
        if row["kind"] == "action":  # neither an offered action nor one of its aliases
            assert parse_verb(rejected["subtask"]["action"]) is None
        if row["kind"] == "skill":
            large = objects[record.target_object]["role"] != "item"
            rate = {s.name: s.rate(record.verb, large, Profile.DEFAULT) for s in SKILLS}
            assert rate[rejected["skill"]] < rate[chosen["skill"]]
        if row["kind"] == "order":
            after = by_round[row["round"] + 1]
            assert rejected["subtask"]["action"] == after.action
            assert rejected["subtask"]["target"] == after.target


def test_dpo_changes_follow_the_seed(household, tmp_path):
    """The same seed gives the same pairs; another seed other replacements."""
    one = export(household, "dpo", "oracle", tmp_path / "a", "--seed", "3")
    two = export(household, "dpo", "oracle", tmp_path / "b", "--seed", "3")
    other = export(household, "dpo", "oracle", tmp_path / "c", "--seed", "4")
    rejected = [
        [answer(r["rejected"][0]) for r in rows if r["kind"] == "action"]
        for rows in (one, two, other)
    ]
    assert rejected[0] == rejected[1] and rejected[0] != rejected[2]


def test_text_observation_export_is_plain_text_without_images(household, tmp_path):
    """``-a observation=text``: string contents, the views as lists of names, no image column."""
    rows = export(household, "sft", "oracle", tmp_path / "sft", "-a", "observation=text")
    assert "images" not in rows.column_names
    user = rows[0]["messages"][-2]["content"]
    assert isinstance(user, str) and "What the head camera sees, per view:" in user


@pytest.mark.parametrize(
    ("kind", "run_id", "said"),
    [
        ("demos", "oracle", "sortie export demos reads aerial or rescue runs"),
        ("sft", "garbage", "has no usable rounds: nothing to export"),
        ("sft", "nobody", "run 'nobody' is not in"),
        ("pretrain", "oracle", "expected one of sft, dpo, demos"),
    ],
)
def test_an_export_that_cannot_be_made_says_why_and_writes_nothing(
    household, tmp_path, kind, run_id, said
):
    out = tmp_path / "out"
    words = ["export", kind, "--run", run_id, "--store", str(household.store), "--out", str(out)]
    assert said in " ".join(cli(words, code=2).split())
    assert not out.exists() and not list(tmp_path.iterdir())


def test_an_export_never_writes_into_a_folder_in_use(household, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    words = ["export", "sft", "--run", "oracle", "--store", str(household.store)]
    assert "is not an empty folder" in cli([*words, "--out", str(tmp_path / "out")], code=2)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["notes.txt"]


def test_a_record_that_does_not_replay_as_stored_is_refused_naming_the_step(household):
    """A pose moved by 5 cm in the third step (a damaged record) is found, not exported."""
    store = Store(household.store)
    (episode,) = store.episodes("oracle")
    config = store.run_config("oracle")
    store.close()
    steps = list(household.oracle.steps)
    pose = steps[2].pose
    steps[2] = steps[2].model_copy(
        update={"pose": type(pose)(pose.x + 0.05, pose.y, pose.z, pose.yaw)}
    )
    damaged = type(household.oracle)(household.oracle.header, steps, household.oracle.footer)
    with pytest.raises(ConfigError, match=f"step {steps[2].index} does not replay"):
        list(replay(damaged, episode.record, config, []))
