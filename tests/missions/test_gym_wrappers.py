import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.env_checker import check_env

import sortie  # noqa: F401  (registers the ids)
from sortie.core.errors import ConfigError
from sortie.missions.gym_wrappers import NumericAction, NumericObservation, rl_ready
from sortie.missions.loading import load_suite

FAMILIES = {
    "rescue": ("sortie/Rescue-v1", "rescue-smoke-v2"),
    "aerial": ("sortie/Aerial-v1", "aerial-smoke-v1"),
    "household": ("sortie/Household-v1", "household-smoke-v1"),
}
SMALL = "64x64@90"  # the smallest camera SB3's default CNN takes is 36x36


def _env(family: str, sensors=("rgb", "pose"), **kwargs) -> gymnasium.Env:
    env_id, suite = FAMILIES[family]
    episodes = load_suite(suite).episodes[:1]  # one world, built once
    return gymnasium.make(env_id, episodes=episodes, camera=SMALL, sensors=sensors, **kwargs)


@pytest.mark.parametrize("family", FAMILIES)
def test_stable_baselines_checker_accepts_the_wrapped_env(family: str) -> None:
    """SB3's env checker accepts each family's env through rl_ready and warns of nothing."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(rl_ready(_env(family, sensors=("rgb", "depth", "pose"))))


@pytest.fixture
def one_thread():
    """Run torch on one thread (faster for these tiny nets, fairer on a shared machine)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("family", FAMILIES)
def test_ppo_trains_a_few_hundred_steps(
    family: str, one_thread: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PPO with MultiInputPolicy trains 256 steps on each family's wrapped env and learns."""
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path))  # SB3's logger folder, else a new one in /tmp
    model = PPO(
        "MultiInputPolicy",
        rl_ready(_env(family, sensors=("rgb",))),
        n_steps=64,
        batch_size=64,
        n_epochs=1,
        seed=0,
        device="cpu",
        policy_kwargs={"net_arch": [32], "features_extractor_kwargs": {"cnn_output_dim": 32}},
    )
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(256)
    assert model.num_timesteps == 256
    assert any(
        not torch.equal(a, b) for a, b in zip(before, model.policy.parameters(), strict=True)
    )


def test_observations_are_numeric_with_a_time_left_of_shape_one() -> None:
    """The wrapped rescue observation drops the clue, keeps goal images and pose, time_left (1,)."""
    env = NumericObservation(_env("rescue"))
    observation, _ = env.reset(seed=0)
    assert set(observation) == {
        "rgb",
        "pose",
        "reference",
        "stretcher",
        "ambulance",
        "carrying",
        "time_left",
    }
    assert observation["time_left"].shape == (1,)
    assert env.observation_space.contains(observation)


def test_texts_as_codes_hold_the_characters() -> None:
    """With text="codes" the aerial instruction is its ASCII codes, zero past its end."""
    env = NumericObservation(_env("aerial"), text="codes")
    observation, _ = env.reset(seed=0)
    instruction = env.unwrapped.mission.brief.text
    codes = observation["instruction"]
    assert bytes(codes[: len(instruction)]).decode() == instruction
    assert not codes[len(instruction) :].any()
    assert env.observation_space.contains(observation)


def test_household_views_become_one_image_entry_each() -> None:
    """The household stack of four views is split into rgb_0..rgb_3 (front, left, back, right)."""
    env = _env("household", sensors=("rgb",))
    stacked, _ = env.reset(seed=0)
    split, _ = NumericObservation(env).reset(seed=0)
    assert [k for k in split if k.startswith("rgb")] == ["rgb_0", "rgb_1", "rgb_2", "rgb_3"]
    assert all(np.array_equal(split[f"rgb_{i}"], stacked["rgb"][i]) for i in range(4))


def test_depth_becomes_an_eight_bit_image_over_max_depth() -> None:
    """Depth becomes one uint8 channel, 255 standing for max_depth (20 m here)."""
    env = _env("rescue", sensors=("depth",), max_depth=20.0)
    raw, _ = env.reset(seed=0)
    wrapped, _ = NumericObservation(env).reset(seed=0)
    assert wrapped["depth"].shape == (64, 64, 1) and wrapped["depth"].dtype == np.uint8
    assert np.array_equal(wrapped["depth"][..., 0], np.rint(raw["depth"] * (255 / 20)))


def test_rescue_action_choices_stand_for_the_dict_action() -> None:
    """Rescue's dict becomes MultiDiscrete (interact, pitch, speed, turn); choices map back."""
    env = NumericAction(_env("rescue"), bins=3)
    assert list(env.action_space.nvec) == [4, 4, 3, 3]
    action = env.action(np.array([0, 1, 2, 0]))
    assert action["interact"] == 0 and action["pitch"] == 1
    assert (float(action["speed"]), float(action["turn"])) == (1.5, -30.0)


def test_household_targets_are_the_task_objects() -> None:
    """Household target choices are its tasks' object names; a place may be empty."""
    env = NumericAction(_env("household"))
    objects = sorted(env.unwrapped.episodes[0].mission["objects"])
    assert env.choices["target"] == tuple(objects)
    assert env.choices["place"] == ("", *objects)


def test_aerial_magnitudes_may_be_given() -> None:
    """Given values replace the evenly spaced magnitudes; the report is always empty."""
    env = NumericAction(_env("aerial"), values={"magnitude": (5.0, 10.0)})
    assert [float(v) for v in env.choices["magnitude"]] == [5.0, 10.0]
    assert env.choices["report"] == ("",)


def test_a_value_outside_the_box_is_refused() -> None:
    """A given value beyond the entry's bounds is refused, naming the entry and the bounds."""
    with pytest.raises(ConfigError, match=r"'turn'.*within \[-30, 30\]"):
        NumericAction(_env("rescue"), values={"turn": (45.0,)})


def test_an_unknown_text_mode_is_refused() -> None:
    """NumericObservation refuses a text mode other than drop or codes, naming both."""
    with pytest.raises(ConfigError, match="allowed: \\('drop', 'codes'\\)"):
        NumericObservation(_env("rescue"), text="embed")


def test_render_mode_human_is_refused_at_creation() -> None:
    """render_mode="human" fails when the env is made, naming the modes it has."""
    with pytest.raises(ConfigError, match="render_mode 'human' is not supported.*'rgb_array'"):
        _env("rescue", render_mode="human")


def _features(observation: dict) -> torch.Tensor:
    """Return a small feature vector per copy: mean colour, carrying, time left."""
    colour = torch.as_tensor(observation["rgb"], dtype=torch.float32).mean(dim=(1, 2)) / 255
    carrying = torch.as_tensor(observation["carrying"], dtype=torch.float32)[:, None]
    time_left = torch.as_tensor(observation["time_left"], dtype=torch.float32) / 300
    return torch.cat([colour, carrying, time_left], dim=1)


def test_a_hand_written_loop_learns_on_a_vector_env(one_thread: None) -> None:
    """A CleanRL-style loop samples MultiDiscrete actions for two copies and takes a step."""
    envs = gymnasium.vector.SyncVectorEnv([lambda: rl_ready(_env("rescue", sensors=("rgb",)))] * 2)
    nvec = envs.single_action_space.nvec.tolist()
    policy = torch.nn.Linear(5, sum(nvec))
    optimiser = torch.optim.SGD(policy.parameters(), lr=0.1)
    before = policy.weight.detach().clone()
    observation, _ = envs.reset(seed=0)
    log_probs, rewards = [], []
    for _ in range(16):
        heads = torch.split(policy(_features(observation)), nvec, dim=1)
        dists = [torch.distributions.Categorical(logits=h) for h in heads]
        choices = [d.sample() for d in dists]
        log_probs.append(sum(d.log_prob(c) for d, c in zip(dists, choices, strict=True)))
        observation, reward, *_ = envs.step(torch.stack(choices, dim=1).numpy())
        # +1: 16 steps earn no reward yet, and the gradient must not be zero
        rewards.append(torch.as_tensor(reward, dtype=torch.float32) + 1.0)
    loss = -(torch.stack(log_probs) * torch.stack(rewards)).mean()
    loss.backward()
    optimiser.step()
    envs.close()
    assert not torch.equal(before, policy.weight)
