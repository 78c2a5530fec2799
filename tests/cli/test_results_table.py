import math
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from sortie.cli.run_console import results_table
from sortie.missions.registry import FAMILIES
from sortie.run.store import StoredEpisode


def stored(key, level, outcome, reason=None, ts=50.0, error=0.0):
    """Return a stored rescue episode with the given outcome and a TS of ``ts``."""
    metrics = {"tcr": float(outcome == "success"), "ts": ts, "error": error}
    return StoredEpisode(
        key, key, "s", level, 0, 0, outcome, reason, 10, Path("r.jsonl"), 1.0, 1, None, metrics
    )


RESCUE = FAMILIES.get("rescue").columns


def text(table):
    console = Console(width=200, record=True)
    console.print(table)
    return console.export_text()


def lines_by_level(table):
    """Return each body line of the rendered table as its cells, by level."""
    rows = [line.strip("│ ").split("│") for line in text(table).splitlines() if "│" in line]
    cells = [[c.strip() for c in row] for row in rows]
    return {row[0]: row for row in cells}


def test_the_summary_counts_outcomes_and_leaves_errors_out_of_the_means():
    """Two scored L1 episodes (TS 40, 60) and an errored one: TS 50 over 2, error counted."""
    episodes = [
        stored("a", "L1", "success", ts=60.0),
        stored("b", "L1", "failure", ts=40.0),
        stored("c", "L1", "failure", "backend_error", ts=math.nan, error=1.0),
    ]
    lines = lines_by_level(results_table(episodes, "t", RESCUE))
    level, episodes, runs, success, failure, error, tcr, ts = lines["L1"][:8]
    assert (episodes, runs, success, failure, error) == ("3", "3", "1", "1", "1")
    assert ts.startswith("50.0 ") and tcr.startswith("50.0 ")


def test_an_old_store_row_is_recognised_as_errored_by_its_failure_reason():
    """A row from before the error mark (a TS of 12.9, no 'error' metric) is not averaged."""
    old = stored("c", "L2", "failure", "agent_error", ts=12.9)
    del old.metrics["error"]
    lines = lines_by_level(results_table([stored("a", "L2", "failure", ts=30.0), old], "t", RESCUE))
    assert lines["L2"][5] == "1" and lines["L2"][7] == "30"


def test_each_mean_carries_its_bootstrap_interval():
    """Different values give a ``mean lo–hi`` cell; a single episode gives the mean alone."""
    episodes = [
        stored("a", "L1", "failure", ts=10.0),
        stored("b", "L1", "failure", ts=30.0),
        stored("c", "L2", "failure", ts=70.0),
    ]
    lines = lines_by_level(results_table(episodes, "t", RESCUE))
    assert lines["L1"][7] == "20.0 10.0–30.0" and lines["L2"][7] == "70"


def test_household_episodes_get_the_emmoe_columns():
    """The household family's columns: SR, TP, SER, SRR, PLWSR, GC (ratios from their parts)."""
    episode = stored("a", "L1", "success")
    episode.metrics.update({"sr": 1.0, "tp": 0.5, "ended": 1.0, "failed_subtasks": 0.0})
    household = FAMILIES.get("household").columns
    table = results_table([episode], "t", household)
    header = next(line for line in text(table).splitlines() if "┃" in line)
    names = [cell.strip() for cell in header.split("┃") if cell.strip()]
    assert names[-6:] == ["SR", "TP", "SER", "SRR", "PLWSR", "GC"]
    assert lines_by_level(table)["L1"][6:9] == ["100", "50", "100"]


def test_repeats_count_as_runs_of_one_episode_and_the_family_names_its_levels():
    """Episode a run twice and b once: 2 episodes, 3 runs; household heads 'attributes'."""
    episodes = [
        replace(stored(key, "long", outcome), episode_id=name)
        for key, name, outcome in (
            ("s/a/0", "a", "success"),
            ("s/a/1", "a", "failure"),
            ("s/b/0", "b", "failure"),
        )
    ]
    household = FAMILIES.get("household")
    table = results_table(episodes, "t", RESCUE, household.level_name)
    header = next(line for line in text(table).splitlines() if "┃" in line)
    assert [c.strip() for c in header.split("┃") if c.strip()][:3] == [
        "attributes",
        "episodes",
        "runs",
    ]
    assert lines_by_level(table)["long"][1:3] == ["2", "3"]


def printed(episodes, width, wide=False):
    """Return the run summary as ``sortie run`` prints it in a terminal ``width`` wide."""
    from sortie.cli.run_console import print_results
    from sortie.run.batch import Plan

    class _Store:
        def episodes(self, run_id):
            return episodes

    console = Console(width=width, record=True)
    plan = Plan("r", ("s",), Path("."), [], [], "rescue")
    print_results(_Store(), plan, "agent", console, wide)  # type: ignore[arg-type]
    return console.export_text()


def test_the_summary_fits_an_80_or_120_column_terminal_without_cutting_a_number():
    """Five levels with intervals: every mean and interval shows whole at 80 and 120 columns."""
    episodes = [
        stored(f"{level}{i}", level, "success", ts=ts)
        for level in ("L1", "L2", "L3", "L4", "L5")
        for i, ts in enumerate((41.25, 63.75, 77.5))
    ]
    for width in (80, 120):
        shown = printed(episodes, width)
        assert "…" not in shown
        assert max(len(line) for line in shown.splitlines()) <= width
        assert "60.8" in shown and "41.2–77.5" in shown  # the TS mean and its interval, whole


def test_a_wide_terminal_or_wide_asks_for_a_row_a_level():
    """At 200 columns, or with --wide, each level is one row (its name first on the line)."""
    episodes = [stored(f"L1{i}", "L1", "success", ts=ts) for i, ts in enumerate((40.0, 60.0))]
    for shown in (printed(episodes, 200), printed(episodes, 60, wide=True)):
        assert any(line.strip("│ ").startswith("L1") for line in shown.splitlines())


def test_a_report_table_wider_than_the_terminal_keeps_every_number_whole():
    """Eight interval columns on a 40-column console: each interval prints unfolded."""
    from rich.table import Table

    from sortie.cli.common import print_whole

    table = Table()
    for k in range(8):
        table.add_column(f"run{k} TS", justify="right", overflow="fold")
    table.add_row(*["60.8\n41.2–77.5"] * 8)
    console = Console(width=40, record=True)
    print_whole(console, table)
    assert console.export_text().count("41.2–77.5") == 8
    assert console.width == 40  # the terminal's width is given back
