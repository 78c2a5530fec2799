"""The navigator agent: its checkpoint's errors, its honest sensors, its determinism, a run."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
import torch

from sortie.agents.base import AGENTS
from sortie.agents.navigator import NavigatorAgent, policy
from sortie.core.actions import Interact, Interaction, Move
from sortie.core.errors import ConfigError
from sortie.core.observation import Brief, Frames, MissionObservation, Sensor
from sortie.core.records_io import read_trajectory
from sortie.run.store import Store
from tests.export.conftest import cli

TINY = policy.NetShape(size=16, width=4, features=8, hidden=8)


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    """Return an untrained tiny navigator's checkpoint."""
    path = tmp_path / "tiny.pt"
    with policy.deterministic(0):
        policy.save_checkpoint(path, policy.NavigatorNet(TINY), {"phase": "test"})
    return path


def observation(step: int, carrying: bool = False) -> MissionObservation:
    """Return a made-up 24x24 observation that changes with ``step``."""
    rng = np.random.default_rng(step)
    rgb = rng.integers(0, 256, (24, 24, 3), dtype=np.uint8)
    depth = rng.uniform(0.5, 20.0, (24, 24)).astype(np.float32)
    depth[0, 0] = np.inf
    return MissionObservation(Frames(rgb=rgb, depth=depth), carrying=carrying, step=step)


def brief() -> Brief:
    """Return a rescue brief with a reference and a stretcher image."""
    images = {
        "reference": np.full((24, 24, 3), 200, np.uint8),
        "stretcher": np.full((24, 24, 3), 30, np.uint8),
    }
    return Brief("rescue", "L1", "find them", images=images)


def test_the_agent_declares_only_rgb_and_depth():
    """The navigator asks for its camera's RGB and depth, no pose and no privileged view."""
    factory = AGENTS.get("navigator")
    assert factory.sensors == frozenset({Sensor.RGB, Sensor.DEPTH})
    assert not hasattr(factory, "attach")


def test_a_missing_checkpoint_is_one_clear_line(tmp_path):
    """A checkpoint path with no file says so, naming it, on one line."""
    with pytest.raises(ConfigError) as raised:
        NavigatorAgent(str(tmp_path / "none.pt"))
    message = str(raised.value)
    assert "none.pt: no such file" in message and "\n" not in message


def test_no_checkpoint_argument_says_how_to_give_one():
    """The agent without -a checkpoint names the argument and what writes it."""
    with pytest.raises(ConfigError, match="needs -a checkpoint=PATH"):
        NavigatorAgent()


def test_weights_of_another_shape_are_one_clear_line(tmp_path, checkpoint):
    """Weights that do not fit the shape the file declares name the layer and both shapes."""
    content = torch.load(checkpoint, weights_only=True)
    content["shape"] = {**content["shape"], "hidden": 12}
    wrong = tmp_path / "wrong.pt"
    torch.save(content, wrong)
    with pytest.raises(ConfigError) as raised:
        NavigatorAgent(str(wrong))
    message = str(raised.value)
    assert "has shape" in message and "needs" in message and "\n" not in message


def test_a_file_that_is_not_a_checkpoint_is_refused(tmp_path):
    """A file torch cannot read is refused as not a torch checkpoint."""
    junk = tmp_path / "junk.pt"
    junk.write_text("not a checkpoint")
    with pytest.raises(ConfigError, match="not a torch checkpoint"):
        NavigatorAgent(str(junk))


def test_the_same_checkpoint_and_observations_give_the_same_actions(checkpoint):
    """Two agents from one checkpoint choose the same actions, step for step, memory included."""
    agents = [NavigatorAgent(str(checkpoint)) for _ in range(2)]
    chosen = []
    for agent in agents:
        agent.reset(brief(), seed=0)
        chosen.append([agent.step_logits(observation(k, k > 5)).tolist() for k in range(10)])
    assert chosen[0] == chosen[1]


def test_the_memory_is_emptied_at_reset(checkpoint):
    """After a reset the agent answers the first observation as a fresh agent does."""
    agent = NavigatorAgent(str(checkpoint))
    agent.reset(brief(), seed=0)
    first = agent.step_logits(observation(0)).tolist()
    agent.step_logits(observation(1))
    agent.reset(brief(), seed=0)
    assert agent.step_logits(observation(0)).tolist() == first


def test_the_goal_image_follows_the_carry():
    """Before the pick-up the goal is the reference; after it, the stretcher, else the ambulance."""
    images = {"reference": 1, "stretcher": 2, "ambulance": 3}
    assert policy.goal_name(images, carrying=False) == "reference"
    assert policy.goal_name(images, carrying=True) == "stretcher"
    assert policy.goal_name({"reference": 1, "ambulance": 3}, carrying=True) == "ambulance"
    assert policy.goal_name({"reference": 1}, carrying=True) is None


def test_expert_actions_map_to_the_nearest_class():
    """The oracle's continuous moves and its interactions map to the classes they are nearest."""
    names = [
        policy.ACTION_NAMES[policy.label_of(action)]
        for action in (
            Move(2.0, 1.5),
            Move(25.0, 1.2),
            Move(-12.0, 1.5),
            Move(30.0, 0.0),
            Move(-15.0, 0.2),
            Move(15.0, -0.75),
            Interact(Interaction.DROP),
        )
    ]
    assert names == [
        "forward",
        "forward_left",
        "forward_right",
        "turn_left",
        "turn_right",
        "back",
        "drop",
    ]


def test_a_run_goes_through_the_store(tmp_path, checkpoint):
    """A run of the navigator plays a smoke episode at a small camera and stores it."""
    store = tmp_path / "s.db"
    words = ["run", "rescue-smoke-v2", "--agent", "navigator", "-a", f"checkpoint={checkpoint}"]
    words += ["--limit", "1", "--camera", "32x32@90", "--store", str(store), "--run-id", "nav"]
    output = cli(words)
    assert "rescue-smoke-v2" in output
    with Store(store) as opened:
        (episode,) = opened.episodes("nav")
    assert episode.outcome is not None


def test_acting_leaves_the_process_thread_count_alone(checkpoint):
    """The agent runs its network on one thread and gives the process its thread count back."""
    torch.set_num_threads(2)
    agent = NavigatorAgent(str(checkpoint))
    agent.reset(brief(), seed=0)
    agent.act(observation(0))
    assert torch.get_num_threads() == 2


def test_a_run_pins_the_checkpoint_and_refuses_a_retrained_one(tmp_path, checkpoint):
    """The stored arguments hold the file's sha256; the same run on a changed file is refused."""
    store = tmp_path / "s.db"
    words = ["run", "rescue-smoke-v2", "--agent", "navigator", "-a", f"checkpoint={checkpoint}"]
    words += ["--camera", "32x32@90", "--store", str(store), "--run-id", "nav"]
    cli([*words, "--limit", "1"])
    digest = hashlib.sha256(checkpoint.read_bytes()).hexdigest()
    with Store(store) as opened:
        (episode,) = opened.episodes("nav")
        config = opened.run_config("nav")
    assert config is not None and config.agent.args["checkpoint_sha256"] == digest
    assert read_trajectory(episode.record).header.agent.args["checkpoint_sha256"] == digest
    with policy.deterministic(1):
        policy.save_checkpoint(checkpoint, policy.NavigatorNet(TINY), {"phase": "retrained"})
    assert "checkpoint_sha256" in cli([*words, "--limit", "2"], code=2)


def test_a_checkpoint_that_changed_since_the_run_began_is_refused(checkpoint):
    """A worker given the digest of another file refuses to load it, naming both digests."""
    with pytest.raises(ConfigError, match="the file changed since"):
        NavigatorAgent(str(checkpoint), checkpoint_sha256="0" * 64)


def test_acting_before_reset_is_one_clear_line(checkpoint):
    """An agent asked to act before its episode's brief says so, not an AttributeError."""
    with pytest.raises(ConfigError, match="act before reset"):
        NavigatorAgent(str(checkpoint)).act(observation(0))
