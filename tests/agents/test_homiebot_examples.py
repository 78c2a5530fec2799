"""``homiebot`` with in-context examples: an answer copied from one of them is an echo."""

import json

import pytest

from sortie.agents.mllm.household_prompts import copied_analyses, examples_for
from sortie.testing.model_server import ModelServer
from tests.agents.test_homiebot import SPEC, homiebot
from tests.missions.household.conftest import kitchen, play  # noqa: F401 - fixtures
from tests.models.conftest import secret  # noqa: F401 - the fixture

pytestmark = pytest.mark.usefixtures("secret")


def first_example(messages: list[dict]) -> str:
    """Answer with the first example round's answer, word for word (a weak model's habit)."""
    return next(m["content"] for m in messages if m["role"] == "assistant")


def test_an_answer_copied_from_an_example_round_is_an_echo(play):  # noqa: F811
    """The first example's answer, naming a tv stand the kitchen round never shows, is an echo."""
    with ModelServer(first_example) as server:
        recorder = play(homiebot(server, examples="2", reasks="0"), SPEC, skills="perfect")
    calls = recorder.steps[0].model_calls
    assert calls and calls[-1].error == "echo"


def step(text: str) -> dict:
    return {"role": "user", "content": text}


def answer(analysis: str) -> dict:
    subtask = {"action": "go_to", "target": "x", "place": None}
    return {"role": "assistant", "content": json.dumps({"analysis": analysis, "subtask": subtask})}


def test_an_example_analysis_naming_what_this_round_shows_may_be_the_models_own():
    """An analysis whose names all appear in this round is not counted as copied."""
    said = "I hold nothing. The next step towards the task is to go to the fridge_0."
    assert copied_analyses([answer(said)], step("- front: fridge_0, table_0")) == frozenset()
    assert copied_analyses([answer(said)], step("- front: table_0")) == {said}


def test_an_example_analysis_naming_nothing_is_never_counted_as_copied():
    """``Every part of the task is done, so I end.`` names nothing: any round may say it."""
    assert copied_analyses([answer("Every part of the task is done, so I end.")], step("")) == set()


def test_the_packaged_examples_name_objects_a_kitchen_round_does_not():
    """The packaged example rounds give copied analyses for a round that names only its own."""
    shown = examples_for("Tidy up.", 3)
    assert copied_analyses(shown, step("- front: mug_1, table_0"))
