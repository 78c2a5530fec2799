"""``mllm-aerial``: answers at act() level on made-up views, and whole aerial episodes."""

import json

import numpy as np
import pytest

from sortie.agents.base import SupportsPreflight
from sortie.agents.mllm import MllmAerialAgent
from sortie.agents.mllm.aerial import parse_answer
from sortie.core.actions import FlightPrimitive, Fly, InvalidAction
from sortie.core.observation import Brief, Frames, MissionObservation
from sortie.missions.aerial.vocabulary import TaskAction, TaskActionKind
from sortie.testing.model_server import Fault, ModelServer
from tests.models.conftest import FAST, secret  # noqa: F401 - the fixture

pytestmark = pytest.mark.usefixtures("secret")
BRIEF = Brief("aerial", "reporting", "Report the licence plate of the red car.", control_period=1.0)


def observation(step: int) -> MissionObservation:
    rgb = np.full((64, 96, 3), 40 * step % 255, dtype=np.uint8)
    return MissionObservation(Frames(rgb=rgb), False, step=step, time_left=20.0 - step)


def agent(server, **args) -> MllmAerialAgent:
    made = MllmAerialAgent(model="test-vlm", base_url=server.base_url, **FAST, **args)
    made.reset(BRIEF, 0)
    return made


def images(request) -> int:
    return sum(part["type"] == "image_url" for part in request["messages"][1]["content"])


def test_json_answer_becomes_a_flight_primitive():
    """A JSON answer gives a Fly action and goes into the action history."""
    answer = {
        "box": [10, 20, 300, 400],
        "reasoning": "car ahead",
        "action": "forward",
        "magnitude": 5,
        "report": None,
        "done": False,
    }
    with ModelServer(lambda m: json.dumps(answer)) as server:
        pilot = agent(server)
        assert pilot.act(observation(0)) == Fly(FlightPrimitive.FORWARD, 5.0)
        pilot.act(observation(1))
        assert "1. forward 5" in server.requests[1]["messages"][1]["content"][0]["text"]
    assert pilot.last_box == [10, 20, 300, 400]


def test_xml_tags_are_read_too():
    """MissionBench's XML-tag answers are accepted."""
    text = (
        "<bbox>[1, 2, 3, 4]</bbox><reasoning>turn to see it</reasoning>"
        "<action>turn_left 30</action><report>none</report><done>false</done>"
    )
    with ModelServer(lambda m: text) as server:
        assert agent(server).act(observation(0)) == Fly(FlightPrimitive.TURN_LEFT, 30.0)
    assert parse_answer("<action>done</action><report>AB 123</report>")["done"] is True


def test_done_and_task_actions():
    """Done ends with TaskAction(DONE) carrying the report, which the mission judges."""
    answers = iter(
        [
            {
                "action": "land",
                "magnitude": 0,
                "report": None,
                "done": False,
                "reasoning": "",
                "box": None,
            },
            {
                "action": "up",
                "magnitude": 0,
                "report": "AB 123",
                "done": True,
                "reasoning": "",
                "box": None,
            },
        ]
    )
    with ModelServer(lambda m: json.dumps(next(answers))) as server:
        pilot = agent(server)
        assert pilot.act(observation(0)) == TaskAction(TaskActionKind.LAND)
        assert pilot.act(observation(1)) == TaskAction(TaskActionKind.DONE, report="AB 123")
    assert pilot.report == "AB 123"


def test_history_sends_h_earlier_images():
    """Each request carries up to H earlier images plus the current one."""
    answer = json.dumps({"action": "up", "magnitude": 1, "reasoning": "", "box": None})
    with ModelServer(lambda m: answer) as server:
        pilot = agent(server, history="2")
        for step in range(4):
            pilot.act(observation(step))
        assert [images(r) for r in server.requests] == [1, 2, 3, 3]


def test_ablations_drop_fields_from_the_schema():
    """box=false and reasoning=false leave those fields out of the schema asked for."""
    answer = json.dumps({"action": "up", "magnitude": 1})
    with ModelServer(lambda m: answer) as server:
        agent(server, box="false", reasoning="false").act(observation(0))
        schema = server.requests[0]["response_format"]["json_schema"]["schema"]
    assert not {"box", "reasoning"} & set(schema["properties"])


def test_unusable_answer_is_an_invalid_action():
    """An answer off-schema twice becomes InvalidAction with the raw text."""
    with ModelServer(lambda m: "{}") as server:
        server.inject(Fault.VIOLATE, times=2)
        action = agent(server).act(observation(0))
    assert isinstance(action, InvalidAction) and "unexpected" in action.raw


def test_a_malformed_answer_is_an_invalid_action():
    """A body of the wrong shape becomes an invalid action carrying its raw text."""
    with ModelServer(lambda m: "{}") as server:
        server.inject(Fault.CONTENT_NOT_TEXT)
        action = agent(server).act(observation(0))
    assert isinstance(action, InvalidAction) and '"content": 42' in action.raw
    assert action.error.startswith("malformed answer")


def test_the_agent_checks_its_server_before_a_run():
    """mllm-aerial supports the pre-flight check; a listed model passes it."""
    with ModelServer(lambda m: "{}", models=("test-vlm",)) as server:
        pilot = agent(server)
        assert isinstance(pilot, SupportsPreflight)
        pilot.preflight()
        assert server.listings == 1


def test_a_scripted_model_flies_a_whole_mission_and_its_report_is_judged(tmp_path):
    """Four forward answers reach the goal; the fifth says done with the plate: success."""
    from sortie.core.records_io import Suite, SuiteHeader, read_trajectory
    from sortie.run.suite import RunSettings, run_suite
    from sortie.testing.episodes import aerial_hop

    answers = iter(
        [
            *[{"action": "forward", "magnitude": 6, "done": False}] * 4,
            {"action": "up", "magnitude": 0, "report": "It reads KX 427Q.", "done": True},
        ]
    )

    def pilot(messages):
        return json.dumps({"reasoning": "", "box": None, "report": None, **next(answers)})

    spec = aerial_hop(("reporting", "inspection"), answer="KX427Q", answer_kind="plate")
    with ModelServer(pilot) as server:
        args = {"model": "test-vlm", "base_url": server.base_url, **FAST}
        (result,) = run_suite(
            Suite(SuiteHeader(suite="hop"), [spec]), "mllm-aerial", args, RunSettings(out=tmp_path)
        )
    trajectory = read_trajectory(result.path)
    assert result.footer.outcome == "success" and result.metrics["sr"] == 1.0
    assert trajectory.footer.facts["verdict"]["match"] is True
    assert all(step.model_calls for step in trajectory.steps)


def test_text_mode_sends_the_classes_in_view_as_a_plain_string():
    """observation=text: earlier and current views as class lists in one string, no image."""
    semantic = np.zeros((8, 8), dtype=np.int32)
    semantic[:2, :2], semantic[4:, 4:] = 3, 7
    brief = Brief(
        "aerial", "reporting", "Find the red car.", semantic_classes={3: "car", 7: "tree"}
    )
    seen = MissionObservation(Frames(semantic=semantic), False, time_left=10.0)
    empty = MissionObservation(Frames(semantic=np.zeros((8, 8), np.int32)), False, time_left=9.0)
    answer = {"box": None, "reasoning": "", "action": "up", "magnitude": 1, "report": None}
    with ModelServer(lambda m: json.dumps({**answer, "done": False})) as server:
        pilot = MllmAerialAgent(
            model="test-vlm", base_url=server.base_url, observation="text", **FAST
        )
        pilot.reset(brief, 0)
        pilot.act(seen)
        pilot.act(empty)
        content = server.requests[1]["messages"][1]["content"]
    assert isinstance(content, str)
    assert "View 1 step(s) ago shows: car, tree" in content
    assert "Current view shows: nothing" in content
