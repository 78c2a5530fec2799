import pytest
from pydantic import ValidationError

from sortie.core.episode import EpisodeSpec, WorldSpec
from sortie.core.errors import ConfigError
from sortie.core.pose import Pose, wrap_degrees
from sortie.core.records import PluginRef, StepRecord, TrajectoryHeader


def _episode() -> EpisodeSpec:
    return EpisodeSpec(
        episode_id="rescue-l1-v2/0001",
        family="rescue",
        level="L1",
        world=WorldSpec(builder="flexible_room", seed=4, params={"size": 12}),
        start=Pose(1.0, 2.0, 0.0, 90.0),
        targets={"casualty": "person_0"},
    )


def test_episode_spec_survives_a_json_round_trip():
    """An EpisodeSpec written to JSON and read back is equal to the original."""
    episode = _episode()
    assert EpisodeSpec.model_validate_json(episode.model_dump_json()) == episode


def test_poses_are_stored_as_four_numbers():
    """A pose is written as [x, y, z, yaw]."""
    assert _episode().model_dump(mode="json")["start"] == [1.0, 2.0, 0.0, 90.0]


def test_a_pose_with_three_numbers_is_rejected_with_where_and_what():
    """A 3-number start pose fails naming the field and the expected shape."""
    data = _episode().model_dump(mode="json")
    data["start"] = [1, 2, 3]
    with pytest.raises(ValidationError) as info:
        EpisodeSpec.model_validate(data)
    text = str(info.value)
    assert "start" in text and "expected 4 numbers [x, y, z, yaw], got 3" in text


def test_unknown_fields_are_rejected():
    """A misspelt field in an episode file is an error, not silently dropped."""
    data = _episode().model_dump(mode="json")
    data["taregts"] = {}
    with pytest.raises(ValidationError, match="taregts"):
        EpisodeSpec.model_validate(data)


def test_trajectory_lines_round_trip():
    """Header and step records survive JSON."""
    header = TrajectoryHeader(
        episode=_episode(),
        agent=PluginRef(name="oracle"),
        backend=PluginRef(name="embedded", args={"body": "walker"}),
        seed=7,
        code_version="0.1.0",
    )
    step = StepRecord(
        index=0,
        pose=Pose(0, 0, 0, 0),
        action={"type": "move", "speed": 1.0},
        clock_sim=0.2,
        clock_latency=0.2,
    )
    assert TrajectoryHeader.model_validate_json(header.model_dump_json()) == header
    assert StepRecord.model_validate_json(step.model_dump_json()) == step


def test_pose_parse_reports_bad_text():
    """Pose.parse names where the text came from and what it expects."""
    assert Pose.parse("1, 2, 0, 45") == Pose(1, 2, 0, 45)
    with pytest.raises(ConfigError, match=r"--pose: expected 3 or 4 numbers"):
        Pose.parse("1,2", "--pose")


def test_wrap_degrees():
    """Angles wrap into [-180, 180)."""
    assert wrap_degrees(190.0) == -170.0 and wrap_degrees(-180.0) == -180.0


def test_typed_step_and_footer_records_round_trip_with_their_enums():
    """Event kinds, stage statuses and the outcome come back as enums, equal to the original."""
    from sortie.core.observation import EventKind
    from sortie.core.records import (
        EventRecord,
        Outcome,
        StageRecord,
        StageStatus,
        TrajectoryFooter,
    )

    step = StepRecord(
        index=3,
        pose=Pose(1, 2, 0, 45),
        action={"type": "move", "turn": 5.0, "speed": 1.0},
        events=[EventRecord(kind=EventKind.PICKED_UP, target="casualty")],
        stages={"S1": StageStatus.DONE, "S2": StageStatus.ACTIVE},
        clock_sim=0.6,
        clock_latency=0.6,
    )
    footer = TrajectoryFooter(
        outcome=Outcome.ERROR,
        failure_reason="agent_error",
        steps=3,
        stages=[StageRecord(name="S1", status=StageStatus.DONE)],
    )
    back = StepRecord.model_validate_json(step.model_dump_json())
    assert back == step and back.events[0].kind is EventKind.PICKED_UP
    assert back.stages["S2"] is StageStatus.ACTIVE
    again = TrajectoryFooter.model_validate_json(footer.model_dump_json())
    assert again == footer and again.outcome is Outcome.ERROR


def test_an_unknown_outcome_or_event_kind_is_refused():
    """A record with outcome 'won' or an event 'teleported' is an error naming the field."""
    from sortie.core.records import EventRecord, TrajectoryFooter

    with pytest.raises(ValidationError, match="outcome"):
        TrajectoryFooter.model_validate({"outcome": "won", "steps": 1})
    with pytest.raises(ValidationError, match="kind"):
        EventRecord.model_validate({"kind": "teleported"})


def test_a_recorded_action_is_typed_and_keeps_the_numbers_the_agent_sent():
    """An int stays an int, a non-finite number is null (None back); unknown ones are refused."""
    import math

    import pydantic

    from sortie.core.pose import Pose
    from sortie.core.records import StepRecord
    from sortie.run.episode import line_of

    def step(action: dict) -> StepRecord:
        return StepRecord(
            index=1, pose=Pose(0, 0, 0, 0), action=action, clock_sim=0, clock_latency=0
        )

    record = step({"type": "move", "turn": 3, "speed": math.nan, "pitch": None})
    line = line_of(record)
    assert '"action":{"type":"move","turn":3,"speed":null,"pitch":null}' in line
    back = StepRecord.model_validate_json(line).action
    assert (back.type, back.turn, back.speed) == ("move", 3, None) and isinstance(back.turn, int)
    for bad in ({"type": "teleport"}, {"type": "move", "kind": "grab"}, {"speed": 1.0}):
        with pytest.raises(pydantic.ValidationError):
            step(bad)


def _step_at(pose: Pose) -> StepRecord:
    return StepRecord(index=1, pose=pose, action={"type": "move"}, clock_sim=0.2, clock_latency=0.2)


def test_a_step_refuses_a_pose_object_holding_a_non_finite_number():
    """A backend's Pose with NaN in it is refused when the step record is built, naming why."""
    import math

    with pytest.raises(ValidationError, match="finite number"):
        _step_at(Pose(1.0, math.nan, 0.0, 0.0))


def test_a_step_refuses_a_pose_object_beyond_the_coordinate_limit():
    """A backend's Pose with a coordinate past ±1e6 is refused when the step record is built."""
    with pytest.raises(ValidationError, match="within"):
        _step_at(Pose(2e6, 0.0, 0.0, 0.0))


def test_a_step_stores_a_pose_of_integers_as_floats():
    """A Pose holding integers is kept as floats, so its line reads the same as a float pose's."""
    step = _step_at(Pose(1, 2, 0, 90))
    assert [type(v) for v in step.pose.as_list()] == [float] * 4
    assert step.model_dump_json() == _step_at(Pose(1.0, 2.0, 0.0, 90.0)).model_dump_json()
