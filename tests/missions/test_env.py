import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from sortie.core.errors import ConfigError
from sortie.missions.loading import load_suite
from sortie.missions.rescue.env import RescueEnv
from sortie.sim.camera import CameraSpec
from sortie.testing.episodes import room_rescue

SMALL = CameraSpec(32, 32, 90.0)
STILL = {"turn": np.float32(0), "speed": np.float32(0), "pitch": 0, "interact": 0}


def _env(**kwargs) -> RescueEnv:
    return RescueEnv([room_rescue()], camera=SMALL, **kwargs)


def test_passes_gymnasium_env_checker_without_warnings():
    """Gymnasium's env checker accepts RescueEnv and warns of nothing (no unbounded space)."""
    env = gymnasium.make("sortie/Rescue-v1", episodes=[room_rescue()], camera=SMALL)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=False)


def test_observations_hold_no_position():
    """The observation keys are images, goal images, clue, carrying and time left: no position."""
    observation, _ = _env().reset(seed=0)
    assert set(observation) == {
        "rgb",
        "depth",
        "semantic",
        "reference",
        "stretcher",
        "ambulance",
        "clue",
        "carrying",
        "time_left",
    }
    assert "red jacket" in observation["clue"]


def test_same_seed_same_rollout():
    """Two envs reset with one seed and fed the same actions give identical observations."""
    rollouts = []
    for _ in range(2):
        env = _env()
        env.action_space.seed(5)
        observation, _ = env.reset(seed=5)
        frames = [observation["rgb"]]
        for _ in range(5):
            observation, *_ = env.step(env.action_space.sample())
            frames.append(observation["rgb"])
        rollouts.append(frames)
    assert all(np.array_equal(a, b) for a, b in zip(*rollouts, strict=True))


def test_interact_action_maps_to_an_interaction():
    """Choosing 'grab' far from the casualty records a failed interaction under native."""
    env = _env(triggers="native")
    env.reset(seed=0)
    *_, info = env.step({**STILL, "interact": 1})
    assert "interaction_failed" in info["events"]


def test_depth_is_clipped_to_max_depth():
    """Depth farther than max_depth reads as max_depth, inside the observation space."""
    env = _env(max_depth=2.0)
    observation, _ = env.reset(seed=0)
    assert observation["depth"].max() == np.float32(2.0)
    assert env.observation_space["depth"].contains(observation["depth"])


def test_time_left_is_bounded_by_the_largest_budget():
    """The time_left space ends at the largest budget among the env's episodes."""
    env = RescueEnv(
        [room_rescue("a", budget_s=60.0), room_rescue("b", budget_s=90.0)], camera=SMALL, sensors=()
    )
    assert float(env.observation_space["time_left"].high) == 90.0


def test_reset_refuses_an_episode_beyond_the_time_bound():
    """An episode passed to reset whose budget exceeds the time_left space is refused."""
    env = RescueEnv([room_rescue(budget_s=60.0)], camera=SMALL, sensors=())
    with pytest.raises(ConfigError, match="exceeds the 60 s"):
        env.reset(seed=0, options={"episode": room_rescue("long", budget_s=90.0)})


def test_walking_into_sight_of_the_casualty_earns_one():
    """Walking toward the casualty earns reward 1 on the step S1 completes, 0 before."""
    env = RescueEnv([room_rescue()], camera=SMALL, sensors=())
    env.reset(seed=0)
    rewards = [
        env.step({**STILL, "turn": np.float32(-3.8 if i == 0 else 0.0), "speed": np.float32(1.5)})[
            1
        ]
        for i in range(15)
    ]
    assert sum(rewards) == 1.0 and rewards[0] == 0.0


def test_spent_budget_truncates():
    """Standing still until the budget is spent ends the episode truncated, not terminated."""
    env = RescueEnv([room_rescue(budget_s=0.4)], camera=SMALL, sensors=())
    env.reset(seed=0)
    env.step(STILL)
    _, reward, terminated, truncated, info = env.step(STILL)
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert info["failure_reason"] == "timeout_s1"


def test_out_of_range_choice_names_the_key():
    """An interaction index outside the action space fails naming the key and the range."""
    env = _env()
    env.reset(seed=0)
    with pytest.raises(ConfigError, match=r"action\['interact'\] is 7; allowed: 0..3"):
        env.step({**STILL, "interact": 7})


def test_gymnasium_make_loads_a_committed_suite():
    """gymnasium.make('sortie/Rescue-v1', suite=...) draws from that packaged suite."""
    env = gymnasium.make("sortie/Rescue-v1", suite="rescue-l1-v2")
    assert env.unwrapped.episodes == load_suite("rescue-l1-v2").episodes


def test_a_suite_of_another_family_is_refused():
    """RescueEnv over an aerial suite fails saying it runs rescue episodes only."""
    with pytest.raises(ConfigError, match="runs rescue episodes only; got aerial"):
        RescueEnv(suite="aerial-smoke-v1")


def test_needs_exactly_one_of_episodes_and_suite():
    """Giving both episodes and a suite, or neither, fails naming both."""
    for kwargs in ({}, {"episodes": [room_rescue()], "suite": "rescue-l1-v2"}):
        with pytest.raises(ConfigError, match="exactly one of episodes or suite"):
            RescueEnv(**kwargs)


def test_the_env_refuses_a_backend_that_cannot_carry():
    """A RescueEnv on a backend without interactions is refused when it is made."""
    from sortie.backends import BACKENDS
    from sortie.backends.catalog import Capabilities
    from sortie.backends.embedded import EmbeddedBackend

    class NoHands(EmbeddedBackend):
        capabilities = Capabilities(
            frozenset({"walker"}), False, frozenset({"rgb", "depth", "semantic"}), "any"
        )

    with BACKENDS.override("nohands", NoHands), pytest.raises(ConfigError, match="interactions"):
        RescueEnv(suite="rescue-smoke-v2", backend="nohands")
