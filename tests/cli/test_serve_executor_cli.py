"""`sortie serve-executor` plays a household suite with an EMMOE-style planner; the run reports."""

import re
import subprocess
import sys

from typer.testing import CliRunner

from sortie.cli import app
from sortie.testing.emmoe_planner import EmmoeStylePlanner, connect

runner = CliRunner()
EPISODE = "household-smoke-v1/0001"
SCRIPT = [
    ("Go to, dining table", "NoMaD"),
    ("Pick, orange", "RT-1-X"),
    ("Go to, shelf in the living room", "NoMaD"),
    ("Put, orange, shelf in the living room", "RT-1-X"),
    ("End", "NoMaD"),
]


def test_a_served_episode_is_stored_and_shown_by_sortie_report(tmp_path):
    """The command serves one episode to a planner, exits, and `sortie report` shows its run."""
    store = tmp_path / "sortie.db"
    command = [sys.executable, "-m", "sortie.cli", "serve-executor", "household-smoke-v1"]
    command += ["--episode", EPISODE, "--port", "0", "-F", "skills=perfect", "--store", str(store)]
    command += ["--run-id", "emmoe-cli", "--views", str(tmp_path / "views")]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as server:
        lines = [server.stdout.readline(), server.stdout.readline()]
        port = re.search(r"127\.0\.0\.1:(\d+)", lines[1])
        assert port, lines
        EmmoeStylePlanner(lambda turn: SCRIPT[turn.round - 1]).play(connect(int(port[1])), 1)
        assert server.wait(timeout=60) == 0
    report = runner.invoke(app, ["report", "--run", "emmoe-cli", "--store", str(store)])
    assert report.exit_code == 0 and "100.0" in report.output, report.output


def test_a_host_that_is_not_loopback_is_refused_with_one_line(tmp_path):
    """--host 0.0.0.0 without --allow-remote exits 2 with a line that names the fix."""
    store = tmp_path / "sortie.db"
    result = runner.invoke(
        app,
        ["serve-executor", "household-smoke-v1", "--host", "0.0.0.0", "--episode", "nope"]
        + ["--store", str(store)],
    )
    assert result.exit_code == 2 and "--allow-remote" in result.output


def test_run_with_agent_emmoe_planner_says_to_serve_the_executor_instead(tmp_path):
    """`sortie run --agent emmoe-planner` has no planner connected: an error naming the command."""
    store = tmp_path / "s.db"
    arguments = ["run", "household-smoke-v1", "--agent", "emmoe-planner", "--limit", "1"]
    result = runner.invoke(app, [*arguments, "--store", str(store)])
    assert result.exit_code == 2 and "sortie serve-executor" in result.output
