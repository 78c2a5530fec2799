"""Human references: a stored run's successful paths become the reference of HS and nDTW."""

import math

import pytest

from sortie.core.errors import ConfigError
from sortie.core.records_io import read_trajectory
from sortie.report.human_reference import human_paths, parse_reference, referenced_metrics, rescore
from sortie.run.batch import RunRequest
from sortie.run.store import Store
from tests.conftest import run_stored


@pytest.fixture(scope="module")
def runs(tmp_path_factory, smoke3):
    """Return a store with run ``ref`` (the oracle, standing in for a person) and ``rnd``."""
    store = tmp_path_factory.mktemp("ref") / "s.db"
    for agent, run_id in (("oracle", "ref"), ("random", "rnd")):
        run_stored(RunRequest((str(smoke3),), agent, store=store, run_id=run_id, limit=2))
    return store


def test_a_reference_is_named_human_colon_run_id():
    """`human:RUN` gives the run id; any other form is a clear error showing the right one."""
    assert parse_reference("human:me-l1") == "me-l1"
    with pytest.raises(ConfigError, match="expected human:RUN_ID"):
        parse_reference("oracle:me")


def test_a_run_followed_against_its_own_paths_scores_ndtw_and_hs_of_one(runs):
    """Each completed episode, measured against its own path, has nDTW 1 and both SDTWs 1."""
    with Store(runs) as store:
        metrics = referenced_metrics(store, "ref", "human:ref")
    assert len(metrics) == 2
    assert all(
        m["ndtw"] == pytest.approx(1.0)
        and m["sdtw"] == pytest.approx(1.0)
        and m["sdtw_r4r"] == pytest.approx(1.0)
        for m in metrics.values()
    )


def test_another_run_is_measured_against_the_human_paths_not_the_suites(runs):
    """Random's nDTW against the reference run's paths differs from its nDTW against the suite."""
    with Store(runs) as store:
        against_human = referenced_metrics(store, "rnd", "human:ref")
        stored = {e.key: e.metrics for e in store.episodes("rnd")}
    assert set(against_human) == set(stored)
    for key, metrics in against_human.items():
        assert 0.0 <= metrics["ndtw"] <= 1.0 and metrics["ndtw"] != stored[key]["ndtw"]


def test_paths_come_only_from_successful_episodes(runs):
    """A run with no success gives no reference: a clear error naming it."""
    with Store(runs) as store:
        assert set(human_paths(store, "ref")) == {"rescue-smoke-v2/0000", "rescue-smoke-v2/0001"}
        with pytest.raises(ConfigError, match="'rnd' has no successful episode"):
            human_paths(store, "rnd")


def test_an_episode_the_person_did_not_complete_has_no_path_metrics(runs):
    """Where the reference run has no success for an episode, HS and nDTW are NaN."""
    with Store(runs) as store:
        episode = store.episodes("rnd")[0]
    metrics = rescore(read_trajectory(episode.record), None)
    assert math.isnan(metrics["hs"]) and math.isnan(metrics["ndtw"])


def test_swapped_reference_records_are_refused_naming_the_file(runs, tmp_path):
    """Two reference records swapped on disk: an error naming the file and what differs."""
    import shutil

    copy = shutil.copytree(runs.parent, tmp_path / "copy") / runs.name
    with Store(copy) as store:
        first, second = (e.record for e in store.episodes("ref"))
    one, other = first.read_bytes(), second.read_bytes()
    first.write_bytes(other)
    second.write_bytes(one)
    with Store(copy) as store, pytest.raises(ConfigError) as error:
        human_paths(store, "ref")
    assert f"{first} is not the record of" in str(error.value)
    assert "episode 'rescue-smoke-v2/0001' (the store: 'rescue-smoke-v2/0000')" in str(error.value)
