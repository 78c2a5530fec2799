"""A gymnasium walk written as a sortie run: records, store rows, resume, a crash, the agent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sortie.core.errors import ConfigError
from sortie.core.records_io import SuiteHeader, read_trajectory, write_suite
from sortie.export.replay import replay
from sortie.missions.rescue.env import RescueEnv
from sortie.run.jobs import episode_seed
from sortie.run.store import Store
from sortie.run.walk_records import WalkRecording, record_walk
from sortie.testing.episodes import room_rescue
from tests.export.conftest import cli
from tests.missions.test_gym_walk import turn_by_view

EPISODES = [room_rescue(f"walk/{i}", budget_s=3.0, casualty=(4.0, 1.0 + i)) for i in range(3)]
ENV = {"camera": "32x32@90", "sensors": ("rgb",)}


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A suite file of three short room rescues."""
    path = tmp_path / "walk.jsonl"
    write_suite(path, SuiteHeader(suite="walk"), EPISODES)
    return path


def _walk(suite: Path, store: Path, copies: int = 1, policy=turn_by_view) -> list:
    recording = WalkRecording(str(suite), "turner", run_id="w", store=store, env_args=ENV)
    return record_walk("sortie/Rescue-v1", policy, recording, copies=copies)


def _steps(store: Path) -> dict[str, list[str]]:
    """Return each stored episode's step lines without their wall-clock timings."""
    with Store(store) as opened:
        episodes = opened.episodes("w")
    return {
        e.episode_id: [
            s.model_copy(update={"timings": None}).model_dump_json()
            for s in read_trajectory(e.record).steps
        ]
        for e in episodes
    }


def test_a_walk_is_stored_as_a_run_with_the_seeds_sortie_run_gives(suite, tmp_path):
    """Every episode is stored once, as agent gym-policy, seeded as `sortie run` seeds it."""
    walked = _walk(suite, tmp_path / "s.db")
    with Store(tmp_path / "s.db") as opened:
        stored = {e.episode_id: e for e in opened.episodes("w")}
        config = opened.run_config("w")
    assert sorted(stored) == [e.episode_id for e in EPISODES] == [w.episode_id for w in walked]
    assert all(e.seed == episode_seed(0, e.episode_id) for e in stored.values())
    assert config is not None and config.agent.name == "gym-policy"
    assert config.agent.args == {"policy": "turner", "sensors": "rgb"}
    header = read_trajectory(stored["walk/0"].record).header
    assert header.seed == stored["walk/0"].seed
    assert [e.steps for e in stored.values()] == [w.steps for w in walked]


def test_each_walked_record_replays_as_recorded_from_its_own_header(suite, tmp_path):
    """Replaying a record from its header's seed and settings meets every stored pose."""
    _walk(suite, tmp_path / "s.db")
    with Store(tmp_path / "s.db") as opened:
        episodes, config = opened.episodes("w"), opened.run_config("w")
    assert config is not None
    for episode in episodes:
        trajectory = read_trajectory(episode.record)
        replayed = list(replay(trajectory, episode.record, config, ("rgb",)))
        assert len(replayed) == len(trajectory.steps) > 1


def test_the_records_do_not_depend_on_the_number_of_copies(suite, tmp_path):
    """One copy or two: the same steps in every record (timings aside)."""
    _walk(suite, tmp_path / "one" / "s.db", copies=1)
    _walk(suite, tmp_path / "two" / "s.db", copies=2)
    one, two = _steps(tmp_path / "one" / "s.db"), _steps(tmp_path / "two" / "s.db")
    assert one == two and all(len(steps) > 1 for steps in one.values())


def test_a_second_walk_of_the_same_run_walks_only_what_is_missing(suite, tmp_path):
    """A policy that fails after the first episode keeps it; the same call walks the rest."""
    calls = {"n": 0}

    def failing(observation: dict) -> dict:
        calls["n"] += 1
        if calls["n"] > 40:
            raise RuntimeError("the policy's process died")
        return turn_by_view(observation)

    with pytest.raises(RuntimeError, match="died"):
        _walk(suite, tmp_path / "s.db", policy=failing)
    with Store(tmp_path / "s.db") as opened:
        kept = [e.episode_id for e in opened.episodes("w")]
    assert kept and len(kept) < len(EPISODES)
    rest = _walk(suite, tmp_path / "s.db")
    assert sorted(kept + [w.episode_id for w in rest]) == [e.episode_id for e in EPISODES]


def test_each_episode_starts_from_the_seed_its_record_holds(suite, tmp_path):
    """With a noisy pose sensor, the walk's first reading is the one the job's seed gives."""
    noisy = {**ENV, "sensors": ("rgb", "pose"), "pose": {"position_noise": 0.5}}
    seen = []

    def remember(observation: dict) -> dict:
        seen.append(observation["pose"][0].copy())
        return turn_by_view(observation)

    recording = WalkRecording(str(suite), "p", run_id="w", store=tmp_path / "s.db", env_args=noisy)
    record_walk("sortie/Rescue-v1", remember, recording)
    env = RescueEnv(EPISODES, **noisy)
    for seed in (episode_seed(0, "walk/0"), 1):
        options = {"episode": EPISODES[0], "episode_seed": seed}
        first = env.reset(options=options)[0]["pose"]
        assert np.array_equal(first, seen[0]) == (seed != 1)


def test_the_suite_is_the_walks_not_the_envs(suite, tmp_path):
    """Giving the env its own episodes as well is refused, naming the keyword."""
    recording = WalkRecording(str(suite), "p", store=tmp_path / "s.db", env_args={"suite": "x"})
    with pytest.raises(ConfigError, match=r"env_args\['suite'\]"):
        record_walk("sortie/Rescue-v1", turn_by_view, recording)


def test_sortie_run_of_the_gym_policy_agent_says_how_its_runs_are_made(suite, tmp_path):
    """The agent only names a walk's policy: `sortie run` with it stops with one line."""
    words = ["run", str(suite), "--agent", "gym-policy", "-a", "policy=p"]
    output = cli([*words, "--store", str(tmp_path / "s.db")], code=2)
    assert "record_walk" in output
