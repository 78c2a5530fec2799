import json
import re
from pathlib import Path

import pytest

from sortie.agents.base import SupportsPreflight
from sortie.agents.mllm import MllmRescueAgent
from sortie.agents.mllm.prompts import Prompts, recover
from sortie.core.errors import ConfigError
from sortie.core.records_io import Suite, SuiteHeader, read_trajectory
from sortie.report.usage import call_stats
from sortie.run.suite import RunSettings, run_suite
from sortie.testing.episodes import room_rescue
from sortie.testing.model_server import Fault, ModelServer
from sortie.testing.server_quirks import QUIRKS
from tests.models.conftest import FAST, SECRET, secret  # noqa: F401 - the fixture

CHECKED = {**FAST, "check_content": "true"}
"""Quick settings with the preflight's content check on."""

pytestmark = pytest.mark.usefixtures("secret")


def walker(messages) -> str:
    """Walk straight at the casualty (it lies ahead of the start), then turn about."""
    text = messages[1]["content"][0]["text"]
    command = "turn_left" if "carrying" in text else "forward"
    return json.dumps({"reasoning": "keep going", "seen": "an empty room", "command": command})


def run(server: ModelServer, out: Path, budget: float = 12.0, **args):
    """Run mllm-rescue on the hand-made room against ``server``; return the trajectory."""
    suite = Suite(SuiteHeader(suite="room"), [room_rescue(budget_s=budget)])
    agent_args = {"model": "test-vlm", "base_url": server.base_url, **FAST, **args}
    (result,) = run_suite(suite, "mllm-rescue", agent_args, RunSettings(out=out))
    return read_trajectory(result.path)


def test_commands_become_motion_and_the_casualty_is_reached(tmp_path):
    """Each forward is four 1.25 m/s steps; walking on, the agent picks the casualty up."""
    with ModelServer(walker) as server:
        record = run(server, tmp_path)
    steps = record.steps
    assert [s.action.speed for s in steps[:4]] == [1.25] * 4
    assert [bool(s.model_calls) for s in steps[:5]] == [True, False, False, False, True]
    assert record.footer.facts["picked_up"]
    assert record.footer.failure_reason == "timeout_s3"
    asked = [r["messages"][1]["content"][0]["text"] for r in server.requests]
    assert "carrying the casualty" in asked[-1] and "toward the casualty" in asked[0]


def test_step_zero_records_the_templates(tmp_path):
    """The first step's text carries the templates in full; later ones only the answer."""
    with ModelServer(walker) as server:
        steps = run(server, tmp_path, budget=2.0).steps
    packaged = Prompts.load(MllmRescueAgent.templates)
    assert recover(steps[0].agent_output or "") == packaged.texts
    assert packaged.digest in (steps[0].agent_output or "")
    assert steps[4].agent_output == walker([{}, {"content": [{"text": ""}]}])


def test_every_fault_is_survived_or_recorded(tmp_path):
    """Transient faults are retried; a twice-broken answer becomes an invalid action step."""
    with ModelServer(walker) as server:
        for fault in (
            Fault.RATE_LIMIT,
            Fault.SERVER_ERROR,
            Fault.RESET,
            Fault.MALFORMED,
            Fault.TRUNCATED,
            Fault.HUGE,
            Fault.VIOLATE,
            Fault.VIOLATE,
        ):
            server.inject(fault, retry_after=0.01)
        server.inject(Fault.LATENCY, delay=0.01)
        record = run(server, tmp_path, budget=4.0, max_retries="8")  # five faults in a row
    assert record.footer.failure_reason in ("timeout_s1", "timeout_s2")
    invalid = [s for s in record.steps if any(e.kind == "invalid_action" for e in s.events)]
    assert len(invalid) == 1 and invalid[0].model_calls[-1].error == "format"
    assert sum(c.attempts - 1 for s in record.steps for c in s.model_calls) == 5


def test_faults_beyond_the_retries_end_the_episode_as_agent_error(tmp_path):
    """A server that keeps failing ends the episode as agent_error, with the reason kept."""
    with ModelServer(walker) as server:
        server.inject(Fault.SERVER_ERROR, times=20)
        record = run(server, tmp_path, max_retries="1")
    assert record.footer.failure_reason == "agent_error"
    assert "ModelCallError" in (record.footer.error or "") and server.count == 2


def test_a_decision_that_failed_on_the_server_keeps_its_time_and_calls(tmp_path):
    """The failed decision's two attempts and their time are in the record and the tables."""
    from sortie.core.records import Outcome
    from sortie.run.jobs import Job, RunSpec, score_record

    with ModelServer(walker) as server:
        server.inject(Fault.SERVER_ERROR, times=20)
        record = run(server, tmp_path, max_retries="1")
    failed = record.footer.failed_decision
    assert failed is not None and [c.attempts for c in failed.model_calls] == [2]
    assert failed.model_calls[0].error == "server" and failed.agent_seconds > 0
    stats = call_stats([record])
    assert (stats.calls, stats.retries, stats.errors) == (1, 1, {"server": 1})
    assert record.footer.outcome is Outcome.ERROR and not record.steps
    path = tmp_path / "handmade__room-0.jsonl"  # no step was taken: the agent's time is all
    job = Job(
        "room", record.header.episode, 0, path, RunSpec.resolve("random", {}, family="rescue")
    )
    assert score_record(job, 1.0).timings.agent == failed.agent_seconds


def test_schema_refusal_falls_back_through_the_episode(tmp_path):
    """A server without json_schema support is asked in JSON mode from then on."""
    with ModelServer(walker, reject_json_schema=True) as server:
        record = run(server, tmp_path, budget=2.0)
        kinds = [r.get("response_format", {}).get("type") for r in server.requests]
    assert kinds[0] == "json_schema" and set(kinds[1:]) == {"json_object"}
    assert record.steps[0].model_calls[0].error == "rejected"


def test_a_server_answering_json_schema_with_500_is_run_in_json_mode(tmp_path):
    """llama.cpp's 500 to json_schema costs one call, not the episode: JSON mode from then on."""
    with ModelServer(walker, reject_json_schema=True, refusal_status=500) as server:
        record = run(server, tmp_path, budget=2.0)
        kinds = [r.get("response_format", {}).get("type") for r in server.requests]
    assert kinds[0] == "json_schema" and set(kinds[1:]) == {"json_object"}
    assert record.footer.failure_reason != "agent_error"
    assert record.steps[0].model_calls[0].error == "rejected"


@pytest.mark.parametrize("fault", [Fault.CHOICES_NOT_LIST, Fault.DEEP])
def test_a_malformed_answer_is_an_invalid_action_step(tmp_path, fault):
    """A body of the wrong shape is an invalid action with its raw text, and a format error."""
    with ModelServer(walker) as server:
        server.inject(fault)
        record = run(server, tmp_path, budget=2.0)
    first = record.steps[0]
    assert [e.kind for e in first.events] == ["invalid_action"]
    assert '"choices": ' in (first.agent_output or "")
    assert first.model_calls[-1].error == "format" and call_stats([record]).format_errors == 1
    assert record.footer.failure_reason != "agent_error"


def test_an_echoed_key_is_in_no_record(tmp_path):
    """A server repeating the key in its answers leaves it in no record, only [redacted]."""
    with ModelServer(walker, echo_key=True) as server:
        record = run(server, tmp_path / "out", budget=2.0, cache=str(tmp_path / "out" / "c.db"))
    assert "[redacted]" in (record.steps[0].agent_output or "")
    outputs = [p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert len(outputs) >= 2 and all(SECRET.encode() not in output for output in outputs)


def test_the_agent_checks_its_server_before_a_run():
    """mllm-rescue supports the pre-flight check; an unknown model fails it by name."""
    with ModelServer(walker, models=("qwen",)) as server:
        agent = MllmRescueAgent(model="m", base_url=server.base_url, **FAST)
        assert isinstance(agent, SupportsPreflight)
        with pytest.raises(ConfigError, match=r"model 'm' unknown.*serves: qwen"):
            agent.preflight()


def comparable(record) -> list[dict]:
    """Return the step lines without wall-clock fields and the cache-hit flags."""
    lines = []
    for step in record.steps:
        line = step.model_dump(exclude={"timings"})
        for call in line["model_calls"]:
            call.pop("cached")
        lines.append(line)
    return lines


def test_replay_reproduces_the_records_offline(tmp_path):
    """A replay with the server stopped writes the same step lines and latency clock."""
    cache = str(tmp_path / "cache.sqlite")
    with ModelServer(walker, reject_json_schema=True) as server:
        server.inject(Fault.RATE_LIMIT, retry_after=0.01)
        server.inject(Fault.VIOLATE)
        live = run(server, tmp_path / "live", cache=cache)
        url = server.base_url  # the same address (part of the cache key), nobody there now
    suite = Suite(SuiteHeader(suite="room"), [room_rescue(budget_s=12.0)])
    args = {"model": "test-vlm", "base_url": url, "cache": cache, "replay": "true"}
    (result,) = run_suite(suite, "mllm-rescue", args, RunSettings(out=tmp_path / "replay"))
    replay = read_trajectory(result.path)
    assert comparable(replay) == comparable(live)
    assert all(c.cached for s in replay.steps for c in s.model_calls)


def test_a_replay_miss_is_loud(tmp_path):
    """Replaying with other settings than recorded stops with the request hash and the file."""
    cache = str(tmp_path / "cache.sqlite")
    with ModelServer(walker) as server:
        run(server, tmp_path / "live", budget=1.0, cache=cache)
    suite = Suite(SuiteHeader(suite="room"), [room_rescue(budget_s=1.0)])
    args = {
        "model": "test-vlm",
        "base_url": "http://127.0.0.1:9/v1",
        "cache": cache,
        "replay": "true",
        "resolution": "64",
    }
    with pytest.raises(ConfigError, match=r"request [0-9a-f]{64} is not in the cache"):
        run_suite(suite, "mllm-rescue", args, RunSettings(out=tmp_path / "replay"))


def test_the_key_appears_in_no_output(tmp_path, capsys, caplog):
    """The key reaches the server, and no record, cache, log or error text holds it."""
    cache = tmp_path / "out" / "cache.sqlite"
    with ModelServer(walker) as server:
        server.inject(Fault.RATE_LIMIT, retry_after=0.01)
        run(server, tmp_path / "out", budget=2.0, cache=str(cache))
        server.inject(Fault.SERVER_ERROR, times=20)
        failed = run(server, tmp_path / "out" / "failed", max_retries="1")
        assert server.headers[0]["authorization"] == f"Bearer {SECRET}"
    outputs = [p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()]
    assert len(outputs) >= 3 and failed.footer.error
    captured = capsys.readouterr()
    for text in [
        *outputs,
        captured.out.encode(),
        captured.err.encode(),
        caplog.text.encode(),
        failed.footer.error.encode(),
    ]:
        assert SECRET.encode() not in text


def test_constructing_contacts_nothing():
    """Building the agent (as the runner does to read sensors) sends no request."""
    with ModelServer(walker) as server:
        agent = MllmRescueAgent(
            model="m", base_url=server.base_url, history="3", reasoning="false", resolution="64"
        )
        assert server.count == 0
    assert agent.history == 3 and not agent.reasoning and agent.sensors == {"rgb"}


def test_no_reasoning_ablation_asks_without_it(tmp_path):
    """With reasoning=false the schema sent has no reasoning field."""
    with ModelServer(walker) as server:
        run(server, tmp_path, budget=0.4, reasoning="false")
        schema = server.requests[0]["response_format"]["json_schema"]["schema"]
    assert set(schema["properties"]) == {"seen", "command"}


def test_own_prompt_dir_is_used_and_recorded(tmp_path):
    """Templates from prompt_dir are sent and recorded at step 0."""
    folder = tmp_path / "prompts"
    folder.mkdir()
    for name, text in Prompts.load(MllmRescueAgent.templates).texts.items():
        (folder / name).write_text(text.replace("Clue:", "HINT:"))
    with ModelServer(walker) as server:
        steps = run(server, tmp_path / "out", budget=0.4, prompt_dir=str(folder)).steps
        assert re.search("HINT:", server.requests[0]["messages"][1]["content"][0]["text"])
    assert "HINT:" in recover(steps[0].agent_output or "")["rescue_step.txt"]


def test_text_mode_sends_a_plain_string_of_what_the_camera_sees(tmp_path):
    """observation=text: the request is one string naming the classes in view, no image."""
    answer = json.dumps({"reasoning": "on", "seen": "a person", "command": "forward"})
    with ModelServer(lambda messages: answer) as server:
        record = run(server, tmp_path, budget=2.0, observation="text")
        content = server.requests[0]["messages"][1]["content"]
    assert isinstance(content, str)
    seen = content.split("Your camera sees: ", 1)[1].split(", ")
    assert "person" in seen and seen == sorted(seen)
    assert record.header.agent.args["observation"] == "text"


def test_text_mode_asks_for_the_semantic_camera_instead_of_rgb():
    """In text mode the agent needs semantic images (for the classes), not colour ones."""
    where = {"model": "m", "base_url": "http://127.0.0.1:9"}
    assert MllmRescueAgent(**where, observation="text").sensors == frozenset({"semantic"})
    assert MllmRescueAgent(**where).sensors == frozenset({"rgb"})


def test_a_model_that_never_answers_readably_is_re_asked_a_bounded_number_of_times(tmp_path):
    """After REASK_STREAK failed re-asks in a row, each step asks once; every step is invalid."""
    from sortie.agents.mllm.common import REASK_STREAK

    with ModelServer(lambda messages: "{not json") as server:
        record = run(server, tmp_path, budget=2.0)
        reasked = [len(request["messages"]) > 2 for request in server.requests]
    steps = len(record.steps)
    assert reasked == [False, True] * REASK_STREAK + [False] * (steps - REASK_STREAK)
    assert all([e.kind for e in s.events] == ["invalid_action"] for s in record.steps)
    assert all(s.model_calls[-1].error == "format" for s in record.steps)
    assert "not asked again" in record.steps[-1].events[0].detail


def test_a_readable_answer_brings_the_re_asks_back(tmp_path):
    """Once an answer reads at once, the next unreadable one is re-asked again."""
    from sortie.agents.mllm.common import REASK_STREAK

    answers = iter(["{not json"] * (2 * REASK_STREAK + 1) + [walker_answer("turn_left")])

    def policy(messages) -> str:
        return next(answers, "{not json")

    with ModelServer(policy) as server:
        run(server, tmp_path, budget=4.0)
        reasked = [len(request["messages"]) > 2 for request in server.requests]
    streak = [False, True] * REASK_STREAK
    assert reasked[: len(streak) + 4] == [*streak, False, False, False, True]


def walker_answer(command: str) -> str:
    """Return a readable answer with ``command``."""
    return json.dumps({"reasoning": "keep going", "seen": "an empty room", "command": command})


def test_an_image_run_on_a_server_dropping_list_content_is_stopped_before_it_starts():
    """llama-cpp-python's formats drop the image turn: the preflight stops the image run."""
    with ModelServer(lambda messages: "OK", quirks=QUIRKS["llama-cpp-python"]) as server:
        agent = MllmRescueAgent(model="m", base_url=server.base_url, **CHECKED)
        with pytest.raises(ConfigError, match="list of parts.*observation=text"):
            agent.preflight()


def test_a_text_run_on_a_server_dropping_list_content_goes_ahead():
    """In text mode every content is one string: the same server passes the preflight."""
    with ModelServer(lambda messages: "OK", quirks=QUIRKS["llama-cpp-python"]) as server:
        MllmRescueAgent(
            model="m", base_url=server.base_url, observation="text", **CHECKED
        ).preflight()
