"""homiebot's in-context examples: expert rounds of train tasks, never of a test task."""

import json
from pathlib import Path

import pytest

from sortie.agents.mllm.household_prompts import EXAMPLE_NOTE, examples_for
from sortie.core.errors import ConfigError, ParameterError
from sortie.export.household import examples as made
from sortie.missions.household.records import Split
from sortie.missions.household.spec import household_task
from sortie.missions.loading import load_suite

PACKAGED = (
    Path(made.__file__).parents[2] / "agents" / "mllm" / "prompts" / "household_examples.json"
)


def packaged() -> list[dict]:
    """Return the packaged examples."""
    return json.loads(PACKAGED.read_text(encoding="utf-8"))


def test_the_packaged_examples_are_made_again_byte_for_byte():
    """The file is what the generator writes now (oracle, perfect skills, text observation)."""
    text = json.dumps(made.make_examples(), indent=1, ensure_ascii=False) + "\n"
    assert text == PACKAGED.read_text(encoding="utf-8")


def test_no_example_is_a_test_task_by_id_or_by_its_words():
    """Every example's episode is a train task, and no test task's instruction is shown."""
    tasks = {e.episode_id: household_task(e) for e in load_suite("household-v1").episodes}
    tests = {t.instruction for t in tasks.values() if t.split is Split.TEST}
    for example in packaged():
        assert tasks[example["episode_id"]].split is Split.TRAIN
        assert example["task"] not in tests and not any(t in example["request"] for t in tests)


@pytest.mark.parametrize("task", ["household-v1/0091", "household-v1/0080"])
def test_a_test_task_cannot_be_made_an_example(task):
    """The generator refuses, naming it, a test task or a train task that quotes one (0080)."""
    with pytest.raises(ConfigError, match=f"{task} is not a train task"):
        made._check_train(("household-v1/0002", task))


def test_examples_leave_out_the_task_being_played():
    """Asked for 2 while playing task 0002: the first two of the other tasks, as chat turns."""
    own = packaged()[0]["task"]
    shown = examples_for(own, 2)
    assert [m["role"] for m in shown] == ["user", "assistant"] * 2
    assert all(own not in m["content"] for m in shown)
    assert shown[0]["content"].startswith(EXAMPLE_NOTE)
    assert json.loads(shown[1]["content"])["subtask"]["action"]


def test_more_examples_than_there_are_is_refused():
    """Six of the nine are of other tasks than 0002's: seven is too many."""
    own = packaged()[0]["task"]
    assert len(examples_for(own, 6)) == 12
    with pytest.raises(ParameterError, match="examples: at most 6, got 7"):
        examples_for(own, 7)
