import pytest
from pydantic import ValidationError

from sortie.core.episode import EpisodeSpec, WorldSpec
from sortie.core.errors import ConfigError
from sortie.core.pose import Pose, wrap_degrees
from sortie.core.trajectory import PluginRef, StepRecord, TrajectoryHeader


def _episode() -> EpisodeSpec:
    return EpisodeSpec(
        episode_id="rescue-l1-v1/0001",
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
        action={"kind": "move", "speed": 1.0},
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
