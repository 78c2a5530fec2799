"""A new family plugs in through its descriptor alone: ``pointgoal`` (sortie/testing/family.py).

Registered for the test by one line each (the family, its agent and how reports show it), it
runs through ``sortie run``, ``sortie report`` (JSON and HTML), the gymnasium registry and the
agent server; every part of it but its report descriptor (below) lives in that one file.
"""

import dataclasses
import inspect
import json

import gymnasium
import pytest
from typer.testing import CliRunner

from sortie.agents.base import AGENTS
from sortie.cli import app
from sortie.core.errors import ConfigError
from sortie.core.records_io import SuiteHeader, read_trajectory, write_suite
from sortie.missions.gym_ids import make_env, register_envs
from sortie.missions.registry import FAMILIES
from sortie.remote.served import AgentEndpoint
from sortie.report.descriptor import REPORTS, FamilyReport, Score
from sortie.run.store import Store
from sortie.testing import family as pointgoal
from tests.remote.conftest import remote_run, serving

runner = CliRunner()
ENV_ID = "sortie/Pointgoal-v1"
POINTGOAL_REPORT = FamilyReport(
    headline=("sr", "steps"),
    decay_title="SR (%) and steps per level",
    run_scores=(Score("SR", "sr", 0), Score("steps", "steps", 0)),
    episode_scores=(Score("SR", "sr", 0),),
    stage_names={"S1": "reach"},
)
"""How reports show pointgoal: what a plug-in family brings beside its descriptor."""


@pytest.fixture
def registered():
    """The three registry lines a plug-in would have, for this test only."""
    with (
        FAMILIES.override("pointgoal", "sortie.testing.family:POINTGOAL"),
        AGENTS.override("forward", "sortie.testing.family:ForwardAgent"),
        REPORTS.override("pointgoal", POINTGOAL_REPORT),
    ):
        yield
    gymnasium.registry.pop(ENV_ID, None)


@pytest.fixture
def suite(tmp_path):
    """One reachable episode (3 m ahead, 20 s) and one that runs out of time (8 m, 2 s)."""
    path = tmp_path / "pointgoal.jsonl"
    episodes = [
        pointgoal.pointgoal_episode("pg/near"),
        pointgoal.pointgoal_episode("pg/far", ahead=8.0, budget_s=2.0),
    ]
    write_suite(path, SuiteHeader(suite="pointgoal"), episodes)
    return path


def test_every_part_of_the_family_is_in_its_one_file(registered):
    family = FAMILIES.get("pointgoal")
    module, _, name = family.env.partition(":")
    parts = [
        family.load_runtime(),
        family.load_scorer(),
        family.check,
        family.settings,
        AGENTS.get("forward"),
        getattr(pointgoal, name),
    ]
    assert module == pointgoal.__name__
    assert {inspect.getsourcefile(part) for part in parts} == {pointgoal.__file__}


def test_it_runs_and_reports_in_tables_and_html(registered, suite, tmp_path):
    store = str(tmp_path / "s.db")
    ran = runner.invoke(
        app, ["run", str(suite), "--agent", "forward", "--store", store, "--run-id", "f"]
    )
    assert ran.exit_code == 0, ran.output
    with Store(tmp_path / "s.db") as opened:
        episodes = {e.episode_id: e for e in opened.episodes("f")}
        assert opened.run_family("f") == "pointgoal"
        assert opened.run_config("f").settings == {"reach_scale": 1.0}
    assert (episodes["pg/near"].outcome, episodes["pg/far"].outcome) == ("success", "failure")
    # 3 m ahead, reached at 1.5 m: 1.5 m at 0.2 m a step (1 m/s for 0.2 s) is 8 steps.
    assert episodes["pg/near"].metrics["steps"] == 8 and episodes["pg/far"].metrics["sr"] == 0
    header = read_trajectory(episodes["pg/near"].record).header
    assert header.config.settings == {"reach_scale": 1.0}
    html = tmp_path / "html"
    words = ["report", "--run", "f", "--store", store, "--format", "json", "--html", str(html)]
    reported = runner.invoke(app, words)
    assert reported.exit_code == 0, reported.output
    start = reported.output.index("{")
    rows, _ = json.JSONDecoder().raw_decode(reported.output, start)
    assert rows["f"]["all"]["sr"]["mean"] == 50.0 and rows["f"]["near"]["steps"]["mean"] == 8
    pages = [p.read_text() for p in html.rglob("*.html")]
    assert len(pages) >= 3 and any("S1 reach" in page for page in pages)


def test_without_a_report_descriptor_it_reports_with_the_default(suite, tmp_path):
    """No descriptor registered: the HTML report still comes, its stages by their ids."""
    with (
        FAMILIES.override("pointgoal", "sortie.testing.family:POINTGOAL"),
        AGENTS.override("forward", "sortie.testing.family:ForwardAgent"),
    ):
        store = str(tmp_path / "s.db")
        words = ["run", str(suite), "--agent", "forward", "--store", store, "--run-id", "f"]
        assert runner.invoke(app, words).exit_code == 0
        html = tmp_path / "html"
        words = ["report", "--run", "f", "--store", store, "--html", str(html)]
        reported = runner.invoke(app, words)
    assert reported.exit_code == 0, reported.output
    pages = [p.read_text() for p in html.rglob("*.html")]
    assert any("SR and STEPS per level" in page for page in pages)
    assert not any("S1 reach" in page for page in pages)


def test_a_family_setting_is_checked_by_its_model_and_reaches_the_rules(
    registered, suite, tmp_path
):
    """-F reach_scale=0.5 halves the reach: the near episode takes 4 steps more."""
    words = ["run", str(suite), "--agent", "forward", "--store", str(tmp_path / "s.db")]
    refused = runner.invoke(app, [*words, "-F", "reach=2"])
    assert refused.exit_code == 2 and "Did you mean 'reach_scale'?" in refused.output
    ran = runner.invoke(app, [*words, "--run-id", "half", "-F", "reach_scale=0.5"])
    assert ran.exit_code == 0, ran.output
    with Store(tmp_path / "s.db") as opened:
        near = next(e for e in opened.episodes("half") if e.episode_id == "pg/near")
    assert near.metrics["steps"] == 12


def test_it_is_a_gymnasium_env(registered):
    register_envs()
    assert gymnasium.registry[ENV_ID].kwargs == {"family": "pointgoal"}
    env = gymnasium.make(ENV_ID, episodes=[pointgoal.pointgoal_episode()])
    env.reset(seed=0)
    rewards = [env.step({"move": [0.0, 1.0]})[1] for _ in range(8)]
    assert rewards[-1] == 1.0 and rewards[:-1] == [0.0] * 7
    env.close()
    without = dataclasses.replace(pointgoal.POINTGOAL, name="nogym", env=None)
    with FAMILIES.override("nogym", without), pytest.raises(ConfigError, match="no gymnasium env"):
        make_env("nogym")


def test_the_agent_server_serves_its_agent(registered, suite, tmp_path):
    with serving(AgentEndpoint("forward", {})) as server:
        episodes = remote_run(tmp_path, suite, server.url)
    outcomes = {e.episode_id: e.outcome for e in episodes}
    assert outcomes == {"pg/near": "success", "pg/far": "failure"}


def test_generate_asks_the_family_for_its_generator(registered):
    """A family without a generator says so; an unknown target lists the families."""
    no_generator = runner.invoke(app, ["generate", "pointgoal"])
    assert (
        no_generator.exit_code == 2
        and "the pointgoal family has no generator" in no_generator.output
    )
    unknown = runner.invoke(app, ["generate", "pointgoals"])
    assert unknown.exit_code == 2 and "pointgoal" in unknown.output and "suites" in unknown.output
