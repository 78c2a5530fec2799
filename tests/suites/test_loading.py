import pytest

import sortie
from sortie.core.errors import ConfigError, UnknownNameError
from sortie.core.records_io import SuiteHeader, write_suite
from sortie.generation.suites import SUITES
from sortie.missions.loading import load_suite
from sortie.suites import suite_names
from sortie.testing.episodes import room_rescue


def test_packaged_suites_are_the_planned_ones():
    """Every suite the generator plans is packaged, and nothing else is."""
    assert suite_names() == sorted(SUITES)


def test_a_packaged_suite_loads_by_name():
    """load_suite reads a packaged suite by its name; the header names it."""
    suite = load_suite("rescue-smoke-v2")
    assert suite.header.suite == "rescue-smoke-v2" and len(suite.episodes) == 10


def test_a_suite_file_loads_by_path(tmp_path):
    """load_suite reads a suite file given by its path, as a str or a Path."""
    path = tmp_path / "hand.jsonl"
    write_suite(path, SuiteHeader(suite="hand"), [room_rescue("hand/0")])
    for name in (path, str(path)):
        assert [e.episode_id for e in load_suite(name).episodes] == ["hand/0"]


def test_a_missing_file_is_named(tmp_path):
    """A path that holds no file fails saying so, not as an unknown packaged name."""
    with pytest.raises(ConfigError, match="no such file"):
        load_suite(str(tmp_path / "gone.jsonl"))


def test_an_unknown_name_suggests_and_lists():
    """A misspelt name fails with a did-you-mean and the packaged names."""
    with pytest.raises(UnknownNameError, match="Did you mean 'aerial-smoke-v1'.*rescue-l1-v2"):
        load_suite("aerial-smoke-v2")


def test_load_suite_is_public():
    """The top-level sortie package exports load_suite."""
    assert sortie.load_suite is load_suite
