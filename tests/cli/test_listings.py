"""``sortie suites``, ``agents`` and ``runs``: what there is, without reading an error message."""

import json

from typer.testing import CliRunner

from sortie.cli import app
from sortie.core.records_io import write_suite
from sortie.run.batch import RunRequest
from sortie.suites import read
from tests.conftest import run_stored

runner = CliRunner()


def listed(*args: str) -> list[dict]:
    """Return a listing command's rows as JSON."""
    result = runner.invoke(app, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_suites_lists_every_packaged_suite_with_its_groups():
    """household-v1: 100 episodes whose level counts add up; rescue-l3-v2 is all L3."""
    rows = {row["suite"]: row for row in listed("suites")}
    household = rows["household-v1"]
    assert (household["family"], household["episodes"]) == ("household", 100)
    assert sum(household["groups"].values()) == 100
    assert rows["rescue-l3-v2"]["groups"] == {"L3": len(read("rescue-l3-v2").episodes)}
    assert rows["aerial-smoke-v1"]["grouped by"] == "type"


def test_agents_lists_families_sight_and_arguments():
    """The homiebot plays household, sees RGB, takes reasks=4; the oracle reads the state."""
    rows = {row["agent"]: row for row in listed("agents")}
    homiebot = rows["homiebot"]
    assert homiebot["families"] == ["household"] and homiebot["sees"] == "rgb"
    assert "reasks=4" in homiebot["arguments"]
    assert "privileged" in rows["oracle"]["sees"]
    nomem = rows["explorer-nomem"]["arguments"]
    assert "memory=False (fixed)" in nomem and "memory=True" in rows["explorer"]["arguments"]
    assert nomem[1:] == rows["explorer"]["arguments"][1:]  # the rest forwarded


def test_runs_lists_what_a_store_holds(tmp_path):
    """A run of 2 episodes × 2 repeats: 4 stored of 4 planned, by family, agent and date."""
    store = tmp_path / "s.db"
    run_stored(
        RunRequest(("household-smoke-v1",), "random", store=store, run_id="r", repeats=2, limit=2)
    )
    (row,) = listed("runs", "--store", str(store))
    assert (row["run"], row["family"], row["agent"], row["suites"]) == (
        "r",
        "household",
        "random",
        ["household-smoke-v1"],
    )
    assert (row["stored"], row["planned"], row["errors"]) == (4, 4, 0)
    assert row["began"].endswith("Z")
    table = runner.invoke(app, ["runs", "--store", str(store)])
    assert table.exit_code == 0 and "household-smoke-v1" in table.output


def test_a_missing_store_and_a_bad_format_are_refused():
    """No store at the path: one line saying so; --format xml: the choices."""
    missing = runner.invoke(app, ["runs", "--store", "nowhere/s.db"])
    assert missing.exit_code != 0 and "no results store here" in missing.output
    bad = runner.invoke(app, ["suites", "--format", "xml"])
    assert bad.exit_code != 0 and "expected table or json" in bad.output


def test_a_run_of_a_suite_file_named_as_a_packaged_suite_plans_no_count(tmp_path):
    """A one-episode file whose header names rescue-smoke-v2 is not counted as that suite's 8."""
    suite = read("rescue-smoke-v2")
    path = tmp_path / "one.jsonl"
    write_suite(path, suite.header, suite.episodes[:1])
    store = tmp_path / "s.db"
    run_stored(RunRequest((str(path),), "random", store=store, run_id="one"))
    (row,) = listed("runs", "--store", str(store))
    assert (row["stored"], row["planned"]) == (1, None)
