import http.client
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from sortie.remote.policy import PolicyEndpoint
from sortie.remote.server import AgentServer, Endpoint


@contextmanager
def serving(endpoint: Endpoint, port: int = 0) -> Iterator[AgentServer]:
    """Serve ``endpoint`` on 127.0.0.1 for the block, then stop the server."""
    server = AgentServer(endpoint, "127.0.0.1", port).start()
    try:
        yield server
    finally:
        server.stop()


class Walker:
    """A policy that walks straight on: turn 0, speed 1."""

    def reset(self, brief, seed) -> None:
        self.brief, self.seed = brief, seed

    def act(self, observation) -> Any:
        return {"type": "move", "turn": 0.0, "speed": 1.0}


def policy_server(act: Callable[[Any], Any] | None = None, **kwargs) -> AgentServer:
    """Return a started server of a walking policy (``act`` replaces its act)."""

    class Policy(Walker):
        def act(self, observation) -> Any:
            return act(observation) if act else super().act(observation)

    return AgentServer(PolicyEndpoint(Policy, **kwargs), "127.0.0.1", 0).start()


@pytest.fixture
def policy():
    """Return ``policy(act=None, **kwargs)``: a started policy server, stopped after the test."""
    servers: list[AgentServer] = []

    def start(act=None, **kwargs) -> AgentServer:
        servers.append(policy_server(act, **kwargs))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def request(
    server: AgentServer, method: str, path: str, body: Any = None, headers: dict | None = None
) -> tuple[int, dict]:
    """Send one raw request (a dict body as JSON); return the status and the JSON answer.

    A POST says its body is JSON unless ``headers`` says otherwise.
    """
    host, port = server.http.address
    connection = http.client.HTTPConnection(str(host), port, timeout=10)
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    sent = {"Content-Type": "application/json"} if method == "POST" else {}
    try:
        connection.request(method, path, body=data, headers=sent | (headers or {}))
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


@pytest.fixture(scope="session")
def rescue_start():
    """Return (brief, first observation) of a hand-made rescue episode with all three images."""
    from sortie.backends.embedded import EmbeddedBackend
    from sortie.missions.rescue.mission import RescueMission
    from sortie.testing.episodes import room_rescue

    backend = EmbeddedBackend(body="walker", sensors=("rgb", "depth", "semantic"))
    mission = RescueMission(backend)
    observation = mission.reset(room_rescue(), seed=0)
    return mission.brief, observation


@pytest.fixture(scope="session")
def tiny_rescue(tmp_path_factory):
    """Return a suite file of two short (2 s, 10-step) hand-made rescue episodes."""
    from sortie.core.records_io import SuiteHeader, write_suite
    from sortie.testing.episodes import room_rescue

    path = tmp_path_factory.mktemp("suites") / "tiny.jsonl"
    episodes = [room_rescue(f"tiny/{n}", budget_s=2.0) for n in range(2)]
    write_suite(path, SuiteHeader(suite="tiny"), episodes)
    return path


def remote_run(tmp_path, suite, url: str, **args) -> list:
    """Run ``suite`` with the remote agent at ``url``; return the stored episodes."""
    from sortie.run.batch import RunRequest
    from tests.conftest import run_stored

    request = RunRequest(
        (str(suite),),
        "remote",
        agent_args={"url": url, "backoff": "0.01"} | args,
        store=tmp_path / "s.db",
        run_id="r",
        max_consecutive_errors=0,
    )
    return run_stored(request)


def events_of(episode) -> list[dict]:
    """Return every event of a stored episode's record, in order."""
    from sortie.core.records_io import read_trajectory

    steps = read_trajectory(episode.record).steps
    return [event.model_dump() for step in steps for event in step.events]


def chunked_post(
    address: tuple, path: str, body: bytes, end: bool = True, headers: dict | None = None
) -> tuple[int, bytes]:
    """POST ``body`` in 4 KiB chunks (no Content-Length); return the status and the answer.

    With ``end=False`` the last chunk is never sent, so an answer shows the server answered
    before the body was over (it could not have waited for the whole of it).
    """
    import select
    import socket

    host, port = address
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", "Transfer-Encoding: chunked"]
    lines.append("Content-Type: application/json")
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    head = ("\r\n".join(lines) + "\r\n\r\n").encode()
    with socket.create_connection((str(host), port), timeout=10) as connection:
        connection.sendall(head)
        for start in range(0, len(body), 4096):
            if select.select([connection], [], [], 0.01)[0]:
                break  # answered already: sending more would only reset the connection
            piece = body[start : start + 4096]
            connection.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
        if end and not select.select([connection], [], [], 0)[0]:
            connection.sendall(b"0\r\n\r\n")
        response = http.client.HTTPResponse(connection)
        response.begin()
        return response.status, response.read()
