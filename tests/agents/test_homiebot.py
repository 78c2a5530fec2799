"""``homiebot``: whole kitchen episodes against the scripted test server (a double, not a model)."""

import json
from collections.abc import Callable, Sequence

import pytest

from sortie.agents.mllm import HomieBotAgent
from sortie.agents.mllm.household_prompts import parse_answer
from sortie.agents.mllm.prompts import Prompts, recover
from sortie.core.errors import ParameterError
from sortie.core.observation import Sensor
from sortie.metrics.household import score_household
from sortie.testing.model_server import ModelServer
from tests.missions.household.conftest import (  # noqa: F401 - fixtures
    PUT_MUG,
    as_trajectory,
    kitchen,
    play,
)
from tests.missions.household.kitchen import episode
from tests.models.conftest import FAST, secret  # noqa: F401 - the fixture

pytestmark = pytest.mark.usefixtures("secret")

PLAN = [
    ("go_to", "fridge_0", "", None),
    ("open", "fridge_0", "", None),
    ("pick", "mug_1", "", None),
    ("go_to", "table_0", "", None),
    ("put", "mug_1", "", "table_0"),
    ("end", "", "", None),
]
"""The test kitchen's plan for putting the blue mug (in the closed fridge) on the table."""
SPEC = episode([PUT_MUG])


def as_json(action: str, target: str = "", skill: str = "all_in_one", place=None) -> str:
    """Return one answer in the JSON form."""
    subtask = {"action": action, "target": target, "place": place}
    return json.dumps({"analysis": "next step", "subtask": subtask, "skill": skill})


def scripted(answers: Sequence[str]) -> Callable[[list], str]:
    """Return a policy answering ``answers`` in order, then ``end``."""
    queue = list(answers)
    return lambda messages: queue.pop(0) if queue else as_json("end", skill="")


def plan_answers() -> list[str]:
    """Return the kitchen plan as JSON answers with the all-in-one skill."""
    return [as_json(a, t, "all_in_one" if a != "end" else "", p) for a, t, _, p in PLAN]


def homiebot(server: ModelServer, **args) -> HomieBotAgent:
    """Return a homiebot pointed at ``server``."""
    return HomieBotAgent(model="test-vlm", base_url=server.base_url, **FAST, **args)


def user_text(request: dict) -> str:
    """Return the text of a request's last user message."""
    content = request["messages"][-1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def test_good_json_answers_complete_the_kitchen_task(play):  # noqa: F811
    """The kitchen plan answered as JSON is carried out and the episode succeeds."""
    with ModelServer(scripted(plan_answers())) as server:
        recorder = play(homiebot(server), SPEC, skills="perfect")
    assert recorder.footer.outcome == "success"
    rounds = [s.part for s in recorder.steps]
    assert [(r.action, r.target, r.place) for r in rounds] == [(a, t, p) for a, t, _, p in PLAN]
    assert server.count == len(PLAN)


def test_emmoe_plain_answers_complete_the_kitchen_task(play):  # noqa: F811
    """EMMOE's plain form (``Subtask: [Put, mug_1, table_0] Model: all_in_one``) is carried out."""
    plain = [
        f"Analysis: on with it.\nSubtask: [{', '.join(w for w in (a, t, p) if w)}]\n"
        f"Model: all_in_one"
        for a, t, _, p in PLAN[:-1]
    ] + ["Analysis: done.\nSubtask: [End]"]
    with ModelServer(scripted(plain)) as server:
        recorder = play(homiebot(server), SPEC, skills="perfect")
    assert recorder.footer.outcome == "success"
    assert recorder.steps[4].part.place == "table_0"


@pytest.mark.parametrize(
    ("text", "subtask", "skill"),
    [
        (
            "Analysis: grab it\nSubtask: [Pick, apple]\nModel: grasp",
            ["Pick", "apple", None],
            "grasp",
        ),
        ("Subtask: [Put, apple, fridge] Model: [grasp]", ["Put", "apple", "fridge"], "grasp"),
        ("Analysis: all done. Subtask: [End]", ["End", "", None], ""),
    ],
)
def test_the_plain_form_is_parsed(text, subtask, skill):
    """Each of EMMOE's plain answers gives its action, target, place and skill."""
    data = parse_answer(text)
    assert [data["subtask"][k] for k in ("action", "target", "place")] == subtask
    assert data["skill"] == skill


def test_braces_in_a_plain_analysis_do_not_hide_the_subtask():
    """A plain answer whose analysis holds a JSON-like aside is still read as the plain form."""
    data = parse_answer(
        'Analysis: the note says {"x": 1}.\nSubtask: [Open, fridge] Model: articulate'
    )
    assert data["subtask"]["action"] == "Open" and data["skill"] == "articulate"


def test_a_plain_subtask_of_four_parts_is_refused():
    """``[Put, a, b, c]`` is not a subtask: the error says how many parts were found."""
    with pytest.raises(ValueError, match="4 parts"):
        parse_answer("Subtask: [Put, a, b, c] Model: grasp")


def test_garbage_is_asked_five_times_then_the_episode_ends_as_no_answer(play):  # noqa: F811
    """Five unreadable answers (four re-asks saying why, as EMMOE's five samples): no round, no end.

    EMMOE stops there and records nothing: the step has no round and the episode fails as
    ``no_answer``, never as the planner's ``end``.
    """
    with ModelServer(lambda messages: "I would rather not say.") as server:
        recorder = play(homiebot(server), SPEC)
        reasks = [user_text(r) for r in server.requests[1:]]
    (step,) = recorder.steps
    assert step.part is None and step.action.type == "invalid"
    assert recorder.footer.outcome == "failure"
    assert recorder.footer.failure_reason == "no_answer"
    assert recorder.footer.facts["ended"] is False and recorder.footer.facts["rounds"] == 0
    assert [c.error for c in step.model_calls] == ["format"] * 5
    assert (step.agent_output or "").count("I would rather not say.") == 5
    assert all("could not be used: not parseable" in text for text in reasks)
    assert "Re-ask 4 of 4" in reasks[-1]


def test_garbage_where_the_plan_says_end_scores_as_emmoe_reads_it(play):  # noqa: F811
    """Every step done, then no readable answer instead of end: SR 0, not ended, PLWSR 0.

    Before, the substituted end scored SR 1; EMMOE's reading gives SR 0 and leaves the run out
    of SER (it never said end). TP still counts the steps carried out.
    """
    answers = plan_answers()[:-1] + ["no idea"] * 5
    with ModelServer(scripted(answers)) as server:
        recorder = play(homiebot(server), SPEC, skills="perfect")
    metrics = score_household(as_trajectory(recorder, SPEC))
    assert recorder.footer.failure_reason == "no_answer"
    assert (metrics["sr"], metrics["ended"], metrics["plwsr"], metrics["tp"]) == (0, 0, 0, 1)
    assert metrics["rounds"] == len(PLAN) - 1


def test_a_wrong_shape_is_reasked_and_a_good_answer_then_used(play):  # noqa: F811
    """An answer of the wrong shape is re-asked with the schema's complaint, then carried out."""
    answers = ['{"subtask": "pick the mug"}', *plan_answers()]
    with ModelServer(scripted(answers)) as server:
        recorder = play(homiebot(server), SPEC, skills="perfect")
        reask = user_text(server.requests[1])
    assert "does not follow the schema" in reask and "subtask" in reask
    assert recorder.footer.outcome == "success"
    assert [c.error for c in recorder.steps[0].model_calls] == ["format", None]


def test_an_unknown_action_is_an_f1_round_not_a_crash(play):  # noqa: F811
    """``dance`` is passed on as written and the executor records it as F1."""
    with ModelServer(scripted([as_json("dance", "table_0")])) as server:
        recorder = play(homiebot(server), SPEC)
    first = recorder.steps[0].part
    assert (first.action, first.code, first.status) == ("dance", "F1", "failure")
    assert recorder.steps[-1].part.status == "end"


def test_the_window_keeps_the_system_prompt_and_the_last_rounds(play):  # noqa: F811
    """With window=1 the fourth request is system, one earlier round (asked, answered), now."""
    with ModelServer(scripted(plan_answers())) as server:
        play(homiebot(server, window="1"), SPEC, skills="perfect")
        roles = [[m["role"] for m in r["messages"]] for r in server.requests]
        kept, answered = (m["content"] for m in server.requests[3]["messages"][1:3])
    assert roles[0] == ["system", "user"]
    assert roles[3] == ["system", "user", "assistant", "user"]
    assert "Round 3;" in kept and answered == plan_answers()[2]


def test_the_default_window_is_three_rounds(play):  # noqa: F811
    """The fifth request holds the system prompt, three earlier rounds and the current one."""
    with ModelServer(scripted(plan_answers())) as server:
        play(homiebot(server), SPEC, skills="perfect")
        sizes = [len(r["messages"]) for r in server.requests]
    assert sizes[:5] == [2, 4, 6, 8, 8]


def test_images_mode_sends_the_four_views_labelled_in_order(play):  # noqa: F811
    """Each request carries four images after the labels front, left, back and right."""
    with ModelServer(scripted([])) as server:
        play(homiebot(server), SPEC, sensors=("rgb",))
        content = server.requests[0]["messages"][-1]["content"]
    kinds = [p["type"] for p in content]
    assert kinds.count("image_url") == 4
    labels = [content[i - 1]["text"] for i, p in enumerate(content) if p["type"] == "image_url"]
    assert labels == ["front:", "left:", "back:", "right:"]


@pytest.mark.parametrize(
    ("args", "present", "absent"),
    [
        ({}, "Feedback on the last subtask: ", "(not shown)"),
        ({"feedback": "false"}, "Round 3;", "Feedback on the last subtask"),
        ({"history": "0"}, "(not shown)", "(1) dance"),
        ({"history": "1"}, "(2) wave", "(1) dance"),
    ],
)
def test_ablations_change_the_request_text(play, args, present, absent):  # noqa: F811
    """No feedback, no history or a shorter history each show in what the model is asked."""
    answers = [as_json("dance", "table_0"), as_json("wave", "table_0")]
    with ModelServer(scripted(answers)) as server:
        play(homiebot(server, **args), SPEC)
        third = user_text(server.requests[2])
    assert present in third and absent not in third


def test_no_images_sends_plain_text_and_asks_for_no_camera(play):  # noqa: F811
    """images=false: the request is a plain string and the agent asks for no sensor."""
    with ModelServer(scripted([])) as server:
        agent = homiebot(server, images="false")
        play(agent, SPEC)
        content = server.requests[0]["messages"][-1]["content"]
    assert isinstance(content, str) and "Task: Tidy up." in content
    assert agent.sensors == frozenset()


def test_no_analysis_asks_for_a_schema_without_it(play):  # noqa: F811
    """analysis=false: the schema sent has no analysis field, and answers without it work."""
    answer = json.dumps({"subtask": {"action": "end"}})
    with ModelServer(scripted([answer])) as server:
        recorder = play(homiebot(server, analysis="false"), SPEC)
        schema = server.requests[0]["response_format"]["json_schema"]["schema"]
    assert "analysis" not in schema["properties"] and "subtask" in schema["properties"]
    assert recorder.steps[0].part.status == "end"


class Watched(HomieBotAgent):
    """A homiebot that keeps the observations it is given."""

    def act(self, observation):
        """Keep the observation, then act."""
        self.seen = [*getattr(self, "seen", []), observation]
        return super().act(observation)


def test_text_mode_sends_the_detections_as_a_plain_string(play):  # noqa: F811
    """observation=text: one string listing, per view, the things the camera shows."""
    with ModelServer(scripted([])) as server:
        agent = Watched(model="test-vlm", base_url=server.base_url, observation="text", **FAST)
        play(agent, SPEC)
        content = server.requests[0]["messages"][-1]["content"]
    assert isinstance(content, str)
    lines = [line for line in content.splitlines() if line.startswith("- ")]
    detections = agent.seen[0].detections
    assert lines == [
        f"- {view}: {', '.join(names) or 'nothing'}"
        for view, names in zip(("front", "left", "back", "right"), detections, strict=True)
    ]
    assert "counter_0" in detections[0] and agent.sensors == frozenset()


def test_step_zero_records_the_templates(play):  # noqa: F811
    """The first round's agent text carries both templates in full and their digest."""
    with ModelServer(scripted([])) as server:
        recorder = play(homiebot(server), SPEC)
    packaged = Prompts.load(HomieBotAgent.templates)
    assert recover(recorder.steps[0].agent_output or "") == packaged.texts
    assert packaged.digest in (recorder.steps[0].agent_output or "")


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ({"window": "-1"}, "window: expected 0 or more"),
        ({"observation": "smell"}, "observation: expected one of images, text"),
        ({"images": "maybe"}, "images: expected true or false"),
    ],
)
def test_bad_arguments_are_refused_by_name(args, match):
    """A negative window, an unknown observation mode or a non-flag is a ParameterError."""
    with pytest.raises(ParameterError, match=match):
        HomieBotAgent(model="m", base_url="http://127.0.0.1:9", **args)


def test_images_mode_asks_for_the_rgb_camera():
    """By default the agent needs the RGB camera; text mode needs none."""
    where = {"model": "m", "base_url": "http://127.0.0.1:9"}
    assert HomieBotAgent(**where).sensors == frozenset({Sensor.RGB})
    assert HomieBotAgent(**where, observation="text").sensors == frozenset()


def test_examples_come_between_the_system_prompt_and_the_round(play):  # noqa: F811
    """-a examples=2: the request is the system prompt, two example rounds, then this round."""
    with ModelServer(scripted(plan_answers())) as server:
        play(homiebot(server, examples="2"), SPEC, skills="perfect")
        first = server.requests[0]["messages"]
    assert [m["role"] for m in first] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert first[1]["content"].startswith("(An example round of another task")
    assert "Tidy up." in user_text(server.requests[0])  # the kitchen's own task comes last
