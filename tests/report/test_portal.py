"""The reports' front page: every run on one sortable line, with its headline and intervals."""

import dataclasses
import re

from sortie.report.descriptor import REPORTS, report_of
from sortie.report.render import cell
from sortie.report.runs import run_table
from sortie.report.site import PORTAL_COLUMNS, Report, _portal_row
from sortie.report.tables import report_rows
from sortie.run.store import Store


def rows(portal) -> list[list[str]]:
    """Return the cells (tags stripped) of the front page's run table."""
    text = portal.read_text(encoding="utf-8")
    body = text[text.index("<tbody>") : text.index("</tbody>")]
    return [
        [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.DOTALL)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.DOTALL)
    ]


def test_every_run_has_a_line_with_its_counts_and_headline(portal, store_path):
    """One line per run: agent, episodes, runs, errors, and TCR and TS as report prints them."""
    lines = {line[0]: line for line in rows(portal)}
    with Store(store_path) as store:
        assert sorted(lines) == sorted(store.runs())
        overall = report_rows(store, ["good"], "suite", ("tcr", "ts"))[-1]
        errors = sum(e.outcome == "error" for e in store.episodes("failing"))
    good = lines["good"]
    assert (good[1], good[3], good[6], good[7], good[8]) == ("rescue", "oracle", "3", "3", "0")
    assert good[9] == f"TCR {cell(overall.estimates['tcr'], chr(10), compact=True)}"
    assert good[10].startswith("TS ")
    assert lines["failing"][8] == str(errors) and errors > 0


def test_runs_link_to_their_report_and_the_side_by_side_pages_are_listed(portal):
    """Each run's name opens its report; the comparisons of the report are listed under it."""
    text = portal.read_text(encoding="utf-8")
    assert text.count("href='report/index.html'") >= 1 or 'href="report/index.html"' in text
    assert "side by side</a>" in text and "compare/" in text
    assert "class='sortable'" in text


def test_a_family_headed_by_one_metric_leaves_the_second_headline_empty(store_path, tmp_path):
    """A headline of one metric (a default for a one-metric family) still fills the line."""
    one = dataclasses.replace(report_of("rescue"), headline=("tcr",))
    report = Report("rescue", tmp_path / "rescue" / "index.html", ("good",))
    with Store(store_path) as store, REPORTS.override("rescue", one):
        summary = next(row for row in run_table(store) if row["run"] == "good")
        line = _portal_row(store, report, summary, tmp_path)
    assert len(line) == len(PORTAL_COLUMNS)
    assert str(line[9]).startswith("TCR ") and line[10] == "–"


def test_a_run_whose_stored_config_does_not_read_is_listed_bare(tmp_path):
    """An old row no reader knows (no family anywhere) shows as '?', and the others still list."""
    from tests.conftest import run_config

    with Store(tmp_path / "s.db") as store:
        store.begin_run("new", run_config())
        store.begin_run("old", run_config())
        store._db.execute("UPDATE runs SET config = '{}', family = NULL WHERE run_id = 'old'")
        table = {row["run"]: row for row in run_table(store)}
    assert table["old"]["agent"] == "?" and table["old"]["family"] == "?"
    assert table["new"]["agent"] == "random"
