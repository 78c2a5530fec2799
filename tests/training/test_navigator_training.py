"""``sortie train navigator`` at toy size through the real agent, and its guard rails."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from sortie import suites
from sortie.agents.navigator import NavigatorAgent, policy
from sortie.core.errors import ConfigError
from sortie.export.demos import split_of
from sortie.run.store import Store
from sortie.training.navigator import episodes
from sortie.training.navigator.data import Sequence, load_sequences
from sortie.training.navigator.learning import FitSettings, fit
from sortie.training.navigator.models import chosen_episodes
from tests.export.conftest import cli

# Under pytest -n one process runs this module: its fixture (the toy pipeline) is made once.
pytestmark = pytest.mark.xdist_group(__name__)

TOY = [
    "train",
    "navigator",
    "--episodes",
    "5",
    "--camera",
    "32x32@90",
    "--size",
    "16",
    "--width",
    "4",
    "--hidden",
    "16",
    "--epochs",
    "2",
    "--dagger-epochs",
    "1",
    "--rollout-steps",
    "50",
    "--levels",
    "L1",
    "--shares",
    "0.4,1",
]
SCORED = ["--eval-suites", "rescue-smoke-v2", "--eval-limit", "1", "--baselines", "oracle"]
PHASES = [
    "episodes",
    "expert",
    "demos",
    "share-40/bc",
    "share-40/dagger-1",
    "share-100/bc",
    "share-100/dagger-1",
    "evaluate/oracle",
    "evaluate/navigator-share-40",
    "evaluate/navigator-share-100",
]


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Run the toy pipeline once; return its folder and output."""
    out = tmp_path_factory.mktemp("navigator") / "train"
    return out, cli([*TOY, *SCORED, "--out", str(out)])


def test_the_toy_pipeline_trains_and_scores_the_navigator(toy):
    """Every phase runs and is timed, and the checkpoint plays the evaluation through the store."""
    out, output = toy
    timed = json.loads((out / "training.json").read_text())["phases"]
    assert list(timed) == PHASES
    assert all(phase["seconds"] >= 0 for phase in timed.values())
    agent = NavigatorAgent(str(out / "share-100" / "navigator.pt"))
    assert agent.net.shape == policy.NetShape(size=16, width=4, hidden=16)
    with Store(out / "results.db") as store:
        for run in ("oracle", "navigator-share-40", "navigator-share-100"):
            assert len(store.episodes(run)) == 1, run
        assert len(store.episodes("expert")) == 5
    assert "[share-100/dagger-1] done" in output
    assert "navigator-share-40" in output and "oracle" in output  # the table of every run
    assert (out / "stage-cascade.png").read_bytes()[:4] == b"\x89PNG"


def test_the_smaller_share_learns_only_from_its_episodes(toy):
    """The 40 % model's demos and rollouts are the chosen train episodes, fewer than all."""
    out, output = toy
    (suite,) = (out / "episodes").glob("*.jsonl")
    played = suites.read(suite).episodes
    chosen = chosen_episodes(played, 0.4, 70000)
    train = [e for e in played if split_of(e.episode_id) == "train"]
    assert 1 <= len(chosen) < len(train)
    assert f"share-40: {len(chosen)} of {len(train)} train episodes" in output
    rolled = {s.episode_id for s in load_sequences(out / "share-40" / "rollouts-1.npz")}
    assert rolled == chosen


def test_dagger_labels_the_states_the_learner_visited(toy):
    """The round's rollouts hold oracle labels for steps of the train split's episodes."""
    out, _ = toy
    rollouts = load_sequences(out / "share-100" / "rollouts-1.npz")
    assert rollouts and all(len(s) <= 50 for s in rollouts)
    assert all(s.episode_id.startswith("navigator-train-l1-seed70001/") for s in rollouts)
    assert all(0 <= s.labels.min() and s.labels.max() < len(policy.ACTIONS) for s in rollouts)


def test_a_second_call_resumes_without_training_again(toy):
    """Run again with the same folder, every saved phase is skipped and the weights stay."""
    out, _ = toy
    before = (out / "share-100" / "navigator.pt").read_bytes()
    output = cli([*TOY, *SCORED, "--out", str(out)])
    for phase in ("demos", "share-40", "share-100"):
        assert f"[{phase}] skipped" in output
    assert (out / "share-100" / "navigator.pt").read_bytes() == before


def test_a_model_stopped_after_its_bc_resumes_at_its_dagger_round(toy):
    """Without its DAgger checkpoint, a model trains that round again: the same weights."""
    out, _ = toy
    before = (out / "share-100" / "navigator.pt").read_bytes()
    for name in ("navigator.pt", "dagger-1.pt"):
        (out / "share-100" / name).unlink()
    output = cli([*TOY, "--eval-suites", "", "--out", str(out)])
    assert "[share-100/bc] skipped" in output and "[share-100/dagger-1] done" in output
    assert "[share-40] skipped" in output
    assert (out / "share-100" / "navigator.pt").read_bytes() == before


def test_a_new_share_adds_only_its_own_phases(toy):
    """Another share in the same folder trains only that model; the data and others are kept."""
    out, _ = toy
    before = (out / "share-100" / "navigator.pt").read_bytes()
    output = cli([*TOY, "--shares", "0.4,0.6,1", "--eval-suites", "", "--out", str(out)])
    assert "[share-60/bc] done" in output and "[share-60/dagger-1] done" in output
    for phase in ("demos", "share-40", "share-100"):
        assert f"[{phase}] skipped" in output
    assert (out / "share-100" / "navigator.pt").read_bytes() == before


def test_the_same_settings_give_the_same_checkpoint(toy, tmp_path):
    """A second pipeline in another folder, same settings, writes the same checkpoint bytes."""
    out, _ = toy
    cli([*TOY, "--shares", "1", "--eval-suites", "", "--out", str(tmp_path / "again")])
    again = tmp_path / "again" / "share-100" / "navigator.pt"
    assert again.read_bytes() == (out / "share-100" / "navigator.pt").read_bytes()


def test_other_settings_in_the_same_folder_are_refused(toy):
    """A folder made with other training settings is refused, naming what differs."""
    out, _ = toy
    output = " ".join(cli([*TOY, "--out", str(out), "--epochs", "3"], code=2).split())
    assert f"{out / 'share-40'}: made with other settings (fit differ)" in output
    output = " ".join(cli([*TOY, "--out", str(out), "--episodes", "6"], code=2).split())
    assert f"{out}: made with other settings (episodes differ)" in output


def test_a_committed_seed_is_refused_before_generating(tmp_path):
    """A seed that gives a committed suite's generation seed stops the command at once."""
    output = cli(["train", "navigator", "--seed", "999", "--out", str(tmp_path / "t")], code=2)
    assert "seed 1000 is rescue-l1-v2 (L1)'s" in " ".join(output.split())
    assert not (tmp_path / "t" / "episodes").exists() or not any(
        (tmp_path / "t" / "episodes").iterdir()
    )


def test_a_committed_episode_is_refused():
    """An episode of a committed suite cannot be training data: its id is named."""
    committed = suites.read("rescue-smoke-v2").episodes[0]
    with pytest.raises(ConfigError, match="rescue-smoke-v2/0000 is in rescue-smoke-v2"):
        episodes.check_disjoint([committed], episodes.held_out(), "train.jsonl")


def test_a_committed_world_under_another_id_is_refused():
    """An episode built on a committed episode's world seed is refused, whatever its id."""
    committed = suites.read("rescue-l3-v2").episodes[4]
    renamed = committed.model_copy(update={"episode_id": "mine/0000"})
    with pytest.raises(ConfigError, match=f"world seed {committed.world.seed} is that of"):
        episodes.check_disjoint([renamed], episodes.held_out(), "train.jsonl")


def test_generated_training_episodes_are_disjoint(tmp_path):
    """Training suites from the default seed share nothing with the committed suites."""
    (path,) = episodes.training_suites(tmp_path, ["L1"], 2, 70000, lambda line: None)
    held = episodes.held_out()
    for episode in suites.read(path).episodes:
        assert episode.episode_id not in held.episodes
        assert episode.world.seed not in held.worlds


def tiny_sequences() -> list[Sequence]:
    """Return three made-up episodes of a few steps."""
    rng = np.random.default_rng(3)
    return [
        Sequence(
            f"e/{k}",
            rng.random((4 + k, 4, 16, 16), dtype=np.float32),
            (np.arange(4 + k) > 2).astype(np.float32),
            rng.integers(0, len(policy.ACTIONS), 4 + k),
            rng.random((2, 3, 16, 16), dtype=np.float32),
        )
        for k in range(3)
    ]


def test_the_same_seed_gives_the_same_weights():
    """Two fits from the same seed and data end with identical weights."""
    weights = []
    for _ in range(2):
        with policy.deterministic(5):
            net = policy.NavigatorNet(policy.NetShape(size=16, width=4, features=8, hidden=8))
            settings = FitSettings(epochs=2, batch=2, seed=5)
            fit(net, tiny_sequences(), [], settings, lambda line: None)
        weights.append(net.state_dict())
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


def test_bad_settings_are_refused_at_once(tmp_path):
    """Impossible settings are all named in one line, before anything is written."""
    words = ["train", "navigator", "--episodes", "0", "--beta", "2", "--camera", "0x5"]
    words += ["--shares", "0,1", "--workers", "0", "--eval-limit", "0"]
    output = " ".join(cli([*words, "--out", str(tmp_path / "t")], code=2).split())
    assert "--episodes 0: at least 1" in output and "--beta 2.0: a chance in [0, 1]" in output
    assert "size 0x5 outside" in output and "--workers 0: at least 1" in output
    assert "--eval-limit 0: at least 1" in output
    assert "--shares 0.0,1.0: shares in (0, 1]" in output
    assert not (tmp_path / "t").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_a_gpu_this_machine_lacks_is_refused_before_anything_runs(tmp_path):
    """``--device cuda`` without a CUDA GPU stops at once, saying what to do."""
    output = " ".join(
        cli(
            ["train", "navigator", "--device", "cuda", "--out", str(tmp_path / "t")], code=2
        ).split()
    )
    assert "--device cuda: this torch sees no CUDA GPU" in output and "--device cpu" in output
    output = " ".join(
        cli(["train", "navigator", "--device", "gpu", "--out", str(tmp_path / "t")], code=2).split()
    )
    assert "--device gpu: not a torch device" in output
    assert not (tmp_path / "t").exists()


def test_a_share_keeps_train_episodes_of_every_level():
    """Per level, a share keeps that share of the train split (rounded), the same every time."""
    played = [*suites.read("rescue-l1-v2").episodes, *suites.read("rescue-l2-v2").episodes]
    train = {
        level: [
            e.episode_id for e in played if e.level == level and split_of(e.episode_id) == "train"
        ]
        for level in ("L1", "L2")
    }
    chosen = chosen_episodes(played, 0.1, 7)
    assert chosen == chosen_episodes(played, 0.1, 7)
    for ids in train.values():
        assert len(chosen & set(ids)) == max(1, int(0.1 * len(ids) + 0.5))
    assert chosen != chosen_episodes(played, 0.1, 8)  # the seed draws them
    assert chosen_episodes(played, 1.0, 7) == {i for ids in train.values() for i in ids}
