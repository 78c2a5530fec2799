"""`sortie agent-server` serves a registered agent that `sortie run --agent remote` plays."""

import os
import re
import subprocess
import sys

from typer.testing import CliRunner

from sortie.cli import app
from sortie.remote.client import RemoteAgent
from sortie.remote.served import AgentEndpoint
from sortie.remote.server import AgentServer

runner = CliRunner()


def test_agent_server_serves_a_registered_agent_on_loopback(tmp_path):
    """The command prints its loopback address and answers a hello there."""
    command = [
        sys.executable,
        "-m",
        "sortie.cli",
        "agent-server",
        "--agent",
        "random",
        "--port",
        "0",
    ]
    env = {**os.environ, "SORTIE_AGENT_TOKEN": ""}
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) as server:
        try:
            line = server.stdout.readline()
            url = re.search(r"http://127\.0\.0\.1:\d+", line)
            assert url, line
            hello = RemoteAgent(url.group(0), timeout=10).hello()
            assert (hello.agent, hello.families) == ("random", ["aerial", "household", "rescue"])
        finally:
            server.terminate()
            server.wait(timeout=10)


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
