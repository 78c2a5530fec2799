"""``sortie run household-smoke-v1 --agent homiebot`` end to end, on the scripted test server."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sortie.cli import app
from sortie.core.records_io import read_trajectory
from sortie.core.trajectory import Trajectory
from sortie.testing.model_server import ModelServer
from tests.models.conftest import FAST, secret  # noqa: F401 - the fixture

pytestmark = pytest.mark.usefixtures("secret")


def run(tmp_path: Path, agent: str, *args: str) -> Trajectory:
    """Run the first task of household-smoke-v1 through the CLI; return its record."""
    out = tmp_path / agent
    cli(
        [
            "run",
            "household-smoke-v1",
            "--run-id",
            agent,
            "--agent",
            agent,
            "--limit",
            "1",
            "--store",
            str(tmp_path / "s.db"),
            "--out",
            str(out),
            *args,
        ],
    )
    (path,) = out.rglob("*.jsonl")
    return read_trajectory(path)


def cli(words: list[str]) -> str:
    """Run a sortie command; return its output, checking it succeeded."""
    result = CliRunner().invoke(app, words, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def model_args(server: ModelServer, *more: str) -> list[str]:
    """Return the -a arguments that point homiebot at ``server``."""
    settings = {"base_url": server.base_url, "model": "test-vlm", **FAST}
    pairs = [f"{k}={v}" for k, v in settings.items()] + list(more)
    return [word for pair in pairs for word in ("-a", pair)]


def answers_of(oracle: Trajectory) -> list[str]:
    """Return the oracle's rounds as homiebot's JSON answers."""
    return [
        json.dumps(
            {
                "analysis": "as planned",
                "subtask": {"action": r.action, "target": r.target, "place": r.place},
                "skill": r.skill,
            }
        )
        for r in (s.part for s in oracle.steps)
        if r is not None
    ]


@pytest.mark.parametrize("observation", ["images", "text"])
def test_the_oracles_plan_as_answers_completes_the_first_smoke_task(tmp_path, observation):
    """Scripted with the oracle's rounds, homiebot succeeds; its arguments label the record."""
    oracle = run(tmp_path, "oracle")
    queue = answers_of(oracle)
    with ModelServer(lambda messages: queue.pop(0), models=("test-vlm",)) as server:
        args = model_args(server, f"observation={observation}")
        record = run(tmp_path, "homiebot", *args)
        first = server.requests[0]["messages"][-1]["content"]
    assert record.footer.outcome == "success" and not queue
    assert record.header.agent.name == "homiebot"
    assert record.header.agent.args["observation"] == observation
    assert isinstance(first, str) == (observation == "text")


def test_a_server_answering_garbage_ends_the_run_as_a_failure_not_an_error(tmp_path):
    """Garbage: five format-error calls, then the episode is a scored failure, ``no_answer``."""
    with ModelServer(lambda messages: "no idea, sorry", models=("test-vlm",)) as server:
        record = run(tmp_path, "homiebot", *model_args(server))
    assert record.footer.outcome == "failure"
    assert record.footer.failure_reason == "no_answer"
    assert [c.error for c in record.steps[0].model_calls] == ["format"] * 5
    assert server.count == 5 and server.listings == 1


def test_the_report_labels_a_text_observation_run(tmp_path):
    """``sortie report`` marks a run whose agent was given text instead of images."""
    with ModelServer(lambda messages: "no idea", models=("test-vlm",)) as server:
        run(tmp_path, "homiebot", *model_args(server, "observation=text"))
    output = cli(["report", "--run", "homiebot", "--store", str(tmp_path / "s.db")])
    assert "homiebot (text observation)" in output


def test_a_model_that_echoes_the_prompt_is_counted_and_the_run_says_so(tmp_path):
    """Gemma's '...' answers: one decision of five echo calls, no_answer, and a warning."""
    subtask = {"action": "...", "target": "...", "place": None}
    echo = json.dumps({"analysis": "...", "subtask": subtask, "skill": "..."})
    with ModelServer(lambda messages: echo, models=("test-vlm",)) as server:
        output = cli(
            [
                "run",
                "household-smoke-v1",
                "--agent",
                "homiebot",
                "--limit",
                "1",
                "--store",
                str(tmp_path / "s.db"),
                *model_args(server),
            ]
        )
    text = " ".join(output.split())
    assert "1 of 1 decisions ended in answers that copied the prompt's placeholders" in text
    report = cli(["report", "--run", next(iter_runs(tmp_path)), "--store", str(tmp_path / "s.db")])
    assert "echo 5" in report and "100.0%" in report


def iter_runs(tmp_path: Path):
    """Yield the run ids of the test store."""
    from sortie.run.store import Store

    with Store(tmp_path / "s.db") as store:
        yield from store.runs()
