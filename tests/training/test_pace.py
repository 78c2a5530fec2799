"""The training loop on a slow machine: waits scaled or set, errors replayed, steps checked."""

from __future__ import annotations

import json

import pytest

from sortie.core.errors import ParameterError
from sortie.core.records import Outcome
from sortie.run.store import Store
from sortie.testing.model_server import Fault, ModelServer
from sortie.training.finetune import TrainSettings
from sortie.training.loop import LoopSettings, evaluate, scoring_request
from sortie.training.pace import IDLE_WAIT, scaled_waits
from tests.export.conftest import cli

END = json.dumps({"analysis": "done", "subtask": {"action": "end"}, "skill": ""})


def outcomes(store) -> list[Outcome]:
    with Store(store) as opened:
        return [episode.outcome for episode in opened.episodes("r")]


@pytest.mark.parametrize("steps", ["0", "-1"])
def test_sft_steps_below_one_are_refused(tmp_path, steps):
    """``--sft-steps 0`` (nothing) and ``-1`` (transformers' "by epochs") stop with the rule."""
    output = cli(["train", "homiebot", "--out", str(tmp_path), "--sft-steps", steps], code=2)
    assert f"--sft-steps must be 1 or more (SFT comes first), got {steps}" in output


def test_negative_dpo_steps_are_refused():
    """A negative DPO step count is refused, naming what is allowed."""
    with pytest.raises(ParameterError, match="--dpo-steps must be 0 .* got -2"):
        TrainSettings(dpo_steps=-2)


def test_a_zero_answer_timeout_is_refused():
    """An answer time-out of 0 s is refused before anything starts."""
    with pytest.raises(ParameterError, match="timeout must be > 0 seconds, got 0"):
        LoopSettings(timeout=0)


def test_waits_grow_with_the_load_per_core():
    """On a machine three times busier than its cores, the default waits are three times longer."""
    waits = scaled_waits(None, None, load=3.0)
    assert (waits.answer, waits.start) == (3 * IDLE_WAIT, 3 * IDLE_WAIT)


def test_an_idle_machine_keeps_the_idle_waits():
    """A load below one per core never shortens the waits."""
    assert scaled_waits(None, None, load=0.2).answer == IDLE_WAIT


def test_waits_given_are_kept_whatever_the_load():
    """An answer time-out and a start limit given are used as they are."""
    waits = scaled_waits(50.0, 70.0, load=8.0)
    assert (waits.answer, waits.start) == (50.0, 70.0)


def test_a_resumed_scoring_plays_an_errored_episode_again(tmp_path, monkeypatch):
    """An episode that ended in an error (the server failed) is played again on resume."""
    store, lines = tmp_path / "results.db", []
    settings = LoopSettings(test_tasks=1, repeats=1)
    with ModelServer(lambda messages: END, models=("m",)) as server:
        monkeypatch.setenv("SORTIE_MODEL_BASE_URL", server.base_url)
        monkeypatch.setenv("SORTIE_MODEL_MAX_RETRIES", "0")
        # The preflight's content probes would take the injected fault, not the episode.
        monkeypatch.setenv("SORTIE_MODEL_CHECK_CONTENT", "false")
        request = scoring_request(settings, store, "r", {"model": "m"})
        server.inject(Fault.SERVER_ERROR)
        evaluate(request, lines.append)
        assert outcomes(store) == [Outcome.ERROR]
        evaluate(request, lines.append)
    assert outcomes(store) != [Outcome.ERROR]
    assert lines[0] == "1 of 1 episodes to play" and lines[2] == "1 of 1 episodes to play"


def test_scoring_says_a_line_per_episode(tmp_path, monkeypatch):
    """Each scored episode is said as it ends: its number, id, outcome, steps and time."""
    lines: list[str] = []
    settings = LoopSettings(test_tasks=2, repeats=1)
    with ModelServer(lambda messages: END, models=("m",)) as server:
        monkeypatch.setenv("SORTIE_MODEL_BASE_URL", server.base_url)
        evaluate(scoring_request(settings, tmp_path / "r.db", "r", {"model": "m"}), lines.append)
    assert lines[0] == "2 of 2 episodes to play"
    assert [line.split(":")[0] for line in lines[1:]] == [
        "episode 1/2 household-v1/0091",
        "episode 2/2 household-v1/0092",
    ]
