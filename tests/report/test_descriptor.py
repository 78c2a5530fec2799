"""The report descriptors: one per shipped family, found by name, a default for the rest."""

import dataclasses

import pytest

from sortie.core.errors import UnknownNameError
from sortie.missions.registry import FAMILIES
from sortie.report.descriptor import REPORTS, Score, default_report, report_of
from sortie.report.families.household_codes import CODE_TABLE
from sortie.testing import family as pointgoal


@pytest.mark.parametrize("name", FAMILIES.names())
def test_each_shipped_family_has_its_own_report(name):
    """Every registered family ships a report descriptor of its own, not the default."""
    assert name in REPORTS and report_of(name) is REPORTS.get(name)


@pytest.mark.parametrize("name", FAMILIES.names())
def test_each_family_shows_metrics_its_scorer_gives(name):
    """The report's headline and episode columns are metrics the family's scorer returns."""
    shows = report_of(name)
    shown = {*shows.headline, *(s.metric for s in (*shows.run_scores, *shows.episode_scores))}
    assert shown <= set(FAMILIES.get(name).load_metrics())


@pytest.mark.parametrize("name", FAMILIES.names())
def test_each_paper_table_shows_columns_of_its_family(name):
    """A paper table lays out the family's own columns (else the report never picks it)."""
    columns = set(FAMILIES.get(name).columns)
    assert all(set(table.columns) <= columns for table in report_of(name).tables)


def test_a_name_that_is_no_family_is_refused_naming_it():
    with pytest.raises(UnknownNameError, match=r"no report for family 'rescu'.*'rescue'"):
        report_of("rescu")


def test_a_family_without_a_descriptor_gets_the_default_from_its_data():
    """Pointgoal brings none: its first two columns head it, its stages keep their ids."""
    with FAMILIES.override("pointgoal", pointgoal.POINTGOAL):
        shows = report_of("pointgoal")
    assert shows.headline == ("sr", "steps")
    assert shows.decay_title == "SR and STEPS per level"
    assert shows.run_scores == (Score("SR", "sr", 2), Score("STEPS", "steps", 2))
    assert shows.tables == () and shows.stages_of(None) == {} and shows.run_tables == ()


def test_the_default_headline_falls_back_to_the_scorer_metrics():
    """A family that names no columns is headed by its scorer's first two metrics."""
    bare = dataclasses.replace(pointgoal.POINTGOAL, columns=())
    assert default_report(bare).headline == ("sr", "steps")


def test_household_runs_get_the_error_code_table():
    """The executor's error codes are a table of the household family's own."""
    assert report_of("household").run_tables == (CODE_TABLE,)
    assert report_of("rescue").run_tables == report_of("aerial").run_tables == ()
