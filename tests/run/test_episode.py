import json
import math

import pytest

from sortie.agents.base import AGENTS
from sortie.core.errors import ConfigError
from sortie.core.records_io import Suite, SuiteHeader, read_suite, read_trajectory, write_suite
from sortie.run.suite import RunSettings, episode_seed, run_suite
from sortie.testing.episodes import room_rescue


class Exploding:
    """An agent that raises on its third action."""

    name = "exploding"
    sensors = frozenset()

    def reset(self, brief, seed):
        self.calls = 0

    def act(self, observation):
        from sortie.core.actions import Move

        self.calls += 1
        if self.calls == 3:
            raise RuntimeError("boom")
        return Move(0.0, 1.0)


def test_oracle_completes_the_handmade_room_and_its_record_rescores(tmp_path):
    """The oracle succeeds; the JSONL record alone gives TCR 1 and TS 100."""
    suite = Suite(SuiteHeader(suite="t"), [room_rescue()])
    result = run_suite(suite, "oracle", {}, RunSettings(tmp_path))[0]
    assert result.footer.outcome == "success"
    trajectory = read_trajectory(result.path)
    assert len(trajectory.steps) == result.footer.steps
    assert result.metrics["tcr"] == 1.0 and result.metrics["ts"] == 100.0


def test_agent_exception_is_recorded_and_the_run_goes_on(tmp_path):
    """An agent that raises ends its episode as agent_error with the traceback; the next runs."""
    with AGENTS.override("exploding", Exploding):
        suite = Suite(SuiteHeader(suite="t"), [room_rescue("t/a"), room_rescue("t/b")])
        results = run_suite(suite, "exploding", {}, RunSettings(tmp_path))
        assert [r.footer.failure_reason for r in results] == ["agent_error", "agent_error"]
        assert "RuntimeError: boom" in (results[0].footer.error or "")
        assert results[0].footer.steps == 2


def test_episode_seeds_are_stable_and_distinct():
    """Seeds derive from the run seed and the job key, not from process state."""
    assert episode_seed(0, "a") == episode_seed(0, "a")
    assert len({episode_seed(0, "a"), episode_seed(0, "b"), episode_seed(1, "a")}) == 3


def test_truncated_trajectory_is_a_clear_error(tmp_path):
    """A record without its footer line says it is truncated, with the file and line."""
    suite = Suite(SuiteHeader(suite="t"), [room_rescue()])
    path = run_suite(suite, "random", {}, RunSettings(tmp_path))[0].path
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(ConfigError, match=rf"{path.name}:{len(lines) - 1}: no footer line"):
        read_trajectory(path)


def test_a_line_that_is_not_json_is_named(tmp_path):
    """A suite line that is not JSON is reported with its file and line number."""
    path = tmp_path / "s.jsonl"
    write_suite(path, SuiteHeader(suite="t"), [room_rescue()])
    path.write_text(path.read_text() + "{not json\n")
    with pytest.raises(ConfigError, match=r"s.jsonl:3: not JSON"):
        read_suite(path)


def test_suite_field_errors_are_collected(tmp_path):
    """Two bad episode lines give two errors, each with line and field."""
    path = tmp_path / "s.jsonl"
    write_suite(path, SuiteHeader(suite="t"), [room_rescue()])
    header, line = path.read_text().splitlines()
    good = json.loads(line)
    rows = [
        header,
        json.dumps(dict(good, start=[1, 2, 3])),
        json.dumps({k: v for k, v in good.items() if k != "world"}),
    ]
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(ConfigError) as info:
        read_suite(path)
    text = str(info.value)
    assert "s.jsonl:2: start: expected 4 numbers [x, y, z, yaw], got 3" in text
    assert "s.jsonl:3: world: Field required" in text


def test_newer_suite_schema_is_refused(tmp_path):
    """A suite written by a newer sortie says so instead of misreading it."""
    path = tmp_path / "s.jsonl"
    write_suite(path, SuiteHeader(suite="t", schema_version=99), [room_rescue()])
    with pytest.raises(ConfigError, match="schema_version 99 is newer"):
        read_suite(path)


class FailsAtReset(Exploding):
    """An agent whose reset raises."""

    def reset(self, brief, seed):
        raise ValueError("no model loaded")


class Holding(Exploding):
    """An agent that holds something (a connection, say) and notes each close, all of them.

    A close notes the episode's seed (``unplayed`` for an agent that played none, as a run's
    probe) and how many actions had been asked of it by then.
    """

    name = "holding"
    closed: list[tuple[object, int]] = []

    def reset(self, brief, seed):
        super().reset(brief, seed)
        self.seed = seed

    def close(self):
        Holding.closed.append((getattr(self, "seed", "unplayed"), getattr(self, "calls", 0)))


def test_each_episodes_agent_is_closed_when_it_ends_even_by_raising(tmp_path):
    """Each episode's agent is closed once its episode is over, an agent_error's too.

    So is the probe a run makes to learn the agent's sensors, which plays no episode.
    """
    Holding.closed = []
    with AGENTS.override("holding", Holding):
        suite = Suite(SuiteHeader(suite="t"), [room_rescue("t/a"), room_rescue("t/b")])
        results = run_suite(suite, "holding", {}, RunSettings(tmp_path))
    assert [r.footer.failure_reason for r in results] == ["agent_error", "agent_error"]
    probe, first, second = Holding.closed
    assert probe == ("unplayed", 0) and first[0] != second[0]
    assert first[1] == second[1] == 3  # closed after its third action, the one that raised


class Misused(Holding):
    """A holding agent that reports a bug of its own: a ConfigError, which stops the run."""

    def act(self, observation):
        raise ConfigError("misused")


def test_an_error_that_stops_the_run_still_closes_the_episodes_agent(tmp_path):
    """A ConfigError leaves the episode loop and the run; the episode's agent is closed first."""
    Holding.closed = []
    suite = Suite(SuiteHeader(suite="t"), [room_rescue("t/a")])
    with AGENTS.override("misused", Misused), pytest.raises(ConfigError, match="misused"):
        run_suite(suite, "misused", {}, RunSettings(tmp_path))
    (probe, _), (played, _) = Holding.closed  # the probe, then the episode's agent
    assert probe == "unplayed" and played != "unplayed"


class ClosesBadly(Holding):
    """A holding agent whose close raises."""

    def close(self):
        super().close()
        raise OSError("socket already gone")


def test_a_close_that_raises_is_a_warning_and_the_episode_keeps_its_result(tmp_path):
    """The episode's result stands and the run goes on; the warning names the agent."""
    Holding.closed = []
    with (
        AGENTS.override("closes-badly", ClosesBadly),
        pytest.warns(RuntimeWarning, match="holding"),
    ):
        suite = Suite(SuiteHeader(suite="t"), [room_rescue("t/a"), room_rescue("t/b")])
        results = run_suite(suite, "closes-badly", {}, RunSettings(tmp_path))
    assert [r.footer.failure_reason for r in results] == ["agent_error", "agent_error"]
    assert len(Holding.closed) == 3


class Preflighted(Holding):
    """A holding agent that checks its server before a run (as a model agent does)."""

    def preflight(self):
        self.seed = "preflight"


def test_the_agent_a_run_preflights_is_closed_too(tmp_path):
    """The agent built only to check its server before the run is closed too.

    It comes after the probe and before the episode's agent.
    """
    from sortie.run.batch import RunRequest
    from tests.conftest import run_stored

    Holding.closed = []
    with AGENTS.override("preflighted", Preflighted):
        request = RunRequest(("rescue-smoke-v2",), "preflighted", store=tmp_path / "s.db", limit=1)
        assert len(run_stored(request)) == 1
    assert [seed for seed, _ in Holding.closed[:2]] == ["unplayed", "preflight"]
    assert len(Holding.closed) == 3


def test_agent_failing_at_reset_is_an_agent_error(tmp_path):
    """An agent that raises in reset ends the episode as agent_error after no step."""
    suite = Suite(SuiteHeader(suite="t"), [room_rescue("t/a")])
    with AGENTS.override("fails-at-reset", FailsAtReset):
        footer = run_suite(suite, "fails-at-reset", {}, RunSettings(tmp_path))[0].footer
    assert footer.failure_reason == "agent_error" and footer.steps == 0
    assert "ValueError: no model loaded" in (footer.error or "")


class Talking:
    """An agent that explains itself and reports one model call per step, 3 s each."""

    name = "talking"
    sensors = frozenset()

    def reset(self, brief, seed):
        self.calls = 0

    def act(self, observation):
        from sortie.core.actions import Move

        self.calls += 1
        return Move(0.0, 1.0)

    def step_output(self):
        from sortie.agents.base import StepOutput
        from sortie.core.records import ModelCallRecord

        call = ModelCallRecord(model="m", latency=3.0, tokens_in=10, tokens_out=2)
        return StepOutput(text=f"<b>step {self.calls}</b>", calls=(call,), decision_seconds=3.0)


def test_agent_output_and_model_calls_reach_the_record_and_the_latency_clock(tmp_path):
    """What the agent says is kept verbatim; its stated decision time is charged per step."""
    with AGENTS.override("talking", Talking):
        suite = Suite(SuiteHeader(suite="t"), [room_rescue()])
        result = run_suite(suite, "talking", {}, RunSettings(tmp_path, clock="latency"))[0]
        steps = read_trajectory(result.path).steps
        assert steps[0].agent_output == "<b>step 1</b>"
        assert steps[1].model_calls[0].tokens_in == 10
        assert steps[-1].clock_latency == pytest.approx(3.0 * len(steps))


def test_a_lone_surrogate_in_the_agents_words_is_mended_and_the_step_kept():
    """Text UTF-8 cannot carry becomes '?': the line is written and reads back."""
    from sortie.core.pose import Pose
    from sortie.core.records import StepRecord
    from sortie.run.episode import line_of

    record = StepRecord(
        index=1,
        pose=Pose(0, 0, 0, 0),
        action={"type": "task", "kind": "done", "report": "plate \ud83d"},
        clock_sim=0.2,
        clock_latency=0.2,
        agent_output="I see \ud83d",
    )
    back = StepRecord.model_validate_json(line_of(record))
    assert (back.agent_output, back.action.report) == ("I see ?", "plate ?")


class Mumbling(Talking):
    """An agent whose words are not text: a number."""

    def step_output(self):
        from sortie.agents.base import StepOutput

        return StepOutput(text=5)  # type: ignore[arg-type]


def test_words_that_are_not_text_are_the_agents_error_before_the_step():
    """A step output the record cannot keep ends the episode as agent_error, no step taken."""
    import tempfile
    from pathlib import Path

    with AGENTS.override("mumbling", Mumbling), tempfile.TemporaryDirectory() as folder:
        suite = Suite(SuiteHeader(suite="t"), [room_rescue()])
        footer = run_suite(suite, "mumbling", {}, RunSettings(Path(folder)))[0].footer
    assert footer.failure_reason == "agent_error" and footer.steps == 0
    assert "text must be a str or None" in (footer.error or "")


def _scripted_rescue(script):
    """Return a rescue mission on the scripted double, and its episode's record header."""
    from sortie.core.episode import EpisodeSpec, WorldSpec
    from sortie.core.pose import Pose
    from sortie.core.records import PluginRef, TrajectoryHeader
    from sortie.missions.rescue.mission import RescueMission
    from sortie.testing.scripted import ScriptedBackend

    objects = {"casualty": (5.0, 0.0, 0.0), "stretcher": (-1.0, 0.0, 0.0)}
    spec = EpisodeSpec(
        episode_id="t/draft",
        family="rescue",
        level="L1",
        world=WorldSpec(builder="scripted", seed=0),
        start=Pose(0.0, 0.0, 0.0, 0.0),
        targets={"casualty": "casualty", "stretcher": "stretcher"},
        mission={
            "clue_text": "red",
            "reference_view": [0, 0, 1.6, 0, 0],
            "budget_s": 2.0,
            "path_distance": 5.0,
            "shortest_length": 11.0,
        },
    )
    header = TrajectoryHeader(
        episode=spec,
        agent=PluginRef(name="a"),
        backend=PluginRef(name="b"),
        seed=0,
        code_version="0",
    )
    return RescueMission(ScriptedBackend(objects, script)), header


class Walking:
    """An agent that walks straight on."""

    def reset(self, brief, seed):
        pass

    def act(self, observation):
        from sortie.core.actions import Move

        return Move(0.0, 1.0)


class Collecting:
    """An observer that takes each step as a built record (it has no ``on_draft``)."""

    def __init__(self):
        self.records = []

    def on_start(self, header):
        pass

    def on_step(self, record):
        self.records.append(record)

    def on_end(self, footer):
        pass


def test_an_observer_of_records_gets_each_steps_validated_record_as_written(tmp_path):
    """Beside the recorder, a plain observer is handed each step's record: the line's own."""
    from sortie.core.records import StepRecord
    from sortie.run.episode import JsonlRecorder, run_episode
    from sortie.testing.scripted import glide

    mission, header = _scripted_rescue(glide)
    collecting = Collecting()
    run_episode(mission, Walking(), header, [JsonlRecorder(tmp_path / "r.jsonl"), collecting])
    lines = (tmp_path / "r.jsonl").read_text().splitlines()[1:-1]
    assert len(lines) == 10 and all(type(r) is StepRecord for r in collecting.records)
    assert [r.model_dump_json() for r in collecting.records] == lines


def test_a_nan_pose_from_the_backend_ends_the_episode_as_a_backend_error(tmp_path):
    """The step's values are still checked as its model checks them: a NaN is not written."""
    from sortie.core.pose import Pose
    from sortie.run.episode import JsonlRecorder, run_episode
    from sortie.testing.scripted import glide

    def drifting(pose, action):
        moved, events = glide(pose, action)
        return (Pose(moved.x, 0.0, 0.0, float("nan")) if moved.x > 0.5 else moved), events

    mission, header = _scripted_rescue(drifting)
    footer = run_episode(mission, Walking(), header, [JsonlRecorder(tmp_path / "r.jsonl")])
    assert footer.failure_reason == "backend_error" and footer.steps == 3
    assert "pose" in (footer.error or "") and "finite" in (footer.error or "")
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == 4  # the NaN step: not kept


def test_a_nan_position_ends_the_episode_as_a_backend_error_with_its_footer(tmp_path):
    """A NaN x from the backend fails its step; the footer keeps each stage's last real distance."""
    from sortie.core.pose import Pose
    from sortie.run.episode import JsonlRecorder, run_episode
    from sortie.testing.scripted import glide

    def lost(pose, action):
        moved, events = glide(pose, action)
        return (Pose(float("nan"), 0.0, 0.0, 0.0) if moved.x > 0.5 else moved), events

    mission, header = _scripted_rescue(lost)
    footer = run_episode(mission, Walking(), header, [JsonlRecorder(tmp_path / "r.jsonl")])
    assert footer.failure_reason == "backend_error" and footer.steps == 3
    distances = [s.d_final for s in footer.stages if s.d_final is not None]
    assert distances and all(math.isfinite(d) for d in distances)
