import math
import sqlite3

import pytest

from sortie.core.errors import ConfigError
from sortie.core.records_io import read_trajectory
from sortie.metrics.rescue import score_rescue
from sortie.run import store as store_module
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.jobs import JobResult
from sortie.run.store import STORE_SCHEMA_VERSION, Store
from tests.conftest import run_stored


def test_a_stored_episode_reads_back_as_its_record_says(tmp_path, smoke3):
    """Rows, metrics (NaN included) and stages read back as the record says."""
    request = RunRequest((str(smoke3),), "random", store=tmp_path / "s.db", run_id="r")
    episodes = run_stored(request)
    assert [e.key for e in episodes] == [f"rescue-smoke-v1/rescue-smoke-v1/000{i}/0"
                                         for i in range(3)]  # fmt: skip
    with Store(tmp_path / "s.db") as store:
        for episode in episodes:
            trajectory = read_trajectory(episode.record)
            assert episode.record.is_relative_to(tmp_path / "r")
            assert (episode.outcome, episode.steps) == (trajectory.footer.outcome,
                                                        trajectory.footer.steps)  # fmt: skip
            assert episode.seed == trajectory.header.seed
            assert episode.level == trajectory.header.episode.level
            assert store.stages("r", episode.key) == trajectory.footer.stages
            assert _same(episode.metrics, score_rescue(trajectory))


def _same(a: dict[str, float], b: dict[str, float]) -> bool:
    return a.keys() == b.keys() and all(a[k] == b[k] or math.isnan(a[k]) and math.isnan(b[k])
                                        for k in a)  # fmt: skip


def test_a_failed_write_leaves_nothing_of_the_episode(tmp_path, smoke3, monkeypatch):
    """An error while writing an episode's stages rolls back its row and metrics too."""
    request = RunRequest((str(smoke3),), "random", store=tmp_path / "s.db", run_id="r")
    monkeypatch.setattr(store_module, "_stage_row", lambda stage: 1 / 0)
    with Store(request.store) as store, pytest.raises(ZeroDivisionError):
        execute(plan_run(request, store), request, store)
    with sqlite3.connect(tmp_path / "s.db") as db:
        for table in ("episodes", "metrics", "stages"):
            assert db.execute(f"SELECT COUNT(*) FROM {table}").fetchone() == (0,)


def test_a_reader_during_a_run_sees_whole_episodes_only(tmp_path, smoke3):
    """Another connection, reading after each commit, never sees a row without its metrics."""
    request = RunRequest((str(smoke3),), "random", store=tmp_path / "s.db", run_id="r",
                         workers=2)  # fmt: skip
    seen = []

    def read(result: JobResult) -> None:
        with sqlite3.connect(tmp_path / "s.db") as db:
            counts = dict(db.execute("SELECT e.key, COUNT(m.name) FROM episodes e LEFT JOIN "
                                     "metrics m USING (run_id, key) GROUP BY e.key"))  # fmt: skip
            orphans = db.execute("SELECT COUNT(*) FROM metrics WHERE key NOT IN "
                                 "(SELECT key FROM episodes)").fetchone()[0]  # fmt: skip
        seen.append(len(counts))
        assert orphans == 0 and len(set(counts.values())) == 1 and 0 not in counts.values()

    with Store(request.store) as store:
        execute(plan_run(request, store), request, store, on_result=read)
    assert seen == [1, 2, 3]


def test_a_store_from_a_newer_sortie_is_refused(tmp_path):
    """A newer schema version gives an error naming the file and both versions."""
    path = tmp_path / "s.db"
    Store(path).close()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version=99")
    with pytest.raises(ConfigError) as info:
        Store(path)
    assert str(path) in str(info.value)
    assert f"schema version 99 is newer than this sortie reads ({STORE_SCHEMA_VERSION})" in str(
        info.value)


def test_a_file_that_is_not_a_store_is_named(tmp_path):
    """A file that is not SQLite is a clear error, not a traceback."""
    path = tmp_path / "s.db"
    path.write_text("hello, this is not a database" * 10)
    with pytest.raises(ConfigError, match=r"s.db: not a sortie results store"):
        Store(path)


def test_a_run_id_with_another_config_is_refused(tmp_path):
    """Resuming a run id with another seed names the setting and both values."""
    with Store(tmp_path / "s.db") as store:
        store.begin_run("r", {"seed": 0, "clock": "sim"})
        store.begin_run("r", {"seed": 0, "clock": "sim"})
        with pytest.raises(ConfigError, match=r"run 'r' .*seed: stored 0, given 1"):
            store.begin_run("r", {"seed": 1, "clock": "sim"})
        assert store.runs() == ["r"]
