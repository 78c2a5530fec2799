"""``sortie export sft --paraphrase N``: rewrites of each sample by a model, failures counted."""

from __future__ import annotations

import json

from datasets import load_dataset

from sortie.testing.model_server import ModelServer
from tests.export.conftest import cli
from tests.models.conftest import FAST, SECRET


def rewriter(messages: list[dict]) -> str:
    """Rewrite 1 of a pair is good JSON; rewrite 2 is garbage every time it is asked."""
    asked = messages[-1]["content"]
    if asked.startswith("Rewrite 2:"):
        return "I would rather not."
    given = json.loads(asked.split(": ", 1)[1])
    return json.dumps({"task": f"Kindly: {given['task']}", "analysis": "said again"})


def test_each_sample_gets_its_rewrites_and_a_failed_one_is_counted(
    household, tmp_path, monkeypatch
):
    monkeypatch.setenv("SORTIE_MODEL_API_KEY", SECRET)
    out = tmp_path / "sft"
    with ModelServer(rewriter, models=("writer",)) as server:
        settings = {"base_url": server.base_url, "model": "writer", **FAST}
        words = [w for k, v in settings.items() for w in ("-m", f"{k}={v}")]
        said = cli(
            ["export", "sft", "--run", "oracle", "--store", str(household.store)]
            + ["--out", str(out), "--paraphrase", "2", *words]
        )
    rows = load_dataset(str(out), split="train", cache_dir=str(tmp_path / "cache"))
    originals = [r for i, r in enumerate(rows) if i % 2 == 0]
    rewrites = [r for i, r in enumerate(rows) if i % 2 == 1]
    assert len(originals) == len(rewrites) > 0
    assert f"paraphrases: {len(rewrites)}" in said
    assert f"paraphrases failed: {len(rewrites)}" in said
    for original, rewrite in zip(originals, rewrites, strict=True):
        task = original["messages"][-2]["content"][0]["text"].split("\n")[0][len("Task: ") :]
        assert rewrite["messages"][-2]["content"][0]["text"].startswith(f"Task: Kindly: {task}")
        ours, theirs = (
            json.loads(r["messages"][-1]["content"][0]["text"]) for r in (original, rewrite)
        )
        assert theirs["analysis"] == "said again"
        assert (theirs["subtask"], theirs["skill"]) == (ours["subtask"], ours["skill"])


def test_paraphrase_is_for_sft_only(household, tmp_path):
    words = ["export", "dpo", "--run", "oracle", "--store", str(household.store)]
    said = cli([*words, "--out", str(tmp_path / "o"), "--paraphrase", "1"], code=2)
    assert "for sft only" in said and not (tmp_path / "o").exists()
