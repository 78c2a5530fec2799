"""The agent server answers every request, bad ones with a clear 4xx, and never stops for one."""

import threading

import pytest

from sortie.remote.convert import brief_to_wire, observation_to_wire
from sortie.remote.wire import (
    MAX_REQUEST_BYTES,
    SCHEMA_VERSION,
    ActRequest,
    ActResponse,
    ResetRequest,
    WireError,
)

from .conftest import request, serving


@pytest.fixture(scope="module")
def messages(rescue_start):
    """Return (reset body, act body) dicts for session ``s``."""
    brief, observation = rescue_start
    reset = ResetRequest(session="s", seed=3, brief=brief_to_wire(brief))
    act = ActRequest(session="s", step=0, observation=observation_to_wire(observation))
    return reset.model_dump(mode="json"), act.model_dump(mode="json")


def started(server, messages) -> None:
    status, _ = request(server, "POST", "/v1/reset", messages[0])
    assert status == 200


def test_hello_names_the_policy_its_families_and_sensors(policy):
    """GET /v1/hello says the schema version, the policy's name, families and sensors."""
    server = policy(name="walker", families=["rescue"], sensors=["rgb"])
    status, body = request(server, "GET", "/v1/hello")
    assert status == 200
    assert body == {
        "schema_version": SCHEMA_VERSION,
        "agent": "walker",
        "families": ["rescue"],
        "sensors": ["rgb"],
    }


def test_a_reset_then_an_act_returns_the_policys_action(policy, messages):
    """After a reset, an act answers the policy's action as a wire action."""
    server = policy()
    started(server, messages)
    status, body = request(server, "POST", "/v1/act", messages[1])
    assert status == 200 and body["action"] == {
        "type": "move",
        "turn": 0.0,
        "speed": 1.0,
        "pitch": None,
    }


def test_a_retried_step_gets_the_same_answer_without_asking_the_policy_again(policy, messages):
    """The same step sent twice (a retry after a lost answer) is answered from the last one."""
    calls = []
    server = policy(act=lambda obs: calls.append(obs) or {"type": "move", "turn": len(calls)})
    started(server, messages)
    first = request(server, "POST", "/v1/act", messages[1])
    second = request(server, "POST", "/v1/act", messages[1])
    assert first == second and len(calls) == 1


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{oops", 400, "malformed"),
        (b'{"schema_version": 9, "session": "s"}', 400, "schema_version"),
        (b'{"schema_version": 2, "session": "s"}', 422, "invalid"),
        (b'{"schema_version": 2, "session": "../x", "seed": 0, "brief": {}}', 422, "invalid"),
    ],
    ids=["malformed", "version", "missing-fields", "bad-session"],
)
def test_a_bad_reset_is_a_4xx_with_its_code(policy, body, status, code):
    """Malformed, other-version and invalid resets are refused with their status and code."""
    got, answer = request(policy(), "POST", "/v1/reset", body)
    assert (got, answer["error"], answer["schema_version"]) == (status, code, SCHEMA_VERSION)


def test_an_oversized_request_is_a_413_and_the_server_goes_on(policy, messages):
    """A request above the limit is refused unread (413), and the next request is served."""
    server = policy()
    headers = {"Content-Length": str(MAX_REQUEST_BYTES + 1)}
    status, answer = request(server, "POST", "/v1/act", b"", headers)
    assert (status, answer["error"]) == (413, "too_large")
    assert request(server, "GET", "/v1/hello")[0] == 200


def test_an_unknown_action_from_the_policy_is_a_422_naming_it(policy, messages):
    """A policy that answers an action the wire does not know gets a 422 invalid_action."""
    server = policy(act=lambda obs: {"type": "jump", "height": 2})
    started(server, messages)
    status, answer = request(server, "POST", "/v1/act", messages[1])
    assert (status, answer["error"]) == (422, "invalid_action") and "jump" in answer["message"]


def test_a_policy_that_raises_is_a_500_with_its_error_and_the_server_goes_on(policy, messages):
    """An exception in the policy is answered as policy_error, then hello is still served."""
    server = policy(act=lambda obs: 1 / 0)
    started(server, messages)
    status, answer = request(server, "POST", "/v1/act", messages[1])
    assert (status, answer["error"]) == (500, "policy_error") and "ZeroDivisionError" in answer[
        "message"
    ]
    assert request(server, "GET", "/v1/hello")[0] == 200


def test_an_act_for_an_unknown_session_is_a_404(policy, messages):
    """An act before any reset of its session is refused as unknown_session."""
    status, answer = request(policy(), "POST", "/v1/act", messages[1])
    assert (status, answer["error"]) == (404, "unknown_session")


def test_a_brief_of_a_family_the_policy_does_not_play_is_refused(policy, messages):
    """A rescue brief sent to an aerial-only policy is a 422 that names both families."""
    status, answer = request(policy(families=["aerial"]), "POST", "/v1/reset", messages[0])
    assert (status, answer["error"]) == (422, "family") and "rescue" in answer["message"]


def test_an_unknown_path_is_a_404_listing_the_routes(policy):
    """A path the server does not serve is a 404 that lists the ones it does."""
    status, answer = request(policy(), "GET", "/v2/hello")
    assert status == 404 and "GET /v1/hello" in answer["message"]


def test_with_a_token_set_a_request_without_it_is_a_401(policy, monkeypatch):
    """A server started with SORTIE_AGENT_TOKEN refuses requests that do not bear it."""
    monkeypatch.setenv("SORTIE_AGENT_TOKEN", "s3cret-token")
    server = policy()
    assert request(server, "GET", "/v1/hello")[0] == 401
    wrong = {"Authorization": "Bearer nope"}
    assert request(server, "GET", "/v1/hello", headers=wrong)[0] == 401
    right = {"Authorization": "Bearer s3cret-token"}
    assert request(server, "GET", "/v1/hello", headers=right)[0] == 200


def test_a_token_without_the_bearer_scheme_is_a_401(policy, monkeypatch):
    """The bare token, or another scheme, is refused; the scheme's case does not matter."""
    monkeypatch.setenv("SORTIE_AGENT_TOKEN", "s3cret-token")
    server = policy()
    for header in ("s3cret-token", "Basic s3cret-token", "Bearers3cret-token"):
        assert request(server, "GET", "/v1/hello", headers={"Authorization": header})[0] == 401
    bearer = {"Authorization": "bearer s3cret-token"}
    assert request(server, "GET", "/v1/hello", headers=bearer)[0] == 200


def test_the_server_binds_loopback_by_default(policy):
    """Unless told otherwise the server listens on 127.0.0.1 only."""
    from sortie.remote.policy import PolicyEndpoint
    from sortie.remote.server import AgentServer

    from .conftest import Walker

    server = AgentServer(PolicyEndpoint(Walker))
    try:
        assert server.http.address[0] == "127.0.0.1"
    finally:
        server.http.socket.close()


def test_stop_closes_open_keep_alive_connections(policy):
    """After stop, a client holding a keep-alive connection finds it closed."""
    import http.client

    server = policy()
    host, port = server.http.address
    connection = http.client.HTTPConnection(str(host), port, timeout=5)
    connection.request("GET", "/v1/hello")
    connection.getresponse().read()
    stopping = threading.Thread(target=server.stop)
    stopping.start()
    stopping.join(timeout=10)  # stop() has shut the open connections down when it returns
    with pytest.raises((OSError, http.client.HTTPException)):
        connection.request("GET", "/v1/hello")
        connection.getresponse().read()


def test_the_printed_address_takes_connections_before_the_loop_runs():
    """A client told the URL at once (`agent-server` prints it first) is queued, not refused."""
    import socket

    from sortie.remote.policy import PolicyEndpoint
    from sortie.remote.server import AgentServer

    from .conftest import Walker, request

    server = AgentServer(PolicyEndpoint(Walker))
    try:
        with socket.create_connection(server.http.address, timeout=5):
            pass  # refused, before the socket listened from the start
        server.start()
        assert request(server, "GET", "/v1/hello")[0] == 200
    finally:
        server.stop()


def _small_server(cap: int):
    from sortie.remote.policy import PolicyEndpoint
    from sortie.remote.server import AgentServer

    from .conftest import Walker

    return AgentServer(PolicyEndpoint(Walker), max_bytes=cap).start()


def test_a_chunked_body_over_the_cap_is_a_413_before_it_ends():
    """A chunked reset past the cap is refused while its sender is still sending (no buffering)."""
    from .conftest import chunked_post

    server = _small_server(16 * 1024)
    try:
        status, answer = chunked_post(server.http.address, "/v1/reset", b"x" * 48 * 1024, end=False)
        assert status == 413 and b"too_large" in answer
        assert request(server, "GET", "/v1/hello")[0] == 200
    finally:
        server.stop()


def test_a_chunked_body_under_the_cap_is_served(messages):
    """A reset sent in chunks, without Content-Length, starts its session as any other."""
    import json

    from .conftest import chunked_post

    server = _small_server(MAX_REQUEST_BYTES)
    try:
        body = json.dumps(messages[0]).encode()
        assert chunked_post(server.http.address, "/v1/reset", body)[0] == 200
    finally:
        server.stop()


def test_a_compressed_body_is_a_415_left_unread(policy, messages):
    """A body with Content-Encoding gzip is refused: it is never unpacked past any cap."""
    import gzip
    import json

    body = gzip.compress(json.dumps(messages[0]).encode())
    headers = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
    status, answer = request(policy(), "POST", "/v1/reset", body, headers)
    assert (status, answer["error"]) == (415, "unsupported")


def test_a_body_is_counted_as_it_is_read_and_never_held_past_its_cap():
    """Reading stops at the first piece past the cap, however many more would come."""
    import asyncio

    from sortie.remote.bounded import BodyTooLarge, _read

    asked = []

    async def endless():
        asked.append(1)
        return {"type": "http.request", "body": b"x" * 1000, "more_body": True}

    with pytest.raises(BodyTooLarge):
        asyncio.run(_read(endless, 4000, [0], [0]))
    assert len(asked) == 5


def test_bodies_held_at_once_are_bounded_all_clients_together(monkeypatch):
    """A piece that would take every request's bodies past the budget is refused, unkept."""
    import asyncio

    from sortie.remote import bounded

    monkeypatch.setattr(bounded, "BODY_BUDGET", 2500)

    async def pieces():
        return {"type": "http.request", "body": b"x" * 1000, "more_body": True}

    total, mine = [1000], [0]  # another request holds 1,000 bytes
    with pytest.raises(bounded.OverBudget):
        asyncio.run(bounded._read(pieces, 10_000, total, mine))
    assert (total, mine) == ([2000], [1000])  # the piece that would pass was not taken


def test_a_cross_site_text_plain_post_is_refused(policy, messages):
    """A web page's simple POST (text/plain, its own Origin) is a 403; without Origin, a 415."""
    server = policy()
    plain = {"Content-Type": "text/plain"}
    cross = plain | {"Origin": "http://evil.example"}
    status, answer = request(server, "POST", "/v1/reset", messages[0], cross)
    assert (status, answer["error"]) == (403, "refused")
    status, answer = request(server, "POST", "/v1/reset", messages[0], plain)
    assert (status, answer["error"]) == (415, "unsupported")


def test_a_json_post_from_another_origin_is_refused(policy, messages):
    """A POST whose Origin is another site's is a 403 even with a JSON body; its own is served."""
    server = policy()
    host, port = server.http.address
    evil = {"Origin": f"http://evil.example:{port}"}
    assert request(server, "POST", "/v1/reset", messages[0], evil)[0] == 403
    own = {"Origin": f"http://{host}:{port}"}
    assert request(server, "POST", "/v1/reset", messages[0], own)[0] == 200


def test_a_dns_rebinding_host_is_refused(policy, messages):
    """A request naming another Host (a rebound DNS name) is a 403, GET or POST."""
    server = policy()
    port = server.http.address[1]
    rebound = {"Host": f"evil.example:{port}"}
    assert request(server, "GET", "/v1/hello", headers=rebound)[0] == 403
    assert request(server, "POST", "/v1/reset", messages[0], rebound)[0] == 403
    assert request(server, "GET", "/v1/hello", headers={"Host": f"localhost:{port}"})[0] == 200
    assert request(server, "GET", "/v1/hello", headers={"Host": f"[::1]:{port}"})[0] == 200


def test_a_server_bound_to_every_address_lets_any_host_in_but_checks_origin():
    """Bound to 0.0.0.0 any Host name may reach it; another site's Origin is still refused."""
    from sortie.remote.bounded import Request, SameOrigin

    anywhere = SameOrigin(None)
    host = {"host": "my-machine:8765", "content-type": "application/json"}
    assert anywhere.refused(Request("POST", "/v1/act", host)) is None
    cross = host | {"origin": "http://evil.example"}
    assert anywhere.refused(Request("POST", "/v1/act", cross))[0] == 403


def test_a_server_given_a_token_answers_only_requests_bearing_it(monkeypatch):
    """AgentServer(token=...) refuses a request without it (401), whatever the environment."""
    from sortie.remote.policy import PolicyEndpoint
    from sortie.remote.server import AgentServer

    from .conftest import Walker

    monkeypatch.delenv("SORTIE_AGENT_TOKEN", raising=False)
    with AgentServer(PolicyEndpoint(Walker), token="t0ken-given") as server:
        assert request(server, "GET", "/v1/hello")[0] == 401
        bearing = {"Authorization": "Bearer t0ken-given"}
        assert request(server, "GET", "/v1/hello", headers=bearing)[0] == 200


class Counted:
    """An endpoint whose sessions note when they are closed (as a model agent's client is).

    ``fail_close``: their close raises. Their act walks on.
    """

    def __init__(self, fail_close: bool = False):
        self.closed: list[int] = []
        self.fail_close = fail_close

    def hello(self):
        from sortie.remote.wire import Hello

        return Hello(agent="counted", families=["rescue"], sensors=[])

    def start(self, seed, brief):
        endpoint = self

        class Session:
            def act(self, observation):
                from sortie.remote.wire import MoveAction

                return ActResponse(action=MoveAction(turn=0.0, speed=1.0))

            def close(self):
                endpoint.closed.append(seed)
                if endpoint.fail_close:
                    raise OSError("already gone")

        return Session()


def _reset(server, brief, session, seed):
    body = ResetRequest(session=session, seed=seed, brief=brief).model_dump(mode="json")
    return request(server, "POST", "/v1/reset", body)


def test_a_session_reset_anew_or_forgotten_has_its_policy_closed(rescue_start):
    """A session's policy is closed when the session is reset again, or the oldest forgotten."""
    from sortie.remote.server import MAX_SESSIONS

    endpoint, brief = Counted(), brief_to_wire(rescue_start[0])
    with serving(endpoint) as server:
        assert _reset(server, brief, "s", 1)[0] == 200
        assert _reset(server, brief, "s", 2)[0] == 200
        assert endpoint.closed == [1]
        for seed in range(3, 3 + MAX_SESSIONS):
            assert _reset(server, brief, f"t{seed}", seed)[0] == 200
        assert endpoint.closed == [1, 2]  # "s", reset with seed 2, was the oldest of 65
    assert sorted(endpoint.closed) == [1, *range(2, 3 + MAX_SESSIONS)]  # stopping closes the rest


def test_a_closed_session_answers_no_more_steps(messages):
    """An act that waited for a session closed meanwhile is a 404, not a step of a closed policy."""
    from sortie.remote.server import _Live  # the server looks a session up, then takes its lock

    live = _Live(Counted().start(0, None))
    live.close()
    act = ActRequest.model_validate(messages[1])
    with pytest.raises(WireError) as refused:
        live.act(act)
    assert refused.value.status == 404 and refused.value.code == "unknown_session"


def test_a_policy_whose_close_raises_fails_no_other_reset(rescue_start):
    """Dropping a session whose close raises still answers the reset that dropped it."""
    endpoint, brief = Counted(fail_close=True), brief_to_wire(rescue_start[0])
    with serving(endpoint) as server:
        assert _reset(server, brief, "s", 1)[0] == 200
        with pytest.warns(RuntimeWarning, match="already gone"):
            assert _reset(server, brief, "s", 2)[0] == 200
        assert endpoint.closed == [1]
        endpoint.fail_close = False


def test_stopping_leaves_open_a_policy_still_answering_a_step():
    """Stopping the server waits a moment for a step being answered, not for as long as it takes."""
    from sortie.remote.server import _Live

    endpoint = Counted()
    live = _Live(endpoint.start(7, None))
    live.lock.acquire()  # a step being answered
    live.close(wait=0.01)
    assert endpoint.closed == [] and not live.closed
    live.lock.release()
    live.close(wait=0.01)
    assert endpoint.closed == [7] and live.closed


class Served:
    """A servable agent that holds something; its reset raises for seed 13."""

    name, sensors, closed = "served", frozenset(), []

    def reset(self, brief, seed):
        self.seed = seed
        if seed == 13:
            raise ValueError("no model loaded")

    def act(self, observation):
        raise AssertionError("not asked to act")

    def close(self):
        Served.closed.append(getattr(self, "seed", "probe"))


def test_the_endpoint_closes_its_probe_and_an_agent_whose_reset_failed(rescue_start, override):
    """Only the agents sessions hold stay open.

    The probe that read the sensors is closed, and so is an agent whose reset raised.
    """
    from sortie.agents.base import AGENTS
    from sortie.remote.served import AgentEndpoint

    Served.closed = []
    override(AGENTS, "served", Served)
    endpoint = AgentEndpoint("served", {})
    assert Served.closed == ["probe"]
    brief = brief_to_wire(rescue_start[0])
    endpoint.start(1, brief)
    with pytest.raises(ValueError, match="no model loaded"):
        endpoint.start(13, brief)
    assert Served.closed == ["probe", 13]
