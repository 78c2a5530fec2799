import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from sortie.core.actions import FlightPrimitive
from sortie.core.errors import ConfigError
from sortie.missions.aerial.env import ACTIONS, AerialEnv
from sortie.missions.aerial.spec import CAMERA as AERIAL_CAMERA
from sortie.missions.aerial.vocabulary import TaskActionKind
from sortie.missions.loading import load_suite
from sortie.sim.camera import CameraSpec
from sortie.testing.episodes import aerial_hop

SMALL = CameraSpec(32, 32, 90.0, -45.0)
FORWARD, DONE = ACTIONS.index(FlightPrimitive.FORWARD), ACTIONS.index(TaskActionKind.DONE)


def _act(choice: int, magnitude: float = 0.0, report: str = "") -> dict:
    return {"action": choice, "magnitude": np.float32(magnitude), "report": report}


def _env(*episodes, **kwargs) -> AerialEnv:
    return AerialEnv(list(episodes) or [aerial_hop()], camera=SMALL, **kwargs)


def test_passes_gymnasium_env_checker_without_warnings():
    """Gymnasium's env checker accepts AerialEnv and warns of nothing (no unbounded space)."""
    env = gymnasium.make("sortie/Aerial-v1", episodes=[aerial_hop()], camera=SMALL)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=False)


def test_default_camera_is_the_runners_aerial_camera():
    """Without a camera the env flies MissionBench's, the one the runner gives aerial agents."""
    env = AerialEnv([aerial_hop()], sensors=())
    assert env.camera == CameraSpec(**AERIAL_CAMERA)
    assert env.backend.body_kind == "multirotor"


def test_observation_holds_the_instruction_and_no_position():
    """The observation keys are images, the instruction and time left: nothing positional."""
    observation, _ = _env().reset(seed=0)
    assert set(observation) == {"rgb", "depth", "semantic", "instruction", "time_left"}
    assert observation["instruction"] == "Fly to the goal and inspect it."
    assert float(observation["time_left"]) == 20.0


def test_reaching_the_goal_and_saying_done_earns_one():
    """Four full forward steps reach the goal; done then ends the episode with reward 1."""
    env = _env(sensors=())
    env.reset(seed=0)
    rewards = [env.step(_act(FORWARD, 6.0))[1] for _ in range(4)]
    _, reward, terminated, truncated, info = env.step(_act(DONE))
    assert (rewards, reward, terminated, truncated) == ([0.0] * 4, 1.0, True, False)
    assert info["outcome"] == "success"


def test_saying_done_at_the_start_terminates_without_reward():
    """Done far from the goal ends the episode terminated, reward 0, as premature."""
    env = _env(sensors=())
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(_act(DONE))
    assert (reward, terminated, truncated) == (0.0, True, False)
    assert info["failure_reason"] == "premature_termination"


def test_the_report_reaches_the_judge():
    """A reporting mission succeeds when the action's report is the expected answer."""
    env = _env(aerial_hop(("reporting",), answer="red", answer_kind="colour"), sensors=())
    env.reset(seed=0)
    *_, info = env.step(_act(DONE, report="red"))
    assert info["outcome"] == "success"


def test_spent_steps_truncate():
    """Hovering until T_max steps are spent ends the episode truncated, not terminated."""
    env = _env(aerial_hop(max_steps=2), sensors=())
    env.reset(seed=0)
    env.step(_act(ACTIONS.index(FlightPrimitive.TURN_LEFT)))
    _, reward, terminated, truncated, info = env.step(_act(ACTIONS.index(FlightPrimitive.UP)))
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert info["failure_reason"] == "timeout"


def test_time_left_is_bounded_by_the_step_budget():
    """The time_left space ends at the largest T_max of the episodes (one second a step)."""
    env = AerialEnv(
        [aerial_hop(), aerial_hop(("patrol",), patrol=[[0, 0, 20], [24, 0, 20]])], sensors=()
    )
    assert float(env.observation_space["time_left"].high) == 50.0


def test_out_of_range_choice_names_the_key():
    """An action index outside the space fails naming the key and the range."""
    env = _env(sensors=())
    env.reset(seed=0)
    with pytest.raises(ConfigError, match=r"action\['action'\] is 12; allowed: 0..11"):
        env.step(_act(12))


def test_gymnasium_make_loads_a_committed_suite():
    """gymnasium.make('sortie/Aerial-v1', suite=...) draws from that packaged suite."""
    env = gymnasium.make("sortie/Aerial-v1", suite="aerial-smoke-v1")
    assert env.unwrapped.episodes == load_suite("aerial-smoke-v1").episodes


def test_render_without_the_rgb_sensor_draws_the_view():
    """Render gives an RGB image of the camera's size even when the agent asks for no RGB."""
    env = _env(sensors=("depth",), render_mode="rgb_array")
    env.reset(seed=0)
    image = env.render()
    assert image is not None and image.shape == (32, 32, 3) and image.dtype == np.uint8
    assert image.std() > 0
