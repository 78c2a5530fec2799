import csv
import io
import json
import math

import pytest
from typer.testing import CliRunner

from sortie.cli import app
from sortie.core.errors import ConfigError, UnknownNameError
from sortie.missions.family import Reading
from sortie.missions.registry import FAMILIES
from sortie.report.render import cell, layout, paper_tables, render
from sortie.report.tables import (
    choose_columns,
    column_sources,
    compare_rows,
    parse_variants,
    report_rows,
)
from sortie.run.batch import RunRequest
from sortie.run.store import Store
from tests.conftest import run_config, run_stored

runner = CliRunner()
RESCUE_COLUMNS = FAMILIES.get("rescue").columns


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
        ("a", "L1", 2),
        ("a", "L2", 1),
        ("a", "all", 3),
        ("b", "L1", 2),
        ("b", "L2", 1),
        ("b", "all", 3),
    ]
    assert list(rows[0].estimates) == list(RESCUE_COLUMNS)


def test_report_groups_by_world_from_the_record_headers(store_path):
    """--group world reads each record's header: two rooms and one suburb."""
    with Store(store_path) as store:
        rows = report_rows(store, ["a"], group="world")
    assert [(r.group, r.n) for r in rows] == [("flexible_room", 2), ("suburb", 1), ("all", 3)]


def test_the_csv_format_has_a_header_and_a_row_per_group(store_path):
    """CSV parses: run, group, episodes, runs, errors, then mean/lo/hi per metric."""
    with Store(store_path) as store:
        text = render(report_rows(store, ["a"]), "csv")
    table = list(csv.DictReader(io.StringIO(str(text))))
    assert [row["group"] for row in table] == ["L1", "L2", "all"]
    header = ["run", "group", "episodes", "runs", "errors", "tcr", "tcr_lo", "tcr_hi"]
    assert list(table[0])[:8] == header


def test_the_json_format_nests_run_group_metric(store_path):
    """JSON loads as {run: {group: {metric: {mean, lo, hi, n}}}}, NaN as null."""
    with Store(store_path) as store:
        data = json.loads(str(render(report_rows(store, ["a"]), "json")))
    assert data["a"]["all"]["episodes"] == 3 and data["a"]["all"]["errors"] == 0
    assert data["a"]["all"]["runs"] == 3
    assert set(data["a"]["all"]["ts"]) == {"mean", "lo", "hi", "n", "spread"}
    assert data["a"]["L2"]["ts"]["lo"] is None  # one episode: no interval


def test_markdown_gives_the_papers_two_tables(store_path):
    """A main table (a line per run, TCR and TS per level) and a stage diagnostic table."""
    with Store(store_path) as store:
        text = str(render(report_rows(store, ["a", "b"]), "markdown"))
    main, stages = (part.strip().splitlines() for part in text.split("### ")[1:])
    counts = ("L1 n", "L1 TCR", "L1 TS", "L2 n", "L2 TCR", "L2 TS", "all n", "all TCR", "all TS")
    assert main[2] == "| run | " + " | ".join(counts) + " |"
    assert main[3].startswith("|---|---:|") and [line[:4] for line in main[4:]] == ["| a ", "| b "]
    header = "| run | group | episodes | runs | errors | S1 | S2 | S3 | S4 | STEPS | HS |"
    assert stages[2].startswith(header)
    assert len(stages) == 4 + 6 + 2  # title, blank, header, alignment, 2 runs × 3 groups, note
    assert stages[-1].startswith("HS is the path's closeness to the expert's")


def test_the_main_table_counts_each_runs_episodes_and_puts_all_last(tmp_path, smoke3):
    """A 1-episode run beside a 3-episode one: each group's n per run, the all group last."""
    path = tmp_path / "s.db"
    run_stored(RunRequest((str(smoke3),), "random", store=path, run_id="one", limit=1))
    run_stored(RunRequest((str(smoke3),), "random", store=path, run_id="three"))
    with Store(path) as store:
        rows = report_rows(store, ["one", "three"])
    header, lines = layout(paper_tables(rows)[0], " ", by_run=True)
    counts = {
        line[0]: (line[header.index("one n")], line[header.index("three n")]) for line in lines
    }
    assert [line[0] for line in lines][-1] == "all" and counts["all"] == ("1", "3")


def test_the_main_table_holds_the_same_numbers_as_the_rows(store_path):
    """Pivoting moves cells, never changes them: each level's TS cell is that row's TS."""
    with Store(store_path) as store:
        rows = report_rows(store, ["a"])
    table = paper_tables(rows)[0]
    header, lines = layout(table, " ")
    for row in rows:
        assert lines[0][header.index(f"{row.group} TS")] == cell(row.estimates["ts"])


def test_a_mission_with_two_type_tags_counts_in_both_types_and_once_in_all(store_path, tmp_path):
    """A family's own grouping gives an episode several keys; 'all' still counts it once."""
    import dataclasses

    with Store(store_path) as store:
        episodes = store.episodes("a")
    tags = {episodes[0].key: ["reporting", "inspection"], episodes[1].key: ["reporting"]}
    for episode in episodes[:2]:
        _retag(episode.record, tags[episode.key])
    rescue = FAMILIES.get("rescue")
    tagged = {"type": lambda spec: spec.mission.get("types") or [spec.level]}
    with (
        FAMILIES.override("rescue", dataclasses.replace(rescue, groupings=tagged)),
        Store(store_path) as store,
    ):
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
        store.begin_run("empty", run_config())
        with pytest.raises(ConfigError, match="no episodes in common"):
            compare_rows(store, "x", "empty")


def test_the_cli_report_and_compare_print_and_refuse(store_path):
    """`sortie report` prints CSV; `sortie compare` a table; an unknown run exits with 2."""
    result = runner.invoke(
        app, ["report", "--run", "a", "--store", str(store_path), "--format", "csv"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("run,group,episodes,runs,errors,tcr,")
    result = runner.invoke(app, ["compare", "a", "b", "--store", str(store_path)])
    assert result.exit_code == 0 and "b − a" in result.output
    result = runner.invoke(app, ["report", "--run", "nope", "--store", str(store_path)])
    assert result.exit_code == 2 and "Available: a, b" in result.output


def test_the_cli_report_of_a_missing_store_is_an_error(tmp_path):
    """A --store path with no file is refused rather than created empty."""
    result = runner.invoke(app, ["report", "--run", "a", "--store", str(tmp_path / "no.db")])
    assert result.exit_code == 2 and "no results store here" in result.output
    assert not (tmp_path / "no.db").exists()


@pytest.fixture(scope="module")
def errored_store(tmp_path_factory):
    """A run 'mixed' of two near-casualty rooms: a 2-step budget fails, the other errors.

    The saying agent raises at its third step: the 0.4 s episode ends after two, the 120 s
    one ends in an agent_error. Run 'early' raises at the first step of the 120 s room.
    """
    from sortie.agents import base
    from sortie.core.records_io import SuiteHeader, write_suite
    from sortie.testing.episodes import room_rescue
    from sortie.testing.saying import SayingAgent

    folder = tmp_path_factory.mktemp("errored")
    suite = folder / "mixed.jsonl"
    write_suite(
        suite,
        SuiteHeader(suite="mixed"),
        [room_rescue("m/short", 0.4, (-1.0, -0.5)), room_rescue("m/long", 120.0, (-1.0, -0.5))],
    )
    path = folder / "s.db"
    with base.AGENTS.override("saying", SayingAgent):
        run_stored(
            RunRequest(
                (str(suite),), "saying", agent_args={"fail_at": "3"}, store=path, run_id="mixed"
            )
        )
        run_stored(
            RunRequest(
                (str(suite),), "saying", agent_args={"fail_at": "1"}, store=path, run_id="early"
            )
        )
    return path


def test_errored_episodes_are_left_out_of_the_means_and_counted(errored_store):
    """The agent_error episode is not averaged in: 'all' holds the failed one and 1 error."""
    with Store(errored_store) as store:
        episodes = {e.episode_id: e for e in store.episodes("mixed")}
        rows = report_rows(store, ["mixed"])
    errored = episodes["m/long"]
    assert errored.failure_reason == "agent_error"
    assert errored.metrics["error"] == 1.0 and math.isnan(errored.metrics["ts"])
    overall = rows[-1]
    assert (overall.group, overall.n, overall.errors) == ("all", 1, 1)
    assert overall.estimates["ts"].mean == pytest.approx(episodes["m/short"].metrics["ts"])


def test_an_error_before_the_first_step_scores_nothing(errored_store):
    """Raising at step 1: no TS or HS (once 12.9 and 90.3), and no scored episode in 'all'."""
    with Store(errored_store) as store:
        rows = report_rows(store, ["early"])
        metrics = [e.metrics for e in store.episodes("early")]
    assert all(m["error"] == 1.0 and math.isnan(m["ts"]) and math.isnan(m["hs"]) for m in metrics)
    assert (rows[-1].n, rows[-1].errors) == (0, 2) and math.isnan(rows[-1].estimates["ts"].mean)


def test_the_ts_variant_fills_ts_with_the_code_scores(store_path):
    """--variant ts=rescuebench-code: each TS cell is the mean of the episodes' ts_code."""
    with Store(store_path) as store:
        variants = {"ts": "rescuebench-code"}
        code = report_rows(store, ["a"], variants=variants)[-1].estimates["ts"]
        expected = [e.metrics["ts_code"] for e in store.episodes("a")]
    assert code.mean == pytest.approx(sum(expected) / len(expected))


def test_an_unknown_ts_variant_is_refused_with_the_choices(store_path):
    """A misspelt variant names both allowed ones; a misspelt reading suggests the near one."""
    with Store(store_path) as store, pytest.raises(ConfigError, match="paper, rescuebench-code"):
        report_rows(store, ["a"], variants={"ts": "code"})
    with Store(store_path) as store, pytest.raises(ConfigError, match="Did you mean 'tp'"):
        report_rows(store, ["a"], variants={"tpp": "emmoe"})
    with pytest.raises(ConfigError, match="NAME=VARIANT"):
        parse_variants(["tp"])


def test_columns_all_holds_every_metric_sortie_computes(store_path):
    """--columns all: the family's table first, then nDTW, SDTW, SPL, movement effectiveness..."""
    with Store(store_path) as store:
        columns = choose_columns(store, ["a"], "all")
    assert columns[: len(RESCUE_COLUMNS)] == RESCUE_COLUMNS
    assert {"ndtw", "sdtw", "spl", "movement_effectiveness", "ts_code"} <= set(columns)
    assert "error" not in columns


def test_an_unknown_column_is_refused_listing_those_held(store_path):
    """A metric no episode holds is an error that lists the available ones."""
    with Store(store_path) as store, pytest.raises(ConfigError, match="unknown metric ndtww"):
        choose_columns(store, ["a"], "ts,ndtww")


def test_many_columns_are_split_into_tables_of_eight(store_path):
    """Every metric at once renders as several tables, none wider than eight metrics."""
    with Store(store_path) as store:
        rows = report_rows(store, ["a"], columns=choose_columns(store, ["a"], "all"))
    tables = paper_tables(rows)
    assert len(tables) > 1 and all(len(t.columns) <= 8 for t in tables)
    assert [c for t in tables for c in t.columns] == list(rows[0].estimates)


def test_the_cli_report_shows_chosen_columns_and_variant(store_path):
    """`--columns ndtw,spl` gives those columns; `--ts-variant` is named in the title."""
    result = runner.invoke(
        app,
        [
            "report",
            "--run",
            "a",
            "--store",
            str(store_path),
            "--format",
            "csv",
            "--columns",
            "ndtw,spl",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == "run,group,episodes,runs,errors," + ",".join(
        f"{c}{p}" for c in ("ndtw", "spl") for p in ("", "_lo", "_hi")
    )
    for option in (["--variant", "ts=rescuebench-code"], ["--ts-variant", "rescuebench-code"]):
        result = runner.invoke(app, ["report", "--run", "a", "--store", str(store_path), *option])
        assert result.exit_code == 0 and "TS: rescuebench-code" in result.output


def test_a_human_reference_replaces_the_path_metrics_and_is_named(tmp_path, smoke3):
    """Against its own paths a run's HS and nDTW are 1; against the expert's they are lower."""
    path = tmp_path / "s.db"
    run_stored(RunRequest((str(smoke3),), "oracle", store=path, run_id="person"))
    columns = ("hs", "ndtw")
    with Store(path) as store:
        own = report_rows(store, ["person"], columns=columns, reference="human:person")[-1]
        expert = report_rows(store, ["person"], columns=columns)[-1]
    assert [own.estimates[c].mean for c in columns] == pytest.approx([100.0, 100.0])
    assert all(expert.estimates[c].mean < 100.0 for c in columns)
    result = runner.invoke(
        app, ["report", "--run", "person", "--store", str(path), "--reference", "human:person"]
    )
    assert result.exit_code == 0 and "reference paths: human:person" in result.output


def test_a_reference_that_is_not_a_human_run_is_refused(store_path):
    """A reference of another form, or a run that is not stored, is a clear error."""
    with Store(store_path) as store:
        with pytest.raises(ConfigError, match="expected human:RUN_ID"):
            report_rows(store, ["a"], reference="expert:a")
        with pytest.raises(ConfigError, match="'ghost' is not in"):
            report_rows(store, ["a"], reference="human:ghost")


def test_readings_seed_reads_every_metric_as_the_seed_code_does(store_path):
    """--readings seed gives the TS of the seed variants given one by one, named in the title."""

    def ts_cells(*options):
        args = ["report", "--run", "a", "--store", str(store_path), "--format", "json"]
        result = runner.invoke(app, [*args, *options])
        assert result.exit_code == 0, result.output
        run = json.loads(result.output)["a"]
        return run.pop("readings"), [group["ts"]["mean"] for group in run.values()]

    seed = ts_cells("--readings", "seed")
    code = ts_cells("--variant", "ts=rescuebench-code-placement", "--variant", "sdtw=r4r")
    assert seed == code and seed[0] == {"ts": "rescuebench-code-placement", "sdtw": "r4r"}
    assert ts_cells()[0] == {"ts": "paper", "sdtw": "sortie"} and ts_cells()[1] != seed[1]
    shown = runner.invoke(
        app, ["report", "--run", "a", "--store", str(store_path), "--readings", "seed"]
    )
    assert "readings: seed (TS: rescuebench-code-placement, SDTW: r4r)" in shown.output


def test_an_unknown_readings_set_is_refused_with_the_choices(store_path):
    """--readings paper is refused naming sortie and seed."""
    args = ["report", "--run", "a", "--store", str(store_path), "--readings", "paper"]
    result = runner.invoke(app, args)
    assert result.exit_code != 0 and "expected one of sortie, seed" in result.output


def test_a_reading_whose_seed_variant_is_not_one_of_its_own_is_refused():
    """A family declaring a seed variant it does not have fails when the reading is made."""
    with pytest.raises(ValueError, match="'code' is not one of paper"):
        Reading("ts", "paper", {"paper": {}}, "one line", seed="code")


def test_two_readings_filling_one_column_are_refused(monkeypatch):
    """Readings that both read TS another way: refused naming both, not the last one winning."""
    fake = {
        "ts": Reading("ts", "a", {"a": {}, "b": {"ts": "ts_b"}}, "one"),
        "target": Reading("target", "a", {"a": {}, "b": {"ts": "ts_c"}}, "two"),
    }
    monkeypatch.setattr("sortie.report.tables.readings", lambda: fake)
    with pytest.raises(ConfigError, match="target=b and ts=b both fill the ts column"):
        column_sources(["ts"], {"target": "b", "ts": "b"})


def test_a_clash_through_another_metric_names_both_readings(monkeypatch):
    """A reading of ts_b after one of ts to ts_b depends on their order: both are named."""
    fake = {
        "a": Reading("a", "x", {"x": {}, "y": {"ts": "ts_b"}}, "one"),
        "b": Reading("b", "x", {"x": {}, "y": {"ts_b": "ts_c"}}, "two"),
    }
    monkeypatch.setattr("sortie.report.tables.readings", lambda: fake)
    with pytest.raises(ConfigError, match="a=y and b=y both fill the ts column"):
        column_sources(["ts"], {"a": "y", "b": "y"})
