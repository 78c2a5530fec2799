"""Progress when the output is not a terminal: a line per episode, or every ten seconds."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console
from typer.testing import CliRunner

from sortie.cli import app
from sortie.cli.run_console import ProgressLines

runner = CliRunner()


def finished(outcome: str, reason: str | None = None):
    """Return a stand-in for a JobResult: only its footer is read."""
    return SimpleNamespace(footer=SimpleNamespace(outcome=outcome, failure_reason=reason))


def lines_of(total: int, results, seconds_each: float) -> list[str]:
    """Feed ``results`` to ProgressLines on a fake clock; return the lines it printed."""
    out = io.StringIO()
    now = [0.0]
    lines = ProgressLines(Console(file=out, width=200), total, "suite · agent", lambda: now[0])
    for result in results:
        now[0] += seconds_each
        lines.done(result)
    return out.getvalue().splitlines()


def test_a_short_run_prints_a_line_per_episode_with_counts_and_time_left():
    """3 episodes, 2 s each: three lines; after the second, 4 s elapsed and 2 s left."""
    printed = lines_of(
        3, [finished("success"), finished("failure"), finished("error", "agent_error")], 2.0
    )
    assert len(printed) == 3
    assert (
        printed[1]
        == "[2/3] suite · agent: 1 success, 1 failure, 0 errors · 0:04 elapsed, 0:02 left"
    )
    assert printed[2].startswith("[3/3] suite · agent: 1 success, 1 failure, 1 errors")


def test_a_long_run_prints_at_most_every_ten_seconds_and_the_last():
    """100 episodes of 1 s: a line at 10, 20, … 100 s — ten lines, the last one 100/100."""
    printed = lines_of(100, [finished("success")] * 100, 1.0)
    assert len(printed) == 10
    assert printed[0].startswith("[10/100]") and printed[-1].startswith("[100/100]")
    assert printed[0].endswith("0:10 elapsed, 1:30 left")


def test_sortie_run_piped_prints_progress_lines(tmp_path):
    """Under CliRunner (not a terminal) a run prints [k/n] lines before its table."""
    result = runner.invoke(
        app,
        [
            "run",
            "household-smoke-v1",
            "--agent",
            "random",
            "--limit",
            "2",
            "--store",
            str(tmp_path / "s.db"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "[1/2] household-smoke-v1 · random" in result.output
    assert "[2/2] household-smoke-v1 · random: 0 success, 2 failure, 0 errors" in result.output
