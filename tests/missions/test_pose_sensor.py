import json
import statistics

import numpy as np
import pytest

from sortie.agents.base import AGENTS
from sortie.core.actions import Move
from sortie.core.errors import ConfigError, ParameterError
from sortie.core.observation import MissionObservation, Sensor
from sortie.core.pose import Pose
from sortie.core.run_config import PoseSettings
from sortie.missions.pose_sensor import PoseSensor
from sortie.missions.rescue.env import RescueEnv
from sortie.remote.convert import observation_from_wire, observation_to_wire
from sortie.remote.wire import ActRequest, parse_message
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store


class PoseReader:
    """A test agent that reads only the pose sensor and walks straight ahead."""

    sensors = frozenset({Sensor.POSE})
    families = frozenset({"rescue"})
    seen: list[Pose | None] = []

    def reset(self, brief, seed):
        """Forget nothing: the readings are kept across episodes, for the test to read."""

    def act(self, observation: MissionObservation):
        """Note the pose read, then walk forward."""
        PoseReader.seen.append(observation.pose)
        return Move(speed=1.0)


def test_the_world_frame_reads_the_true_pose_exactly():
    """With no noise, the world frame's reading is the body's pose itself."""
    sensor = PoseSensor(PoseSettings(), Pose(1.0, 2.0, 0.0, 90.0), seed=3)
    assert sensor.read(Pose(4.0, -1.0, 0.5, 30.0)) == Pose(4.0, -1.0, 0.5, 30.0)


def test_the_start_frame_has_x_ahead_and_y_to_the_left_of_the_start():
    """A body that started facing +y and walked 2 m along +y and 1 m along -x reads (2, 1)."""
    sensor = PoseSensor(PoseSettings(frame="start"), Pose(1.0, 2.0, 0.0, 90.0), seed=3)
    reading = sensor.read(Pose(0.0, 4.0, 0.0, 180.0))
    assert reading.x == pytest.approx(2.0)
    assert reading.y == pytest.approx(1.0)
    assert reading.yaw == pytest.approx(90.0)


def test_the_noise_is_the_declared_gaussian():
    """Over 4000 readings the errors have the declared standard deviations and no bias."""
    settings = PoseSettings(position_noise=0.5, heading_noise=4.0)
    sensor = PoseSensor(settings, Pose(0.0, 0.0, 0.0), seed=11)
    readings = [sensor.read(Pose(0.0, 0.0, 0.0, 0.0)) for _ in range(4000)]
    xs, yaws = [r.x for r in readings], [r.yaw for r in readings]
    assert statistics.stdev(xs) == pytest.approx(0.5, rel=0.05)
    assert statistics.stdev(yaws) == pytest.approx(4.0, rel=0.05)
    assert abs(statistics.fmean(xs)) < 0.05


def test_the_same_seed_reads_the_same_noisy_poses():
    """Two sensors of one seed read alike; another seed reads otherwise."""
    settings = PoseSettings(position_noise=0.2, heading_noise=2.0)

    def readings(seed):
        sensor = PoseSensor(settings, Pose(0.0, 0.0, 0.0), seed)
        return [sensor.read(Pose(float(i), 0.0, 0.0)) for i in range(5)]

    assert readings(7) == readings(7)
    assert readings(7) != readings(8)


def test_negative_noise_is_refused():
    """A standard deviation below zero is not a noise model."""
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        PoseSettings(position_noise=-0.1)


def test_a_run_gives_the_pose_to_an_agent_that_reads_it(tmp_path):
    """The agent reads its start-frame pose; the run's config and headers say how it reads."""
    PoseReader.seen = []
    request = RunRequest(
        ("rescue-smoke-v2",),
        "pose-reader",
        store=tmp_path / "s.db",
        limit=1,
        run_id="pose",
        pose=PoseSettings(frame="start"),
    )
    with AGENTS.override("pose-reader", PoseReader), Store(request.store) as store:
        plan = plan_run(request, store)
        execute(plan, request, store)
        config = store.run_config("pose")
        (stored,) = store.episodes("pose")
    assert PoseReader.seen[0] == Pose(0.0, 0.0, 0.0, 0.0)
    assert max(p.x for p in PoseReader.seen if p is not None) > 0.5
    header = json.loads(stored.record.read_text().splitlines()[0])
    assert header["config"]["pose"]["frame"] == "start"
    assert config.pose == PoseSettings(frame="start")
    assert config.backend.args["sensors"] == []


def test_pose_settings_for_an_agent_that_does_not_read_the_pose_are_refused(tmp_path):
    """Noise settings for an agent without the pose sensor would silently do nothing."""
    request = RunRequest(
        ("rescue-smoke-v2",),
        "explorer",
        store=tmp_path / "s.db",
        limit=1,
        pose=PoseSettings(position_noise=0.1),
    )
    with (
        Store(request.store) as store,
        pytest.raises(
            ParameterError,
            match=r"agent 'explorer': pose settings given, but its sensors \(depth, rgb, sem",
        ),
    ):
        plan_run(request, store)


def test_an_agent_without_the_pose_sensor_sees_no_pose():
    """The gymnasium env without ``pose`` among its sensors has no pose entry."""
    env = RescueEnv(suite="rescue-smoke-v2", sensors=("rgb",))
    observation, _ = env.reset(seed=0)
    assert "pose" not in observation
    assert "pose" not in env.observation_space.spaces


def test_the_gym_env_gives_the_pose_in_its_space():
    """With ``pose`` among the sensors, each observation holds it, within the space."""
    env = RescueEnv(suite="rescue-smoke-v2", sensors=("pose",), pose={"frame": "start"})
    observation, _ = env.reset(seed=0)
    assert np.array_equal(observation["pose"], np.zeros(4, np.float32))
    assert env.observation_space.contains(observation)


def test_the_gym_env_refuses_pose_settings_without_the_sensor():
    """Pose settings without ``pose`` among the sensors are a mistake, said in one line."""
    with pytest.raises(ConfigError, match="lack pose"):
        RescueEnv(suite="rescue-smoke-v2", sensors=("rgb",), pose={"frame": "start"})


def test_the_pose_survives_the_wire():
    """An observation's pose reading reaches a remote agent unchanged."""
    env = RescueEnv(suite="rescue-smoke-v2", sensors=("rgb", "pose"))
    env.reset(seed=0)
    observation, _ = env.mission.step(Move(speed=1.0))
    message = ActRequest(session="s", step=0, observation=observation_to_wire(observation))
    back = observation_from_wire(
        parse_message(ActRequest, message.model_dump_json().encode()).observation
    )
    assert observation.pose is not None
    assert back.pose == observation.pose


def test_a_show_pose_episode_keeps_the_gym_observation_within_its_space():
    """An aerial episode that tells its pose adds no entry the env's space does not declare."""
    from sortie.missions.aerial.env import AerialEnv
    from sortie.missions.loading import load_suite

    episode = load_suite("aerial-smoke-v1").episodes[0]
    telling = episode.model_copy(update={"mission": {**episode.mission, "show_pose": True}})
    env = AerialEnv(episodes=[telling], sensors=("rgb",), camera="32x32")
    observation, _ = env.reset(seed=0)
    assert "pose" not in observation
    assert env.observation_space.contains(observation)
