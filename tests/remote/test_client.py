"""The remote agent: the same scores as a local agent, and every failure recorded as data."""

import gc
import threading
import time
import warnings

import pytest

from sortie.core.errors import ConfigError, ParameterError
from sortie.remote.client import RemoteAgent
from sortie.remote.served import AgentEndpoint
from sortie.remote.server import AgentServer
from sortie.remote.wire import ActResponse, MoveAction
from sortie.run.batch import RunRequest
from tests.conftest import SERIAL, comparable, run_stored

from .conftest import events_of, remote_run, serving


@pytest.mark.parametrize(
    ("suite", "limit"), [("rescue-smoke-v2", 2), ("aerial-smoke-v1", 4), ("household-smoke-v1", 2)]
)
def test_random_served_remotely_scores_what_random_scores_locally(tmp_path, suite, limit):
    """Remote random gets the episode seeds and gives the local run's outcomes and metrics."""
    store = tmp_path / "s.db"
    local = run_stored(RunRequest((suite,), "random", store=store, run_id="local", limit=limit))
    with serving(AgentEndpoint("random", {})) as server:
        request = RunRequest(
            (suite,),
            "remote",
            agent_args={"url": server.url},
            store=store,
            run_id="remote",
            limit=limit,
        )
        remote = run_stored(request)
    assert len(remote) == limit and comparable(remote) == comparable(local)


class DiesAtStep3:
    """Serves random, and stops its own server at step 3 of the first episode."""

    def __init__(self):
        self.endpoint, self.server, self.lost = AgentEndpoint("random", {}), None, threading.Event()

    def hello(self):
        return self.endpoint.hello()

    def start(self, seed, brief):
        session = self.endpoint.start(seed, brief)
        outer = self

        class Session:
            def act(self, observation):
                if observation.step == 3 and not outer.lost.is_set():
                    outer.lost.set()
                    outer.server.stop()  # closes this very connection: the answer never leaves
                return session.act(observation)

        return Session()


def test_a_server_lost_for_good_ends_each_episode_as_agent_error_and_the_run_ends(
    tmp_path, tiny_rescue
):
    """A server that dies mid-episode: it and the next are agent_error, and both are stored."""
    dying = DiesAtStep3()
    dying.server = AgentServer(dying).start()
    episodes = remote_run(tmp_path, tiny_rescue, dying.server.url, retries="2")
    assert [(e.outcome, e.failure_reason) for e in episodes] == [("error", "agent_error")] * 2
    assert episodes[0].steps == 3
    assert "act at step 3: connection refused after 3 attempt(s)" in episodes[0].error
    assert "reset: connection refused after 3 attempt(s)" in episodes[1].error


@SERIAL  # against the wall clock (tests/conftest.py)
def test_a_server_restarted_mid_episode_loses_that_episode_only(tmp_path, tiny_rescue):
    """A server that dies and comes back: its episode is agent_error, the next one is scored."""
    dying = DiesAtStep3()
    dying.server = AgentServer(dying).start()
    port = dying.server.http.address[1]
    restarted: list[AgentServer] = []

    def restart():
        dying.lost.wait(timeout=30)
        time.sleep(0.3)  # inside the client's retries (after 0.2, 0.6, 1.4 ... s)
        restarted.append(AgentServer(dying.endpoint, port=port).start())

    helper = threading.Thread(target=restart)
    helper.start()
    try:
        first, second = remote_run(
            tmp_path, tiny_rescue, dying.server.url, retries="5", backoff="0.2"
        )
    finally:
        helper.join(timeout=30)
        for server in restarted:
            server.stop()
    assert (first.outcome, first.failure_reason) == ("error", "agent_error")
    assert f"agent server at 127.0.0.1:{port}" in first.error  # lost the session, or refused
    assert second.outcome == "failure" and second.steps == 10


class Answering:
    """An endpoint whose every act answers ``answer()`` (a response, or an exception)."""

    def __init__(self, answer):
        self.answer = answer

    def hello(self):
        from sortie.remote.wire import Hello

        return Hello(agent="answering", sensors=[])

    def start(self, seed, brief):
        return self

    def act(self, observation):
        return self.answer()


def walk() -> ActResponse:
    return ActResponse(action=MoveAction(type="move", speed=1.0))


def invalid_events(episode) -> list[str]:
    return [e["detail"] for e in events_of(episode) if e["kind"] == "invalid_action"]


def test_a_4xx_answer_is_an_invalid_action_and_the_episode_goes_on(tmp_path, tiny_rescue, policy):
    """A policy's unknown action (the server's 422) is recorded as invalid; every step is played."""
    server = policy(act=lambda obs: {"type": "jump"})
    episodes = remote_run(tmp_path, tiny_rescue, server.url)
    assert all(e.outcome == "failure" and e.steps == 10 for e in episodes)
    details = invalid_events(episodes[0])
    assert len(details) == 10 and "invalid_action" in details[0] and "jump" in details[0]


def test_an_answer_of_another_schema_version_is_an_invalid_action(tmp_path, tiny_rescue):
    """An answer in schema version 1 (another than this end's) is not used: it is invalid."""
    answer = lambda: walk().model_copy(update={"schema_version": 1})  # noqa: E731
    with serving(Answering(answer)) as server:
        (episode, _) = remote_run(tmp_path, tiny_rescue, server.url)
    assert episode.outcome == "failure" and "schema_version 1" in invalid_events(episode)[0]


def test_an_oversized_answer_is_an_invalid_action(tmp_path, tiny_rescue):
    """An answer larger than max_bytes is left unread and recorded as an invalid action."""
    answer = lambda: walk().model_copy(update={"text": "x" * 5000})  # noqa: E731
    with serving(Answering(answer)) as server:
        (episode, _) = remote_run(tmp_path, tiny_rescue, server.url, max_bytes="2048")
    assert "too_large" in invalid_events(episode)[0] and episode.steps == 10


def test_a_malformed_answer_is_an_invalid_action_quoting_it(tmp_path, tiny_rescue, monkeypatch):
    """A 200 whose body is not JSON is recorded as invalid, its text kept as the raw answer."""
    with serving(Answering(walk)) as server:
        original = server.answer

        def garble(method, path, body):
            status, answer = original(method, path, body)
            return (status, {"garbled": True}) if path == "/v1/act" else (status, answer)

        monkeypatch.setattr(server, "answer", garble)
        (episode, _) = remote_run(tmp_path, tiny_rescue, server.url)
    detail = invalid_events(episode)[0]
    assert "schema_version" in detail and "garbled" in detail


@SERIAL  # against the wall clock (tests/conftest.py)
def test_an_answer_that_times_out_ends_the_episode_as_agent_error(tmp_path, tiny_rescue):
    """A server slower than the time-out, retries included, ends the episode with the cause."""
    release = threading.Event()
    with serving(Answering(lambda: release.wait(5) and walk())) as server:
        try:
            episodes = remote_run(tmp_path, tiny_rescue, server.url, timeout="0.2", retries="1")
        finally:
            release.set()
    assert all(e.failure_reason == "agent_error" for e in episodes)
    assert "timed out: the answer took longer than 0.2 s after 2 attempt(s)" in episodes[0].error


def test_a_policy_error_ends_the_episode_as_agent_error_with_its_message(
    tmp_path, tiny_rescue, policy
):
    """A policy that raises makes a 500 that ends the episode as agent_error naming the error."""
    server = policy(act=lambda obs: 1 / 0)
    episodes = remote_run(tmp_path, tiny_rescue, server.url)
    assert episodes[0].failure_reason == "agent_error"
    assert "ZeroDivisionError" in episodes[0].error


def test_preflight_names_the_address_of_a_server_that_is_not_there():
    """With nothing listening, preflight is a ConfigError naming host:port and the cause."""
    server = AgentServer(Answering(walk))
    port = server.http.address[1]
    server.http.socket.close()  # the port was free a moment ago, and nothing listens now
    with pytest.raises(
        ConfigError, match=rf"127\.0\.0\.1:{port}: unreachable \(connection refused\)"
    ):
        RemoteAgent(f"http://127.0.0.1:{port}", retries=0).preflight()


def test_preflight_refuses_a_server_of_another_schema_version(monkeypatch):
    """A hello in another schema version stops the run before its first episode."""
    from sortie.remote.wire import Hello

    class Old(Answering):
        def hello(self):
            return Hello(schema_version=0, agent="old")

    with serving(Old(walk)) as server, pytest.raises(ConfigError, match="schema_version 0"):
        RemoteAgent(server.url).preflight()


def test_preflight_says_to_set_the_token_when_the_server_wants_one(monkeypatch):
    """A server that requires a token, asked without one, is a ConfigError naming the variable."""
    monkeypatch.setenv("SORTIE_AGENT_TOKEN", "tok-123456")
    with serving(Answering(walk)) as server:
        monkeypatch.delenv("SORTIE_AGENT_TOKEN")
        with pytest.raises(ConfigError, match="set SORTIE_AGENT_TOKEN"):
            RemoteAgent(server.url).preflight()


def test_the_token_never_reaches_the_records_or_the_stored_config(
    tmp_path, tiny_rescue, monkeypatch
):
    """With a token in use, no record, store or error message holds it, even when echoed."""
    token = "tok-a1b2c3d4e5f6"
    monkeypatch.setenv("SORTIE_AGENT_TOKEN", token)
    answer = lambda: ActResponse(action=MoveAction(type="move"), text=f"I saw {token}")  # noqa: E731
    with serving(Answering(answer)) as server:
        episodes = remote_run(tmp_path, tiny_rescue, server.url)
    assert episodes and all(e.outcome == "failure" for e in episodes)
    files = [tmp_path / "s.db", *(e.record for e in episodes)]
    assert all(token.encode() not in path.read_bytes() for path in files)
    assert "[token]" in episodes[0].record.read_text()  # the echo was there, and blotted out


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ({"url": "ftp://x:1"}, "expected http://HOST:PORT"),
        ({"url": "http://x:port"}, "port is not a number"),
        ({"url": "http://x:1", "timeout": "soon"}, "timeout must be a number"),
        ({"url": "http://x:1", "retries": "-1"}, "retries must be a number"),
    ],
)
def test_bad_settings_are_refused_by_name(args, match):
    """A bad URL or a setting that is not a positive number is a clear error."""
    with pytest.raises((ConfigError, ParameterError), match=match):
        RemoteAgent(**args)


def test_a_served_agent_of_another_family_stops_the_run_with_a_clear_error(tmp_path, tiny_rescue):
    """An aerial-only server asked to play rescue stops the run, as a local agent would."""
    with (
        serving(AgentEndpoint("heuristic", {})) as server,
        pytest.raises(ConfigError, match="plays aerial, not rescue"),
    ):
        remote_run(tmp_path, tiny_rescue, server.url)


def test_a_served_agents_words_and_model_calls_reach_the_record(tmp_path, tiny_rescue, override):
    """What a served agent says and the model calls it makes are recorded at every step."""
    from sortie.agents.base import AGENTS
    from sortie.core.records_io import read_trajectory
    from sortie.testing.saying import SayingAgent

    override(AGENTS, "saying", SayingAgent)
    with serving(AgentEndpoint("saying", {"text": "left at the door"})) as server:
        (episode, _) = remote_run(tmp_path, tiny_rescue, server.url)
    step = read_trajectory(episode.record).steps[0]
    assert step.agent_output == "left at the door"
    assert [(c.model, c.tokens_in) for c in step.model_calls] == [("double", 3)]


@SERIAL  # against the wall clock (tests/conftest.py)
def test_a_server_trickling_its_answer_times_out_on_the_whole_answer():
    """An answer sent a byte at a time takes longer than the time-out: a LinkError, quickly."""
    import socket
    import threading
    import time as clock

    from sortie.remote.link import Link, LinkError

    listener = socket.create_server(("127.0.0.1", 0))

    def trickle() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n")
            for _ in range(40):
                clock.sleep(0.1)
                try:
                    connection.sendall(b"x")
                except OSError:
                    return

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    link = Link(f"http://127.0.0.1:{listener.getsockname()[1]}", timeout=0.5, max_bytes=1000)
    started = clock.monotonic()
    with pytest.raises(LinkError):
        link.send("POST", "/v1/act", b"{}")
    assert clock.monotonic() - started < 3.0  # not 40 reads × 0.5 s
    link.close()
    listener.close()


def test_a_hello_answer_that_echoes_the_token_never_shows_it(monkeypatch):
    """A 400 whose body repeats the Authorization header: the error says [token], not the token."""
    import json
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Echo(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the name http.server calls
            said = {"error": "bad", "message": f"you sent {self.headers.get('Authorization')}"}
            body = json.dumps(said).encode()
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    token = "tok-secret-987654"
    monkeypatch.setenv("SORTIE_AGENT_TOKEN", token)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(ConfigError) as caught:
            RemoteAgent(f"http://127.0.0.1:{server.server_address[1]}").preflight()
    finally:
        server.shutdown()
        server.server_close()
    assert token not in str(caught.value) and "[token]" in str(caught.value)


def test_the_remote_agent_finds_the_token_a_local_server_left(monkeypatch, tmp_path):
    """Without SORTIE_AGENT_TOKEN, the agent sends the token its loopback server left for it."""
    from sortie.remote.policy import PolicyEndpoint
    from sortie.remote.server import AgentServer, new_token

    from .conftest import Walker

    monkeypatch.delenv("SORTIE_AGENT_TOKEN", raising=False)
    monkeypatch.setenv("SORTIE_RUNTIME_DIR", str(tmp_path))
    with AgentServer(PolicyEndpoint(Walker), token=new_token()) as server:
        with pytest.raises(ConfigError, match="refused the token"):
            RemoteAgent(server.url).preflight()
        with server.published():
            RemoteAgent(server.url).preflight()


@SERIAL  # against the wall clock (tests/conftest.py)
def test_a_server_trickling_its_answers_head_times_out_on_the_whole_answer():
    """A status line and headers sent a byte at a time: a LinkError once the time-out passes."""
    import socket
    import threading
    import time as clock

    from sortie.remote.link import Link, LinkError

    listener = socket.create_server(("127.0.0.1", 0))
    head = b"HTTP/1.1 200 OK\r\nX-Slow: " + b"y" * 200 + b"\r\nContent-Length: 2\r\n\r\n{}"

    def trickle() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            for byte in head:
                clock.sleep(0.05)
                try:
                    connection.sendall(bytes([byte]))
                except OSError:
                    return

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    link = Link(f"http://127.0.0.1:{listener.getsockname()[1]}", timeout=0.5, max_bytes=1000)
    started = clock.monotonic()
    with pytest.raises(LinkError, match="longer than 0.5 s"):
        link.send("POST", "/v1/act", b"{}")
    assert clock.monotonic() - started < 2.0  # not 230 bytes × 0.05 s
    link.close()
    listener.close()


def test_a_served_agents_thinking_reaches_the_record(tmp_path, tiny_rescue, override):
    """A served model call's thinking, cut, waits, model and cost reach the step record."""
    from sortie.agents.base import AGENTS, StepOutput
    from sortie.core.records import ModelCallRecord
    from sortie.core.records_io import read_trajectory
    from sortie.testing.saying import SayingAgent

    class Thinking(SayingAgent):
        def step_output(self) -> StepOutput:
            call = ModelCallRecord(
                model="m",
                latency=0.1,
                attempts=2,
                reasoning="hm {",
                finish_reason="length",
                waited=0.5,
                failed_time=0.2,
                served="m-2026",
                cost=0.001,
            )
            return StepOutput(text=self.text, calls=(call,))

    override(AGENTS, "thinking", Thinking)
    with serving(AgentEndpoint("thinking", {})) as server:
        (episode, _) = remote_run(tmp_path, tiny_rescue, server.url)
    (call,) = read_trajectory(episode.record).steps[0].model_calls
    assert (call.reasoning, call.finish_reason) == ("hm {", "length")
    assert (call.waited, call.failed_time, call.served, call.cost) == (0.5, 0.2, "m-2026", 0.001)


def test_closing_the_remote_agent_closes_its_connection():
    """A run closes each episode's agent; the remote agent's kept-alive connection goes with it."""
    with serving(AgentEndpoint("random", {})) as server:
        agent = RemoteAgent(server.url)
        agent.preflight()
        connection = agent.link._connection
        assert connection is not None and connection.sock is not None
        agent.close()
        assert connection.sock is None and agent.link._connection is None
        agent.close()  # again: nothing to do


def test_a_remote_run_leaves_no_connection_to_the_garbage_collector(tmp_path):
    """The probe, the preflighted agent and each episode's agent are closed, not collected."""
    gc.collect()  # what earlier tests left is not this run's
    with serving(AgentEndpoint("random", {})) as server:
        request = RunRequest(
            ("rescue-smoke-v2",),
            "remote",
            agent_args={"url": server.url},
            store=tmp_path / "s.db",
            limit=2,
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            assert len(run_stored(request)) == 2
            gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
