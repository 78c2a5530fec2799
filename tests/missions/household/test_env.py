"""HouseholdEnv: the checker, its observations (four views, texts), subtask actions, ending."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from sortie.backends.embedded import EmbeddedBackend
from sortie.core.errors import ConfigError
from sortie.missions.household.env import VERBS, HouseholdEnv, history_line
from sortie.missions.household.mission import HouseholdMission
from sortie.missions.household.observation import HouseholdObservation
from sortie.missions.household.records import RoundRecord
from sortie.sim.camera import CameraSpec
from tests.missions.household.conftest import PUT_MUG
from tests.missions.household.kitchen import episode

SMALL = CameraSpec(16, 16, 90.0, -20.0)
PLAN = [
    ("go_to", "fridge_0", "", "all_in_one"),
    ("open", "fridge_0", "", "all_in_one"),
    ("pick", "mug_1", "", "all_in_one"),
    ("go_to", "table_0", "", "all_in_one"),
    ("put", "mug_1", "table_0", "all_in_one"),
]
"""The test kitchen's expert plan for PUT_MUG, before its end."""


def _env(max_rounds: int = 20, **kwargs) -> HouseholdEnv:
    kwargs.setdefault("sensors", ())
    return HouseholdEnv([episode([PUT_MUG], max_rounds=max_rounds)], camera=SMALL, **kwargs)


def _act(
    env: HouseholdEnv, action: str, target: str = "", place: str = "", skill: str = "all_in_one"
):
    return {
        "action": VERBS.index(action),
        "target": target,
        "place": place,
        "skill": env.skills.index(skill),
    }


def test_passes_gymnasium_env_checker_without_warnings(kitchen: None) -> None:
    """Gymnasium's env checker accepts HouseholdEnv with every image and warns of nothing."""
    env = gymnasium.make(
        "sortie/Household-v1",
        episodes=[episode([PUT_MUG], max_rounds=5)],
        camera=SMALL,
        sensors=("rgb", "depth", "semantic"),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=False)


def test_observation_holds_four_views_and_texts_no_position(kitchen: None) -> None:
    """The keys are the stacked images and the texts and rounds; rgb holds four views."""
    observation, _ = _env(sensors=("rgb", "depth")).reset(seed=0)
    assert set(observation) == {
        "rgb",
        "depth",
        "task",
        "inventory",
        "history",
        "feedback",
        "code",
        "round",
        "rounds_left",
    }
    assert observation["rgb"].shape == (4, 16, 16, 3)
    assert observation["depth"].shape == (4, 16, 16)
    assert (observation["task"], observation["round"], observation["rounds_left"]) == (
        "Tidy up.",
        0,
        20,
    )


def test_views_are_stacked_front_left_back_right(kitchen: None) -> None:
    """The stacked rgb is the mission's four views in their order (front first)."""
    observation, _ = _env(sensors=("rgb",)).reset(seed=0)
    backend = EmbeddedBackend(body="manipulator", sensors=("rgb",), camera=SMALL)
    mission = HouseholdMission(backend).reset(episode([PUT_MUG]), 0)
    assert isinstance(mission, HouseholdObservation)
    for k, view in enumerate(mission.views):
        assert np.array_equal(observation["rgb"][k], view.rgb)


def test_the_expert_plan_then_end_earns_one_on_the_last_round(kitchen: None) -> None:
    """With perfect skills the plan's rounds earn 0 and the end round 1, terminated."""
    env = _env(skills="perfect")
    env.reset(seed=0)
    rewards = [env.step(_act(env, a, t, p, s))[1] for a, t, p, s in PLAN]
    _, reward, terminated, truncated, info = env.step(_act(env, "end"))
    assert (rewards, reward, terminated, truncated) == ([0.0] * 5, 1.0, True, False)
    assert info["outcome"] == "success"


def test_a_refused_round_shows_in_history_feedback_and_code(kitchen: None) -> None:
    """A put with an empty hand gives code L2, its feedback and a history line saying so."""
    env = _env()
    env.reset(seed=0)
    observation, *_ = env.step(_act(env, "put", "mug_1", "table_0", "grasp"))
    assert observation["code"] == "L2"
    assert observation["feedback"]
    assert observation["history"] == "(1) put, mug_1, table_0 [grasp] (failure L2)"


def test_the_inventory_names_what_is_held(kitchen: None) -> None:
    """After picking the mug out of the open fridge the inventory is its name."""
    env = _env(skills="perfect")
    env.reset(seed=0)
    for a, t, p, s in PLAN[:3]:
        observation, *_ = env.step(_act(env, a, t, p, s))
    assert observation["inventory"] == "mug_1"
    assert observation["history"].count("\n") == 2


def test_ending_at_once_terminates_without_reward(kitchen: None) -> None:
    """End before any subtask ends the episode terminated, reward 0, ended unfinished."""
    env = _env()
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(_act(env, "end"))
    assert (reward, terminated, truncated) == (0.0, True, False)
    assert info["failure_reason"] == "ended_unfinished"


def test_spent_rounds_truncate(kitchen: None) -> None:
    """Two go_to rounds of a two-round budget end the episode truncated, not terminated."""
    env = _env(max_rounds=2)
    env.reset(seed=0)
    env.step(_act(env, "go_to", "table_0"))
    observation, reward, terminated, truncated, _ = env.step(_act(env, "go_to", "counter_0"))
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert observation["rounds_left"] == 0


def test_skills_follow_the_setting(kitchen: None) -> None:
    """Sensor-only envs offer no all-in-one skill, so the skill space is one smaller."""
    privileged, sensor_only = _env(), _env(setting="sensor-only")
    assert "all_in_one" in privileged.skills and "all_in_one" not in sensor_only.skills
    assert sensor_only.action_space["skill"].n == privileged.action_space["skill"].n - 1


def test_an_out_of_range_skill_is_refused(kitchen: None) -> None:
    """A skill index past the offered skills fails naming the key and the range."""
    env = _env()
    env.reset(seed=0)
    with pytest.raises(ConfigError, match=r"action\['skill'\] is 9; allowed: 0..4"):
        env.step({"action": 0, "target": "table_0", "place": "", "skill": 9})


def test_history_line_keeps_one_line_per_round() -> None:
    """A planner's line break becomes a space, and an end round says end."""
    spoken = RoundRecord(
        round=2, action="go_to", target="the\ntable", skill="image_nav", status="success"
    )
    ended = RoundRecord(round=3, action="end", status="end")
    assert history_line(spoken) == "(2) go_to, the table [image_nav] (success)"
    assert history_line(ended) == "(3) end (end)"
