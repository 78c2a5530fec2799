"""`sortie agent-server` serves a registered agent that `sortie run --agent remote` plays."""

import http.client
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest
from typer.testing import CliRunner

from sortie.cli import app
from sortie.core.errors import ConfigError
from sortie.remote.client import RemoteAgent
from sortie.remote.served import AgentEndpoint
from sortie.remote.server import AgentServer

runner = CliRunner()


@contextmanager
def agent_server(tmp_path, monkeypatch, *options: str) -> Iterator[tuple[str, str]]:
    """Run `sortie agent-server --agent random` for the block; yield its URL and first lines.

    It and this process share a runtime folder under ``tmp_path`` (where tokens are left),
    and neither has SORTIE_AGENT_TOKEN.
    """
    monkeypatch.delenv("SORTIE_AGENT_TOKEN", raising=False)
    monkeypatch.setenv("SORTIE_RUNTIME_DIR", str(tmp_path / "runtime"))
    command = [sys.executable, "-m", "sortie.cli", "agent-server", "--agent", "random"]
    command += ["--port", "0", *options]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=os.environ) as server:
        try:
            line = server.stdout.readline()
            url = re.search(r"http://127\.0\.0\.1:\d+", line)
            assert url, line
            if "a token is required" in line:
                line += server.stdout.readline() + server.stdout.readline()
            yield url.group(0), line
        finally:
            server.send_signal(signal.SIGINT)  # Ctrl-C, as a person stops it
            server.wait(timeout=10)


def _hello_status(url: str) -> int:
    """Return the status of a bare GET /v1/hello (no token)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        connection.request("GET", "/v1/hello")
        return connection.getresponse().status
    finally:
        connection.close()


def _hello(url: str):
    """Return the served agent's hello, asked by a remote agent that is closed again."""
    agent = RemoteAgent(url, timeout=10)
    try:
        return agent.hello()
    finally:
        agent.close()


def test_agent_server_serves_a_registered_agent_on_loopback(tmp_path, monkeypatch):
    """The command prints its loopback address and answers a hello there."""
    with agent_server(tmp_path, monkeypatch) as (url, _):
        hello = _hello(url)
        assert (hello.agent, hello.families) == ("random", ["aerial", "household", "rescue"])


def test_agent_server_requires_a_token_it_prints_once_by_default(tmp_path, monkeypatch):
    """Without SORTIE_AGENT_TOKEN a new token is printed at start; a request without it is 401."""
    with agent_server(tmp_path, monkeypatch) as (url, printed):
        token = re.search(r"Token: (\S+)", printed)
        assert token and len(token.group(1)) >= 32, printed
        assert _hello_status(url) == 401
        monkeypatch.setenv("SORTIE_RUNTIME_DIR", str(tmp_path / "elsewhere"))  # no file here
        with pytest.raises(ConfigError, match="refused the token"):
            _hello(url)
        monkeypatch.setenv("SORTIE_AGENT_TOKEN", token.group(1))
        assert _hello(url).agent == "random"


def test_agent_server_leaves_its_token_for_the_remote_agent_on_this_machine(tmp_path, monkeypatch):
    """The token is left in a file of this user's only, which the remote agent reads itself."""
    with agent_server(tmp_path, monkeypatch) as (url, printed):
        files = list((tmp_path / "runtime").iterdir())
        assert len(files) == 1 and files[0].stat().st_mode & 0o077 == 0
        assert files[0].read_text() in printed
        assert _hello(url).agent == "random"
    assert not files[0].exists()  # gone when the server stops


def test_agent_server_with_no_token_answers_anyone_on_loopback(tmp_path, monkeypatch):
    """--no-token serves without a token, and says so."""
    with agent_server(tmp_path, monkeypatch, "--no-token") as (url, printed):
        assert "no token required" in printed
        assert _hello_status(url) == 200


def test_agent_server_refuses_an_unknown_agent_with_a_suggestion():
    """A misspelt agent is exit code 2 with the near name."""
    result = runner.invoke(app, ["agent-server", "--agent", "randm", "--port", "0"])
    assert result.exit_code == 2 and "Did you mean 'random'?" in result.output


def test_agent_server_refuses_a_privileged_agent():
    """The oracle reads the world, which a server cannot hand it: a clear error."""
    result = runner.invoke(app, ["agent-server", "--agent", "oracle", "--port", "0"])
    assert result.exit_code == 2 and "privileged" in result.output


def test_agent_server_played_by_run_with_agent_remote(tmp_path):
    """`sortie run --agent remote -a url=...` plays the served agent and prints its table."""
    with AgentServer(AgentEndpoint("random", {})) as server:
        result = runner.invoke(
            app,
            [
                "run",
                "aerial-smoke-v1",
                "--agent",
                "remote",
                "-a",
                f"url={server.url}",
                "--limit",
                "2",
                "--store",
                str(tmp_path / "s.db"),
                "--run-id",
                "rem",
            ],
        )
    assert result.exit_code == 0, result.output
    assert "aerial-smoke-v1 · remote" in result.output


def test_play_refuses_an_unknown_episode_before_serving_the_page(tmp_path):
    """A misspelt episode id is exit code 2 with the nearest id, and no page is served."""
    result = runner.invoke(
        app,
        [
            "play",
            "rescue-smoke-v2",
            "--episode",
            "rescue-smoke-v2/000",
            "--port",
            "0",
            "--store",
            str(tmp_path / "s.db"),
        ],
    )
    assert result.exit_code == 2 and "no episode 'rescue-smoke-v2/000'" in result.output
    assert "Open http" not in result.output


def test_run_with_agent_human_says_to_play_instead(tmp_path):
    """`sortie run --agent human` has nobody at a page: a clear error naming `sortie play`."""
    result = runner.invoke(
        app,
        [
            "run",
            "rescue-smoke-v2",
            "--agent",
            "human",
            "--limit",
            "1",
            "--store",
            str(tmp_path / "s.db"),
        ],
    )
    assert result.exit_code == 2 and "sortie play" in result.output
