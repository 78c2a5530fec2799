import gymnasium
import numpy as np
import pytest

from sortie.core.errors import ConfigError
from sortie.missions.gym_walk import DONE, SuiteWalk, walk_suite
from sortie.missions.rescue.env import RescueEnv
from sortie.testing.episodes import room_rescue

EPISODES = [room_rescue(f"e{i}", budget_s=3.0, casualty=(4.0, 1.0 + i)) for i in range(5)]


def _make() -> RescueEnv:
    return RescueEnv(EPISODES, camera="32x32@90", sensors=("rgb",))


def turn_by_view(observation: dict) -> dict:
    """Turn by what the camera sees, so episodes of different worlds differ."""
    n = len(observation["rgb"])
    brightness = observation["rgb"].reshape(n, -1).mean(axis=1)
    return {
        "turn": (brightness % 30).astype(np.float32),
        "speed": np.ones(n, np.float32),
        "pitch": np.zeros(n, int),
        "interact": np.zeros(n, int),
    }


def _first_episodes(seed: int) -> list[str]:
    envs = gymnasium.vector.SyncVectorEnv([_make] * 4)
    _, info = envs.reset(seed=seed)
    envs.close()
    return list(info["episode_id"])


def test_vector_copies_start_different_episodes() -> None:
    """Four copies of a vector env reset with one seed start four different episodes."""
    assert len(set(_first_episodes(0))) == 4


def test_vector_copies_draw_reproducibly() -> None:
    """The same seed gives the copies the same episodes; another seed shifts them."""
    assert _first_episodes(3) == _first_episodes(3) == ["e3", "e4", "e0", "e1"]


def test_the_walk_runs_each_episode_once_in_order() -> None:
    """Three copies walk five episodes: each once, handed out copy k % 3, in suite order."""
    walked = walk_suite(_make, turn_by_view, copies=3)
    assert [e.episode_id for e in walked] == [f"e{i}" for i in range(5)]
    assert [e.copy for e in walked] == [0, 1, 2, 0, 1]
    assert all(e.outcome is not None for e in walked)


class _Seeds(gymnasium.Wrapper):
    """Notes the seed of every reset, by episode id."""

    seeds: dict[str, int] = {}

    def reset(self, *, seed=None, options=None):
        observation, info = self.env.reset(seed=seed, options=options)
        self.seeds[info["episode_id"]] = seed
        return observation, info


def _seeds_of_a_walk(copies: int) -> dict[str, int]:
    _Seeds.seeds = {}
    walk_suite(lambda: _Seeds(_make()), turn_by_view, copies=copies, seed=7)
    return dict(_Seeds.seeds)


def test_episode_k_runs_with_seed_plus_k_whatever_the_copies() -> None:
    """With one copy or four, the walk resets episode k with the walk's seed plus k."""
    expected = {f"e{i}": 7 + i for i in range(5)}
    assert _seeds_of_a_walk(1) == _seeds_of_a_walk(4) == expected


def test_the_walk_runs_in_subprocesses() -> None:
    """An asynchronous walk in two processes runs each episode once too."""
    walked = walk_suite(_make, turn_by_view, copies=2, asynchronous=True)
    assert [e.episode_id for e in walked] == [f"e{i}" for i in range(5)]


def test_a_copy_whose_share_is_walked_says_done() -> None:
    """Copy 1 of 3 over five episodes starts e1, then e4, then reports DONE."""
    env = SuiteWalk(_make(), copy=1, copies=3)
    indices = [env.reset()[1]["walk_index"] for _ in range(3)]
    assert indices == [1, 4, DONE]


def test_a_copy_outside_the_copies_is_refused() -> None:
    """SuiteWalk refuses copy 3 of 3, naming the allowed range."""
    with pytest.raises(ConfigError, match=r"allowed: 0\.\.2"):
        SuiteWalk(_make(), copy=3, copies=3)
