"""The executor's checks (codes L1–L4, D1–D2, F1–F2), its retries (E1–E3) and its effects."""

from __future__ import annotations

import pytest

from sortie.backends.embedded import EmbeddedBackend
from sortie.core.pose import Pose
from sortie.missions.household.records import ErrorCode, RoundStatus
from tests.missions.household.conftest import PUT_MUG, Play, go
from tests.missions.household.kitchen import episode

AIO = "all_in_one"


def rounds(recorder):
    """Return the round records of an episode."""
    return [step.part for step in recorder.steps]


@pytest.mark.parametrize(
    ("script", "code"),
    [
        ([("fly", "apple_0", AIO)], ErrorCode.F1),
        ([("pick", "apple_0", "teleport")], ErrorCode.F1),
        ([("pick", "pear", AIO)], ErrorCode.F2),
        ([go("counter_0"), ("pick", "apple_0", AIO), ("pick", "mug_0", AIO)], ErrorCode.L1),
        ([go("table_0"), ("put", "apple_0", AIO, "table_0")], ErrorCode.L2),
        ([go("fridge_0"), ("pick", "mug_1", AIO)], ErrorCode.L3),
        ([go("counter_0"), ("pick", "counter_0", AIO)], ErrorCode.L4),
        ([go("counter_0"), ("open", "counter_0", AIO)], ErrorCode.L4),
        ([("pick", "apple_0", AIO)], ErrorCode.D1),
    ],
)
def test_a_refused_subtask_gets_its_code_and_no_attempt(play: Play, script, code) -> None:
    """Each check refuses before any motion, with its fixed code."""
    last = rounds(play(script, skills="perfect"))[len(script) - 1]
    assert (last.status, last.code, last.attempts) == (RoundStatus.FAILURE, code, [])


@pytest.mark.parametrize(
    ("script", "code"),
    [
        ([go("counter_0"), ("pick", "apple_0", AIO), ("pick", "pear", AIO)], ErrorCode.L1),
        ([go("table_0"), ("put", "pear", AIO, "table_0")], ErrorCode.L2),
        ([go("table_0"), ("put", "apple_0", AIO, "nowhere")], ErrorCode.L2),
        ([("fly", "pear", AIO)], ErrorCode.F1),
        ([("open", "pear", AIO)], ErrorCode.F2),  # L4 needs the thing: an unknown name is F2
    ],
)
def test_the_hand_is_checked_before_the_names_as_emmoe_does(play: Play, script, code) -> None:
    """EMMOE's order: F1, then L1/L2, then F2: a full hand picking an unknown thing is L1."""
    last = rounds(play(script, skills="perfect"))[len(script) - 1]
    assert (last.status, last.code) == (RoundStatus.FAILURE, code)


def test_feedback_of_a_closed_container_says_to_open_it(play: Play) -> None:
    """L3's message names the container and says what to do."""
    last = rounds(play([go("fridge_0"), ("pick", "mug_1", AIO)]))[1]
    assert last.feedback == "Fridge_0 is closed, you should open it first."


def test_words_resolve_through_synonyms_and_kinds(play: Play) -> None:
    """'the refrigerator' is fridge_0 and 'red cup' is mug_0 (the task's names)."""
    script = [("go_to", "the Refrigerator", AIO), go("counter_0"), ("pick", "red cup", AIO)]
    got = [r.target_object for r in rounds(play(script, skills="perfect"))[:3]]
    assert got == ["fridge_0", "counter_0", "mug_0"]


def test_an_ambiguous_kind_means_the_nearest(play: Play) -> None:
    """'mug' at the counter is the red mug there, not the blue one in the fridge."""
    got = rounds(play([go("counter_0"), ("pick", "mug", AIO)], skills="perfect"))[1]
    assert got.target_object == "mug_0"


def test_a_picked_item_travels_and_a_put_item_rests_on_the_surface(play: Play) -> None:
    """After pick, put on the table: the mug's place is the table; the hand is empty."""
    script = [
        go("counter_0"),
        ("pick", "mug_0", AIO),
        go("table_0"),
        ("put", "mug_0", AIO, "table"),
    ]
    recorder = play(script, skills="perfect")
    assert rounds(recorder)[1].inventory == ["mug_0"]
    assert recorder.footer.facts["places"]["mug_0"] == {"relation": "on", "place": "table_0"}
    assert recorder.footer.facts["held"] is None


def test_motion_is_recorded_with_each_attempt(play: Play) -> None:
    """A go_to's attempt holds the base's path, from the start to the counter's standing point."""
    attempt = rounds(play([go("counter_0")], skills="perfect"))[0].attempts[0]
    assert attempt.path[0][:2] == pytest.approx((0.0, 0.0))
    assert attempt.path[-1][:2] == pytest.approx((2.6, 0.0))


def _codes_over_seeds(play: Play, script, seeds=range(40)):
    found = []
    for seed in seeds:
        found += [
            r for r in rounds(play(script, seed=seed)) if r.code in ErrorCode.__members__.values()
        ]
    return found


def test_retried_subtasks_fail_with_e1_after_three_attempts(play: Play) -> None:
    """A mismatched skill (grasp driving) fails now and then; every E1 made exactly 3 attempts."""
    failures = _codes_over_seeds(play, [("go_to", "table_0", "grasp")])
    e1 = [r for r in failures if r.code is ErrorCode.E1]
    assert e1 and all(len(r.attempts) == 3 and not any(a.success for a in r.attempts) for r in e1)


def test_a_put_is_tried_once_and_a_dropped_item_lands_on_the_floor(play: Play) -> None:
    """Failed puts are E3 (still held) or E2 (the item fell): one attempt each."""
    script = [
        go("counter_0"),
        ("pick", "mug_0", AIO),
        go("table_0"),
        ("put", "mug_0", "grasp", "table_0"),
    ]
    found = {}
    for seed in range(60):
        recorder = play(script, seed=seed)
        put = rounds(recorder)[3]
        if put.code in (ErrorCode.E2, ErrorCode.E3):
            found[put.code] = (put, recorder.footer.facts)
    e2, e3 = found[ErrorCode.E2], found[ErrorCode.E3]
    assert len(e2[0].attempts) == len(e3[0].attempts) == 1
    assert e2[0].inventory == [] and e2[1]["places"]["mug_0"]["relation"] == "floor"
    assert e3[0].inventory == ["mug_0"]


def test_sensor_only_skills_cannot_target_what_was_never_seen(play: Play) -> None:
    """The blue mug inside the closed fridge is unseen: F2, though it exists."""
    script = [go("fridge_0"), ("pick", "blue mug", "grasp")]
    last = rounds(play(script, setting="sensor-only", skills="perfect"))[1]
    assert last.code is ErrorCode.F2 and "has not been seen" in last.feedback


def test_sensor_only_skills_can_target_what_an_open_door_shows(play: Play) -> None:
    """Once the fridge is open the robot sees the blue mug and can pick it."""
    script = [
        ("go_to", "fridge_0", "image_nav"),
        ("open", "fridge_0", "articulate"),
        ("pick", "blue mug", "grasp"),
    ]
    last = rounds(play(script, setting="sensor-only", skills="perfect"))[2]
    assert (last.status, last.target_object) == (RoundStatus.SUCCESS, "mug_1")


def test_the_privileged_skill_is_not_offered_in_sensor_only(play: Play) -> None:
    """all_in_one needs object poses: in sensor-only it is F1."""
    first = rounds(play([go("fridge_0")], setting="sensor-only"))[0]
    assert first.code is ErrorCode.F1


def test_a_failed_drive_to_where_the_robot_stands_keeps_it_there(play: Play) -> None:
    """A go_to whose route is a single point (already there) records one position, no error."""
    found = []
    for seed in range(40):
        recorder = play([go("counter_0"), ("go_to", "counter_0", "grasp")], seed=seed)
        assert recorder.footer.outcome != "error"
        found += [a for a in rounds(recorder)[1].attempts if not a.success]
    assert found and all(len(a.path) >= 1 for a in found)


def test_what_the_gripper_holds_does_not_block_the_base(kitchen: None) -> None:
    """Holding the apple, the base moves 0.2 m ahead (onto where the apple was held): it arrives."""
    backend = EmbeddedBackend(body="manipulator", sensors=())
    backend.reset(episode([PUT_MUG]).model_copy(update={"start": Pose(2.6, 0.0, 0.0, 0.0)}), 0)
    backend.pick_up("apple_0")
    landed = backend.move_base(Pose(2.8, 0.0, 0.0, 0.0))
    assert landed.x == pytest.approx(2.8)


def test_a_name_the_task_gives_two_things_is_refused_naming_both(play: Play) -> None:
    """Both mugs are "ceramic mug" in the task: F2 naming both; the scene name still works."""
    spec = episode([PUT_MUG])
    objects = {**spec.mission["objects"]}
    for mug in ("mug_0", "mug_1"):
        objects[mug] = {**objects[mug], "names": ["ceramic mug"]}
    spec = spec.model_copy(update={"mission": {**spec.mission, "objects": objects}})
    script = [go("counter_0"), ("pick", "the Ceramic  mug", AIO), ("pick", "mug_0", AIO)]
    ambiguous, by_scene_name = rounds(play(script, spec, skills="perfect"))[1:3]
    assert (ambiguous.code, ambiguous.attempts) == (ErrorCode.F2, [])
    assert "names several things (mug_0, mug_1)" in ambiguous.feedback
    assert by_scene_name.status is RoundStatus.SUCCESS
