import json
from collections import Counter

import pytest
from typer.testing import CliRunner

from sortie.cli import app
from sortie.core.records import Outcome
from sortie.metrics.household import METRICS
from sortie.missions.household.facts import HouseholdFacts
from sortie.missions.household.family import HOUSEHOLD_COLUMNS
from sortie.missions.household.records import ErrorCode
from sortie.report.families.household_codes import code_counts, code_rows
from sortie.report.render import render
from sortie.report.site import write_site
from sortie.report.tables import (
    choose_columns,
    column_sources,
    family_columns,
    reading_set,
    report_rows,
)
from sortie.run.store import Store
from tests.household_records import END, done, failed, placed, store_records, task, trajectory

runner = CliRunner()
FULL = [done("open", "fridge_1"), done("pick", "apple_1"), done("put", "apple_1", "fridge_1")]
IN_FRIDGE = [{"relation": "inside", "object": "apple_1", "place": "fridge_1"}]


def records():
    """Four episodes whose metrics are known by hand (see the comments).

    short (train): a success in five rounds, one failed (E1): SR 1, TP 1, PLWSR 4/5, GC 1.
    long+logical (test): open, two failures (L3, D1), end: SR 0, TP 1/3, GC 0.
    logical (test): one failure (F2), the keypath, no end: SR 0, TP 1, GC 1 (fridge open).
    short (train): an agent error: not scored.
    """
    fridge_open = [{"relation": "open", "object": "fridge_1"}]
    return [
        trajectory(
            task(goals=IN_FRIDGE),
            [FULL[0], failed("pick", "apple_1", code=ErrorCode.E1), FULL[1], FULL[2], END],
            HouseholdFacts(ended=True, places=placed("apple_1", "inside", "fridge_1")),
            episode_id="home/short",
        ),
        trajectory(
            task(goals=IN_FRIDGE, attributes=["long", "logical"], split="test"),
            [
                FULL[0],
                failed("pick", "apple_1", code=ErrorCode.L3),
                failed("pick", "apple_1", code=ErrorCode.D1),
                END,
            ],
            outcome=Outcome.FAILURE,
            episode_id="home/long",
        ),
        trajectory(
            task(goals=fridge_open, attributes=["logical"], split="test"),
            [failed("open", "fridge", code=ErrorCode.F2), *FULL],
            HouseholdFacts(open={"fridge_1": True}),
            episode_id="home/logical",
        ),
        trajectory(
            task(),
            [FULL[0]],
            outcome=Outcome.ERROR,
            failure_reason="agent_error",
            episode_id="home/crash",
        ),
    ]


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    """A store with run 'planner' of the four hand-built household episodes."""
    path = tmp_path_factory.mktemp("household") / "s.db"
    with Store(path) as store:
        store_records(store, "planner", records())
    return path


def means(rows, group):
    """Return the row of ``group`` as {metric: mean}, with n and errors."""
    row = next(r for r in rows if r.group == group)
    return {"n": row.n, "errors": row.errors, **{c: e.mean for c, e in row.estimates.items()}}


def test_a_household_run_gets_the_emmoe_table_by_its_stored_family(store_path):
    """The store says household (though the metrics hold SR, like aerial's): SR TP SER SRR."""
    with Store(store_path) as store:
        assert family_columns(store, ["planner"]) == HOUSEHOLD_COLUMNS


def test_the_emmoe_table_has_the_hand_computed_means(store_path):
    """By hand over the three scored runs: SR 1/3, TP 7/9, SER 1/2, SRR 1/4, PLWSR .8/3, GC 2/3."""
    with Store(store_path) as store:
        rows = report_rows(store, ["planner"], group="suite")
    overall = means(rows, "all")
    assert (overall["n"], overall["errors"]) == (3, 1)
    expected = {"sr": 100 / 3, "tp": 700 / 9, "ser": 50.0, "srr": 25.0, "plwsr": 80 / 3}
    assert {c: overall[c] for c in expected} == pytest.approx(expected)
    assert overall["gc"] == pytest.approx(200 / 3)


def test_emmoes_readings_fill_tp_and_srr_by_hand(store_path):
    """--variant tp=emmoe srr=emmoe: TP (1 + 1/4 + 2/4) / 3; SRR 1 / (1 + 1 + 1) re-plans.

    short: 3 steps and end of 3 + 1; long: open, then end of 4; logical: never said end, so
    its last round (the put) is not in EMMOE's last prompt: 2 of 4. Re-plans: short's failed
    pick (a pick follows), long's first failed pick (not the second, end follows), logical's
    failed open; only short's is in a success.
    """
    variants = {"tp": "emmoe", "srr": "emmoe"}
    with Store(store_path) as store:
        emmoe = means(report_rows(store, ["planner"], group="suite", variants=variants), "all")
        both = report_rows(store, ["planner"], group="suite", columns=("srr", "srr_emmoe"))
    assert (emmoe["tp"], emmoe["srr"]) == pytest.approx((175 / 3, 100 / 3))
    assert (emmoe["sr"], emmoe["ser"]) == pytest.approx((100 / 3, 50.0))  # the same reading
    assert means(both, "all")["srr"] == 25.0
    assert means(both, "all")["srr_emmoe"] == pytest.approx(100 / 3)


@pytest.mark.parametrize(
    "variants",
    [
        {"tp": "emmoe", "srr": "emmoe", "match": "category"},
        {"match": "category", "srr": "emmoe", "tp": "emmoe"},
    ],
)
def test_emmoes_readings_and_category_matching_compose_in_either_order(variants):
    """tp=emmoe, srr=emmoe and match=category read the category columns of EMMOE's readings."""
    sources = column_sources(["sr", "tp", "ser", "srr", "plwsr", "gc"], variants)
    assert sources == {
        "sr": "sr_category",
        "tp": "tp_emmoe_category",
        "ser": "ser_category",
        "srr": "srr_emmoe_category",
        "plwsr": "plwsr_category",
        "gc": "gc",
    }


def test_the_seed_readings_of_household_are_emmoes_with_category_matching():
    """--readings seed picks tp=emmoe, srr=emmoe and match=category."""
    assert reading_set("household", "seed") == {"tp": "emmoe", "srr": "emmoe", "match": "category"}


def test_by_attribute_a_task_counts_in_each_of_its_attributes(store_path):
    """long+logical counts in long and logical; all holds each scored episode once (3)."""
    with Store(store_path) as store:
        rows = report_rows(store, ["planner"], group="attribute")
    assert [(r.group, r.n, r.errors) for r in rows] == [
        ("logical", 2, 0),
        ("long", 1, 0),
        ("short", 1, 1),
        ("all", 3, 1),
    ]
    logical = means(rows, "logical")  # long (TP 1/3, ended, 2 failed) and logical (TP 1, 1 failed)
    assert logical["tp"] == pytest.approx(200 / 3)
    assert (logical["ser"], logical["srr"]) == (0.0, 0.0)  # 0 of 1 ended; 0 of 3 failures


def test_by_split_episodes_fall_in_train_or_test(store_path):
    """The short tasks are train (one scored, one errored), the other two test."""
    with Store(store_path) as store:
        rows = report_rows(store, ["planner"], group="split")
    assert [(r.group, r.n, r.errors) for r in rows] == [
        ("test", 2, 0),
        ("train", 1, 1),
        ("all", 3, 1),
    ]


def test_the_error_codes_are_split_by_successful_and_failed_runs(store_path):
    """E1 in the success; L3, D1 and F2 in the failures; the errored run in neither."""
    with Store(store_path) as store:
        counts = code_counts(store, ["planner"])["planner"]
    assert counts.successful == Counter(E1=1) and counts.failed == Counter(L3=1, D1=1, F2=1)
    assert counts.runs == Counter(successful=1, failed=2)
    header, lines = code_rows({"planner": counts})
    assert len(lines) == len(ErrorCode)
    assert header[-3:] == ["successful runs", "failed runs", "all runs"]
    assert lines[2] == ["planner", "L3", "logic", "container closed", "0", "1", "1"]


def test_columns_all_lists_every_household_metric_and_the_ratios(store_path):
    """--columns all: the EMMOE table's six first, then every other household metric."""
    with Store(store_path) as store:
        columns = choose_columns(store, ["planner"], "all")
    assert columns[:6] == HOUSEHOLD_COLUMNS
    assert set(columns) == {*HOUSEHOLD_COLUMNS, *METRICS}


def test_the_json_report_carries_the_metrics_and_the_error_codes_in_lower_case(store_path):
    """With --format json each group has sr … gc; the run has error_codes l1 … e3."""
    result = runner.invoke(
        app,
        ["report", "--run", "planner", "--store", str(store_path), "--format", "json"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)["planner"]
    assert set(HOUSEHOLD_COLUMNS) <= set(data["all"]) and data["all"]["srr"]["mean"] == 25.0
    codes = data["error_codes"]
    assert set(codes) == {"runs", *(code.value.lower() for code in ErrorCode)}
    assert codes["e1"] == {
        "code": "E1",
        "kind": "execution",
        "meaning": "skill failed three times",
        "successful": 1,
        "failed": 0,
    }


def test_the_markdown_report_by_attribute_says_how_tasks_are_counted(store_path):
    """--by attribute: the EMMOE table, the note under it, then the error-code table."""
    result = runner.invoke(
        app,
        [
            "report",
            "--run",
            "planner",
            "--store",
            str(store_path),
            "--format",
            "markdown",
            "--by",
            "attribute",
        ],
    )
    assert result.exit_code == 0, result.output
    text = result.output
    assert text.startswith("### EMMOE table") and "| SR | TP | SER | SRR | PLWSR | GC |" in text
    note = text.index("counts in each of its attribute groups")
    assert text.index("| logical |") < note < text.index("### Executor error codes")


def test_an_undefined_ratio_is_shown_as_a_dash_not_a_number(tmp_path):
    """A run with no failed subtask has SRR undefined: '–' in the table, null in JSON."""
    with Store(tmp_path / "s.db") as store:
        store_records(store, "clean", [trajectory(task(), [*FULL, END], episode_id="home/clean")])
        rows = report_rows(store, ["clean"])
    assert "| – |" in str(render(rows, "markdown"))
    assert json.loads(str(render(rows, "json")))["clean"]["all"]["srr"]["mean"] is None


def test_without_its_record_a_household_run_is_known_by_its_store(tmp_path):
    """The record file is gone: the store still names the run's family (nothing is guessed)."""
    with Store(tmp_path / "s.db") as store:
        store_records(store, "gone", [trajectory(task(), [*FULL, END], episode_id="home/gone")])
        store.episodes("gone")[0].record.unlink()
        assert family_columns(store, ["gone"]) == HOUSEHOLD_COLUMNS


def test_the_html_index_of_a_household_run_has_the_emmoe_and_error_code_tables(
    store_path, tmp_path
):
    """The index holds the EMMOE table, then the error codes, and each episode's SR and TP."""
    with Store(store_path) as store:
        index = write_site(store, ["planner"], tmp_path / "site", "attribute")
    text = index.read_text()
    assert text.index("EMMOE table") < text.index("Executor error codes")
    assert "<th>TP</th>" in text and "skill failed three times" in text
