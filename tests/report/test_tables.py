import csv
import io
import json

import pytest
from typer.testing import CliRunner

from sortie.cli import app
from sortie.core.errors import ConfigError, UnknownNameError
from sortie.metrics.aggregate import RESCUE_COLUMNS
from sortie.report.tables import cell, compare_rows, layout, paper_tables, render, report_rows
from sortie.run.batch import RunRequest
from sortie.run.store import Store
from tests.conftest import run_stored

runner = CliRunner()


@pytest.fixture(scope="module")
def store_path(tmp_path_factory, smoke3):
    """A store with runs 'a' and 'b' (the same random run twice) of three smoke episodes."""
    path = tmp_path_factory.mktemp("report") / "s.db"
    for run_id in ("a", "b"):
        run_stored(RunRequest((str(smoke3),), "random", store=path, run_id=run_id))
    return path


def test_report_has_one_row_per_run_and_level_plus_all(store_path):
    """Two runs over L1 and L2 episodes give rows (a, L1), (a, L2), (a, all), then b's."""
    with Store(store_path) as store:
        rows = report_rows(store, ["a", "b"])
    assert [(r.run, r.group, r.n) for r in rows] == [
        ("a", "L1", 2), ("a", "L2", 1), ("a", "all", 3),
        ("b", "L1", 2), ("b", "L2", 1), ("b", "all", 3)]  # fmt: skip
    assert list(rows[0].estimates) == list(RESCUE_COLUMNS)


def test_report_groups_by_world_from_the_record_headers(store_path):
    """--group world reads each record's header: two rooms and one suburb."""
    with Store(store_path) as store:
        rows = report_rows(store, ["a"], group="world")
    assert [(r.group, r.n) for r in rows] == [("flexible_room", 2), ("suburb", 1), ("all", 3)]


def test_the_csv_format_has_a_header_and_a_row_per_group(store_path):
    """CSV parses: run, group, n, then mean/lo/hi per metric."""
    with Store(store_path) as store:
        text = render(report_rows(store, ["a"]), "csv")
    table = list(csv.DictReader(io.StringIO(str(text))))
    assert [row["group"] for row in table] == ["L1", "L2", "all"]
    assert list(table[0])[:6] == ["run", "group", "n", "tcr", "tcr_lo", "tcr_hi"]


def test_the_json_format_nests_run_group_metric(store_path):
    """JSON loads as {run: {group: {metric: {mean, lo, hi, n}}}}, NaN as null."""
    with Store(store_path) as store:
        data = json.loads(str(render(report_rows(store, ["a"]), "json")))
    assert data["a"]["all"]["n"] == 3
    assert set(data["a"]["all"]["ts"]) == {"mean", "lo", "hi", "n", "spread"}
    assert data["a"]["L2"]["ts"]["lo"] is None  # one episode: no interval


def test_markdown_gives_the_papers_two_tables(store_path):
    """A main table (a line per run, TCR and TS per level) and a stage diagnostic table."""
    with Store(store_path) as store:
        text = str(render(report_rows(store, ["a", "b"]), "markdown"))
    main, stages = (part.strip().splitlines() for part in text.split("### ")[1:])
    assert main[2] == "| run | L1 TCR | L1 TS | L2 TCR | L2 TS | all TCR | all TS |"
    assert main[3].startswith("|---|---:|") and [line[:4] for line in main[4:]] == ["| a ", "| b "]
    assert stages[2].startswith("| run | group | n | S1 | S2 | S3 | S4 | STEPS | HS |")
    assert len(stages) == 4 + 6  # title, blank, header, alignment, then 2 runs × 3 groups


def test_the_main_table_holds_the_same_numbers_as_the_rows(store_path):
    """Pivoting moves cells, never changes them: each level's TS cell is that row's TS."""
    with Store(store_path) as store:
        rows = report_rows(store, ["a"])
    table = paper_tables(rows)[0]
    header, lines = layout(table, " ")
    for row in rows:
        assert lines[0][header.index(f"{row.group} TS")] == cell(row.estimates["ts"])


def test_a_mission_with_two_type_tags_counts_in_both_types_and_once_in_all(store_path, tmp_path):
    """--group type reads the mission's tags; 'all' still counts each episode once."""
    with Store(store_path) as store:
        episodes = store.episodes("a")
    tags = {episodes[0].key: ["reporting", "inspection"], episodes[1].key: ["reporting"]}
    for episode in episodes[:2]:
        _retag(episode.record, tags[episode.key])
    with Store(store_path) as store:
        rows = {r.group: r.n for r in report_rows(store, ["a"], group="type")}
    assert rows == {"L2": 1, "inspection": 1, "reporting": 2, "all": 3}


def _retag(record, types):
    lines = record.read_text().splitlines()
    header = json.loads(lines[0])
    header["episode"]["mission"]["types"] = types
    record.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")


def test_an_unknown_run_lists_the_runs_in_the_store(store_path):
    """A misspelt run id is refused, suggesting the close one and listing all."""
    with Store(store_path) as store, pytest.raises(UnknownNameError) as info:
        report_rows(store, ["c"])
    assert "unknown run 'c'" in str(info.value) and "Available: a, b" in str(info.value)


def test_comparing_identical_runs_gives_zero_with_a_zero_interval(store_path):
    """The same seed twice: every defined paired difference is 0 with [0, 0]."""
    with Store(store_path) as store:
        rows = compare_rows(store, "a", "b")
    assert [(r.run, r.group, r.n) for r in rows][-1] == ("b − a", "all", 3)
    for estimate in rows[-1].estimates.values():
        assert estimate.n == 0 or (estimate.mean, estimate.lo, estimate.hi) == (0.0, 0.0, 0.0)


def test_comparing_runs_without_common_episodes_is_refused(tmp_path, store_path):
    """A run over other episodes has nothing to pair, and the error says so."""
    from sortie.core.records_io import SuiteHeader, write_suite
    from sortie.testing.episodes import room_rescue

    suite = tmp_path / "hand.jsonl"
    write_suite(suite, SuiteHeader(suite="hand"), [room_rescue("h/0")])
    other = tmp_path / "s.db"
    run_stored(RunRequest((str(suite),), "random", store=other, run_id="x"))
    run_stored(RunRequest((str(suite),), "random", store=other, run_id="y", seed=1))
    with Store(other) as store:
        assert compare_rows(store, "x", "y")[-1].n == 1
        store.begin_run("empty", {})
        with pytest.raises(ConfigError, match="no episodes in common"):
            compare_rows(store, "x", "empty")


def test_the_cli_report_and_compare_print_and_refuse(store_path):
    """`sortie report` prints CSV; `sortie compare` a table; an unknown run exits with 2."""
    result = runner.invoke(app, ["report", "--run", "a", "--store", str(store_path),
                                 "--format", "csv"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.output.startswith("run,group,n,tcr,")
    result = runner.invoke(app, ["compare", "a", "b", "--store", str(store_path)])
    assert result.exit_code == 0 and "b − a" in result.output
    result = runner.invoke(app, ["report", "--run", "nope", "--store", str(store_path)])
    assert result.exit_code == 2 and "Available: a, b" in result.output


def test_the_cli_report_of_a_missing_store_is_an_error(tmp_path):
    """A --store path with no file is refused rather than created empty."""
    result = runner.invoke(app, ["report", "--run", "a", "--store", str(tmp_path / "no.db")])
    assert result.exit_code == 2 and "no results store here" in result.output
    assert not (tmp_path / "no.db").exists()
