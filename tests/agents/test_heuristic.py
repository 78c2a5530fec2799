import math
import sys

import numpy as np
import pytest
from rapidfuzz.distance import Levenshtein

from sortie.agents.base import AGENTS
from sortie.agents.heuristic import HeuristicAgent
from sortie.agents.heuristic.instruction import Question, parse_instruction
from sortie.agents.heuristic.reading import TextReader, normalise_plate, plate_crop
from sortie.backends.embedded import EmbeddedBackend
from sortie.core.actions import Fly
from sortie.core.episode import EpisodeSpec, WorldSpec
from sortie.core.errors import MissingExtraError
from sortie.core.observation import Brief, Frames, MissionObservation
from sortie.core.records_io import Suite, SuiteHeader
from sortie.missions.aerial.spec import CAMERA
from sortie.missions.aerial.vocabulary import TaskAction, TaskActionKind
from sortie.run.suite import RunSettings, run_suite
from sortie.sim.worlds import build_world
from sortie.sim.worlds.aerial import viewing_pose


@pytest.fixture(scope="module")
def neighborhood():
    return build_world("neighborhood", 0, {})


@pytest.mark.parametrize(
    ("text", "target", "question", "task"),
    [
        (
            "Report the licence plate of the red car parked on Maple Street.",
            "car",
            Question.PLATE,
            None,
        ),
        (
            "How many zebras are in the zebra herd in the north of the area?",
            "animal",
            Question.COUNT,
            None,
        ),
        ("Report the number of supply crates stacked at the depot.", "crate", Question.COUNT, None),
        (
            "What is the house number of the white house on Oak Street?",
            "house",
            Question.NUMBER,
            None,
        ),
        ("What does the sign on the roof of building number 12 say?", "sign", Question.TEXT, None),
        ("Read the name painted on the white water tower.", "water_tank", Question.TEXT, None),
        (
            "Find the animal nearest the landing pad and tell me what species it is.",
            "animal",
            Question.SPECIES,
            None,
        ),
        (
            "Inspect the damaged solar panel row at the solar farm.",
            "solar_panel",
            Question.NONE,
            None,
        ),
        (
            "Land on the landing pad on the hospital roof.",
            "landing_pad",
            Question.NONE,
            TaskActionKind.LAND,
        ),
        (
            "Drop the payload by the red MED crate.",
            "crate",
            Question.NONE,
            TaskActionKind.DROP_PAYLOAD,
        ),
        (
            "Collect a water sample at the pond in the park.",
            "water",
            Question.NONE,
            TaskActionKind.COLLECT_SAMPLE,
        ),
    ],
)
def test_instructions_name_target_question_and_task(text, target, question, task):
    """Keyword rules find the class to look for, what to report and the task action."""
    goal = parse_instruction(text)
    assert (goal.target, goal.question, goal.task) == (target, question, task)


def test_colours_qualify_the_target_and_patrols_carry_their_altitude():
    """Colour words are kept for matching; a patrol says its altitude and what it counts."""
    assert parse_instruction("Report the plate of the dark red car.").colours == ("red",)
    patrol = parse_instruction(
        "Patrol along the power line from its west end to its east end "
        "at 22 m altitude and report how many pylons you counted."
    )
    assert (patrol.patrol, patrol.altitude, patrol.counted) == (True, 22.0, "pylon")


def test_plate_readings_are_fixed_by_position():
    """Letters misread as digits (and back) are put right by where they stand in ``AB 123``."""
    assert normalise_plate("4S573") == "AS 573"
    assert normalise_plate("A5 S7B") == "AS 578"
    assert normalise_plate("1") is None


def test_ocr_reads_a_roof_plate_from_a_close_view(neighborhood):
    """From 2.5 m above a car's roof, behind it, the plate read is within one character."""
    car = neighborhood.of_class("car")[0]
    backend = EmbeddedBackend(body="multirotor", camera=CAMERA)
    spec = EpisodeSpec(
        episode_id="t/plate",
        family="aerial",
        level="reporting",
        world=WorldSpec(builder="neighborhood", seed=0),
        start=viewing_pose(car, 2.5, 270.0),
    )
    frames = backend.reset(spec, 0).frames
    backend.close()
    crop = plate_crop(frames.rgb, frames.semantic, int(frames.semantic[128, 128]))
    reading = TextReader().read(crop, "plate")
    assert reading is not None
    assert Levenshtein.distance(reading.answer, str(car.attributes["plate"])) <= 1


def test_constructing_the_agent_loads_no_ocr_model(monkeypatch):
    """The runner builds agents just to read ``sensors``: that must stay cheap."""
    monkeypatch.setattr(TextReader, "_engine", None)
    agent = AGENTS.get("heuristic")()
    assert isinstance(agent, HeuristicAgent) and TextReader._engine is None


def test_building_without_the_ocr_extra_says_what_to_install(monkeypatch):
    """Without the OCR engine installed, building the agent fails naming the extra."""
    # None in sys.modules is how an uninstalled module looks to find_spec and import.
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'sortie\[ocr\]'"):
        AGENTS.get("heuristic")()


def test_a_missing_engine_is_an_error_not_a_failed_read(monkeypatch):
    """If the engine cannot load when a crop is read, the reader raises instead of guessing."""
    monkeypatch.setattr(TextReader, "_engine", None)
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)
    with pytest.raises(MissingExtraError, match="reads text with OCR"):
        TextReader().read(np.zeros((20, 60, 3), np.uint8), "plate")


def test_a_colour_question_is_answered_end_to_end(neighborhood, tmp_path):
    """The agent flies down to the car in view and reports its colour: a success."""
    car = neighborhood.of_class("car")[0]
    start, goal = viewing_pose(car, 20.0, 270.0), viewing_pose(car, 12.0, 270.0)
    spec = EpisodeSpec(
        episode_id="t/colour",
        family="aerial",
        level="reporting",
        world=WorldSpec(builder="neighborhood", seed=0),
        start=start,
        mission={
            "instruction": "What colour is the car parked in the driveway of "
            f"{str(car.attributes['place'])[12:]}?",
            "types": ["reporting"],
            "goal": [goal.x, goal.y, goal.z, goal.yaw],
            "max_move": round(math.dist(start.position(), goal.position()) / 4, 2),
            "answer": str(car.attributes["color"]),
            "answer_kind": "colour",
        },
    )
    (result,) = run_suite(
        Suite(SuiteHeader(suite="t"), [spec]), "heuristic", {}, RunSettings(out=tmp_path)
    )
    assert result.footer.outcome == "success", result.footer.facts["report"]


def observation(frames: Frames, step: int) -> MissionObservation:
    return MissionObservation(frames=frames, carrying=False, step=step)


def test_odd_images_give_a_safe_action():
    """Blank, missing or mis-shaped images never raise; the agent still returns an action."""
    agent = HeuristicAgent()
    agent.reset(
        Brief(
            "aerial", "reporting", "Report the plate of the red car.", semantic_classes={1: "car"}
        ),
        0,
    )
    odd = [
        Frames(),
        Frames(
            np.zeros((4, 4, 3), np.uint8),
            np.full((4, 4), np.inf, np.float32),
            np.zeros((4, 4), np.int32),
        ),
        Frames(None, np.full((8, 8), np.nan, np.float32), np.full((8, 8), 7, np.int32)),
        Frames(
            np.zeros((2, 2, 3), np.uint8), np.zeros((8, 8), np.float32), np.ones((8, 8), np.int32)
        ),
    ]
    for index, frames in enumerate(odd):
        assert isinstance(agent.act(observation(frames, index)), Fly | TaskAction)


def test_no_target_in_view_means_a_search_then_a_report():
    """With no car anywhere it climbs and turns, then gives up with a report, within budget."""
    agent = HeuristicAgent(search_steps=14)
    agent.reset(
        Brief(
            "aerial",
            "reporting",
            "Report the plate of the red car.",
            control_period=1.0,
            budget_s=20.0,
            semantic_classes={1: "car", 2: "road"},
        ),
        0,
    )
    ground = Frames(
        np.full((64, 64, 3), 90, np.uint8),
        np.full((64, 64), 30.0, np.float32),
        np.full((64, 64), 2, np.int32),
    )
    actions = []
    for step in range(20):
        actions.append(agent.act(observation(ground, step)))
        if isinstance(actions[-1], TaskAction):
            break
    assert any(isinstance(a, Fly) and a.primitive == "turn_right" for a in actions)
    assert isinstance(actions[-1], TaskAction) and actions[-1].kind is TaskActionKind.DONE
    assert "found no car" in (actions[-1].report or "")
    assert (agent.step_output().text or "").startswith("done: I searched")
