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


def fly_missionbench(tmp_path, answers, spec=None, settings=None, **args):
    """Return the requests' texts and the record of ``spec`` flown with prompt=missionbench."""
    from sortie.core.records_io import Suite, SuiteHeader, read_trajectory
    from sortie.run.suite import RunSettings, run_suite
    from sortie.testing.episodes import aerial_hop

    spec = spec or aerial_hop()
    scripted = iter(answers)

    def pilot(messages):
        answer = {"reasoning": "", "box": None, "report": None, "done": False}
        return json.dumps(answer | next(scripted))

    with ModelServer(pilot) as server:
        # FAST: the request after the last scripted answer fails; retried in milliseconds.
        args = {"model": "test-vlm", "base_url": server.base_url, "prompt": "missionbench"} | (
            FAST | args
        )
        run = RunSettings(out=tmp_path, family_settings=settings or {})
        (result,) = run_suite(Suite(SuiteHeader(suite="hop"), [spec]), "mllm-aerial", args, run)
        texts = [r["messages"][0]["content"][0]["text"] for r in server.requests]
    return texts, read_trajectory(result.path)


def ned_position(pose) -> str:
    """Return the position sentence's numbers for a sortie pose, turned into NED by hand."""
    # sortie's yaw is in [-180, 180), so minus it is in MissionBench's (-180, 180].
    x, y, z, yaw = (f"{round(v, 1) + 0.0:.1f}" for v in (pose.x, -pose.y, -pose.z, -pose.yaw))
    return f"(x={x}, y={y}, z={z}) with yaw={yaw}"


def test_missionbench_prompt_gives_the_ned_pose_every_step(tmp_path):
    """Each request states the pose the drone had then, in NED (y east, z down, yaw clockwise)."""
    from sortie.core.pose import Pose

    forward = {"action": "forward", "magnitude": 6}
    moves = [forward, {"action": "turn_left", "magnitude": 30}, forward]
    texts, trajectory = fly_missionbench(tmp_path, [*moves, {"action": "up", "done": True}])
    spec = trajectory.header.episode
    poses = [spec.start, *(Pose(*s.pose.as_list()) for s in trajectory.steps[:-1])]
    assert len(texts) == len(poses) == 4 and poses[-1].y > 1.0 and poses[-1].yaw > 1.0
    for text, pose in zip(texts, poses, strict=True):
        assert f"currently at position {ned_position(pose)}." in text


def test_missionbench_prompt_gives_d_max_camera_and_budget(tmp_path):
    """d_max, the 30° turn limit, T_max, the step count and the camera come from the episode."""
    from sortie.missions.aerial.spec import CAMERA, aerial_data

    texts, trajectory = fly_missionbench(tmp_path, [{"action": "up", "magnitude": 1}] * 2)
    data = aerial_data(trajectory.header.episode)
    for count, text in enumerate(texts[:2]):
        assert (
            f"maximum single-step movement {data.max_move:g} meters, maximum single-step turn "
            f"{data.max_turn:g} degrees; action budget {data.step_budget} (current count {count})"
        ) in text
    assert f"resolution {CAMERA['width']}x{CAMERA['height']} " in texts[0]
    assert f"field of view of {CAMERA['hfov']:g} degrees" in texts[0]
    assert f"pitch of {CAMERA['pitch']:g} degrees" in texts[0]


def test_missionbench_history_says_when_the_mission_clamped_a_move(tmp_path):
    """A 100 m forward shows in the next step's history with the d_max the mission kept."""
    from sortie.missions.aerial.spec import aerial_data

    answers = [{"action": "forward", "magnitude": 100}, {"action": "forward", "magnitude": 1}]
    texts, trajectory = fly_missionbench(tmp_path, answers * 2)
    d_max = aerial_data(trajectory.header.episode).max_move
    assert "history of actions taken so far: []" in texts[0]
    expected = f"['forward 100 meters (clamped to {d_max:g} meters)', 'forward 1 meters']"
    assert f"history of actions taken so far: {expected}" in texts[2]


def test_the_max_move_setting_reaches_the_missionbench_prompt(tmp_path):
    """-F max_move=2.5 is the d_max the prompt states and the clamp it reports."""
    answers = [{"action": "forward", "magnitude": 100}] * 2
    texts, _ = fly_missionbench(tmp_path, answers, settings={"max_move": 2.5})
    assert "maximum single-step movement 2.5 meters" in texts[0]
    assert "'forward 100 meters (clamped to 2.5 meters)'" in texts[1]


def test_missionbench_mode_reads_the_pose_sensor_and_sortie_mode_does_not():
    """prompt=missionbench declares the pose sensor; the default prompt asks for RGB alone."""
    from sortie.core.observation import Sensor

    with ModelServer(lambda m: "{}") as server:
        bench = MllmAerialAgent(model="m", base_url=server.base_url, prompt="missionbench")
        plain = MllmAerialAgent(model="m", base_url=server.base_url)
    assert bench.sensors == {Sensor.RGB, Sensor.POSE} and plain.sensors == {Sensor.RGB}


def test_missionbench_images_go_newest_first():
    """The current view is <image1>, then the earlier ones, the most recent first."""
    from sortie.models.images import image_part

    answer = json.dumps({"action": "up", "magnitude": 1, "reasoning": "", "box": None})
    with ModelServer(lambda m: answer) as server:
        pilot = agent(server, prompt="missionbench", history="2")
        views = [observation(step) for step in range(3)]
        for view in views:
            pilot.act(view)
        content = server.requests[-1]["messages"][0]["content"]
    sent = [part["image_url"]["url"] for part in content if part["type"] == "image_url"]
    expected = [image_part(v.frames.rgb)["image_url"]["url"] for v in reversed(views)]
    assert sent == expected
    assert [p["text"] for p in content[1:] if p["type"] == "text"][0] == "<image1>: current view"


def test_resolution_defaults_to_the_rendered_size_with_missionbench_and_512_with_sortie():
    """Unset, resolution sends the camera's own size (missionbench) or a 512 px side (sortie)."""
    with ModelServer(lambda m: "{}") as server:
        bench = MllmAerialAgent(model="m", base_url=server.base_url, prompt="missionbench")
        plain = MllmAerialAgent(model="m", base_url=server.base_url)
        chosen = MllmAerialAgent(
            model="m", base_url=server.base_url, prompt="missionbench", resolution="256"
        )
    assert (bench.resolution, plain.resolution, chosen.resolution) == (0, 512, 256)


def test_the_sortie_prompt_is_the_default_and_unchanged_by_name():
    """prompt=sortie sends exactly the requests the default does, from the same templates."""
    answer = json.dumps({"action": "up", "magnitude": 1, "reasoning": "", "box": None})
    requests = []
    for args in ({}, {"prompt": "sortie"}):
        with ModelServer(lambda m: answer) as server:
            pilot = agent(server, **args)
            pilot.act(observation(0))
            pilot.act(observation(1))
            requests.append([r["messages"] for r in server.requests])
            assert set(pilot.prompts.texts) == {"aerial_system.txt", "aerial_step.txt"}
    assert requests[0] == requests[1]


def test_an_unknown_prompt_is_refused_naming_the_prompts():
    """prompt=nope is refused with the prompts there are."""
    from sortie.core.errors import ParameterError

    with pytest.raises(ParameterError, match="prompt: expected one of sortie, missionbench"):
        MllmAerialAgent(model="m", base_url="http://127.0.0.1:9/v1", prompt="nope")


def test_missionbench_position_is_written_in_ned_with_the_facing_at_its_four_yaws():
    """A sortie pose facing +y (west of north in NED) reads yaw -90, the negative y-direction."""
    from sortie.agents.mllm.missionbench import position_text
    from sortie.core.pose import Pose

    text = position_text(Pose(10.0, 5.0, 30.0, 90.0))
    assert "(x=10.0, y=-5.0, z=-30.0) with yaw=-90.0." in text
    assert text.endswith("You are currently facing the negative y-direction.")
    assert "facing" not in position_text(Pose(0.0, 0.0, 30.0, 45.5))
    assert "yaw=180.0" in position_text(Pose(0.0, 0.0, 1.0, -180.0))
    assert "y=0.0," in position_text(Pose(0.0, 1e-12, 1.0, 0.0))


def test_the_missionbench_facing_follows_the_yaw_as_written():
    """A yaw written 90.0 faces +y, 180.0 is never written -180.0, and -0.9 names no facing."""
    from sortie.agents.mllm.missionbench import position_text
    from sortie.core.pose import Pose

    turned = position_text(Pose(0.0, 0.0, 0.0, -89.96))  # NED yaw is sortie's negated: 89.96
    assert "with yaw=90.0." in turned
    assert turned.endswith("facing the positive y-direction.")
    assert "yaw=180.0." in position_text(Pose(0.0, 0.0, 0.0, 179.96))
    assert "facing" not in position_text(Pose(0.0, 0.0, 0.0, 0.9))
