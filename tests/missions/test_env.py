import numpy as np
from gymnasium.utils.env_checker import check_env

from sortie.missions.env import RescueEnv
from sortie.sim.camera import CameraSpec
from sortie.testing.episodes import room_rescue


def _env() -> RescueEnv:
    return RescueEnv([room_rescue()], camera=CameraSpec(32, 32, 90.0))


def test_passes_gymnasium_env_checker():
    """Gymnasium's own env checker accepts RescueEnv."""
    check_env(_env(), skip_render_check=False)


def test_observations_hold_no_position():
    """The observation keys are images, clue, carrying and time left: nothing positional."""
    observation, _ = _env().reset(seed=0)
    assert set(observation) == {"rgb", "depth", "semantic", "reference", "clue", "carrying",
                                "time_left"}  # fmt: skip
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
    env = RescueEnv([room_rescue()], camera=CameraSpec(32, 32, 90.0), triggers="native")
    env.reset(seed=0)
    *_, info = env.step({"turn": np.float32(0), "speed": np.float32(0), "pitch": 0,
                         "interact": 1})  # fmt: skip
    assert "interaction_failed" in info["events"]
