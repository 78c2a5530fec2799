"""Answers that copy the prompt: a format error of their own kind, ``echo``, counted and shown.

The answers below are the ones Gemma 3 270M gave through llama.cpp (issue #28): every field a
placeholder or a field's description, each valid JSON of the right shape.
"""

import json

import pytest

from sortie.agents.mllm.aerial import answer_schema as aerial_schema
from sortie.agents.mllm.household_prompts import answer_schema as household_schema
from sortie.agents.mllm.household_prompts import parse_answer
from sortie.models.structured import ECHO, validate


def household(action: str, target: str, skill: str) -> str:
    """Return a homiebot answer as JSON."""
    subtask = {"action": action, "target": target, "place": None}
    return json.dumps({"analysis": "next", "subtask": subtask, "skill": skill})


@pytest.mark.parametrize(
    ("answer", "field"),
    [
        (household("...", "...", "..."), "subtask.action"),
        (household("pick", "<target>", "grasp"), "subtask.target"),
        (household("pick", "mug", "the offered skill (empty for end)"), "skill"),
    ],
)
def test_a_homiebot_answer_of_placeholders_or_descriptions_is_an_echo(answer, field):
    """'...', '<target>' or a field's own description are the prompt copied, not an answer."""
    value, error = validate(household_schema(True), answer, parse_answer)
    assert value is None and error is not None
    assert error.startswith(ECHO) and error[len(ECHO) :].startswith(field)


def test_a_real_answer_is_no_echo():
    """A subtask in the model's own words passes, an empty target for end included."""
    for answer in (household("pick", "red mug", "grasp"), household("end", "", "")):
        value, error = validate(household_schema(True), answer, parse_answer)
        assert error is None and value is not None


def test_the_aerial_echo_and_a_box_outside_the_image():
    """Gemma's aerial answer copies 'why this action, briefly'; a box of -1..-4 is off-schema."""
    schema = aerial_schema(box=True, reasoning=True)
    copied = {"box": None, "reasoning": "why this action, briefly", "action": "up"}
    _, error = validate(schema, json.dumps(copied))
    assert error is not None and error.startswith(ECHO + "reasoning")
    negative = {"box": [-1, -2, -3, -4], "reasoning": "the car is ahead", "action": "up"}
    _, error = validate(schema, json.dumps(negative))
    assert error is not None and error.startswith("does not follow the schema: box.0")


def test_repeating_the_prompts_example_answer_is_an_echo():
    """Gemma's answer once the prompt showed a real example: that example, word for word."""
    from sortie.agents.mllm.household_prompts import EXAMPLE_SENTENCES, SEEN_EXAMPLE

    copied = json.dumps(
        {
            "analysis": SEEN_EXAMPLE,
            "subtask": {"action": "pick", "target": "red mug", "place": "table"},
            "skill": "grasp",
        }
    )
    schema = household_schema(True)
    _, error = validate(schema, copied, parse_answer, EXAMPLE_SENTENCES)
    assert error is not None and error.startswith(ECHO + "analysis")
    own = copied.replace(SEEN_EXAMPLE, "The mug is on the table to my left.")
    assert validate(schema, own, parse_answer, EXAMPLE_SENTENCES)[1] is None
