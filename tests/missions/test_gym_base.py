"""The envs' shared base steps through the runtime's draft, as the record path did."""

from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from sortie.core.pose import Pose
from sortie.core.records import StepRecord
from sortie.missions.gym_base import printable
from sortie.missions.rescue.env import RescueEnv
from sortie.sim.camera import CameraSpec
from sortie.testing.episodes import room_rescue

SMALL = CameraSpec(32, 32, 90.0)
STILL = {"turn": np.float32(0), "speed": np.float32(0), "pitch": 0, "interact": 0}
WALK = [{**STILL, "turn": np.float32(-3.8), "speed": np.float32(1.5)}]
WALK += [{**STILL, "speed": np.float32(1.5)}] * 14 + [{**STILL, "interact": 1}]
"""Into sight of the casualty (a stage done: reward 1), then a grab too far (an event)."""


def _env() -> RescueEnv:
    env = RescueEnv([room_rescue()], camera=SMALL, sensors=(), triggers="native")
    env.reset(seed=0)
    return env


def _record_path_step(env: RescueEnv, action: dict[str, Any], before: dict[str, Any]) -> tuple:
    """Step ``env``'s mission as the env did with a built record: reward, info, record."""
    _, record = env.mission.step(env._to_action(action))
    outcome = env.mission.outcome
    info = {
        "stages": record.stages,
        "events": [e.kind for e in record.events],
        "outcome": outcome.value if outcome else None,
        "failure_reason": env.mission.failure,
    }
    return env._reward(before, record), info, record  # a record has a draft's stages, events


def _typed(info: dict[str, Any]) -> list[tuple[str, Any, type]]:
    """Return every value of ``info`` beside its exact type, stage values and event kinds too."""
    values = [(key, value, type(value)) for key, value in info.items()]
    values += [(name, status, type(status)) for name, status in info["stages"].items()]
    return values + [("event", kind, type(kind)) for kind in info["events"]]


def test_a_step_gives_the_record_paths_info_reward_and_record():
    """Each step's info (types too), reward and last record are what the record path gave."""
    env, twin = _env(), _env()
    before = dict(twin._stages)
    rewards = []
    for action in WALK:
        _, reward, *_, info = env.step(action)
        expected_reward, expected_info, record = _record_path_step(twin, action, before)
        before = dict(record.stages)
        assert (reward, _typed(info)) == (expected_reward, _typed(expected_info))
        assert isinstance(env.last_record, StepRecord)
        kept = env.last_record.model_dump(exclude={"timings"})
        assert kept == record.model_dump(exclude={"timings"})
        rewards.append(reward)
    assert sum(rewards) == 1.0 and "interaction_failed" in info["events"]


def test_last_record_is_none_until_a_step():
    """After a reset there is no last record; a step's is built when asked, once."""
    env = _env()
    assert env.last_record is None
    env.step(STILL)
    assert env.last_record is env.last_record
    env.reset(seed=0)
    assert env.last_record is None


def test_last_line_is_the_last_records_json():
    """The line a recorded walk writes is the record's own JSON, without building it first."""
    env = _env()
    assert env.last_line is None
    env.step(STILL)
    line = env.last_line
    assert line is not None and line == env.last_record.model_dump_json()


def test_a_non_finite_value_raises_as_the_record_did(monkeypatch):
    """A NaN pose from the backend raises the record model's error, as the record path did."""
    env, twin = _env(), _env()
    for runs in (env, twin):
        monkeypatch.setattr(runs.backend, "pose", lambda: Pose(float("nan"), 0.0, 0.0))
    with pytest.raises(ValidationError) as expected:
        twin.mission.step(twin._to_action(STILL))
    with pytest.raises(ValidationError) as raised:
        env.step(STILL)
    assert str(raised.value) == str(expected.value)
    assert env.last_record is None


@pytest.mark.parametrize(
    ("text", "cut"), [("abc def\n", "abc de"), ("héllo\x00 wörld", "hllo w"), ("", "")]
)
def test_printable_drops_what_a_text_space_refuses_then_cuts(text, cut):
    """Characters outside the text spaces' set are dropped, then the text is cut to length."""
    assert printable(text, 6) == cut
