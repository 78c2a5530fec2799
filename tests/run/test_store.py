import dataclasses
import json
import math
import sqlite3
import subprocess
import sys
import threading

import pytest

from sortie.core.errors import ConfigError, ParameterError, StoreError
from sortie.core.records_io import read_trajectory
from sortie.core.run_config import PlayConfig
from sortie.metrics.rescue import score_rescue
from sortie.run import store as store_module
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.jobs import JobResult
from sortie.run.store import STORE_SCHEMA_VERSION, Store
from sortie.run.store_guard import opening_alone
from tests.conftest import SERIAL, run_config, run_stored


def test_a_stored_episode_reads_back_as_its_record_says(tmp_path, smoke3):
    """Rows, metrics (NaN included) and stages read back as the record says."""
    request = RunRequest((str(smoke3),), "random", store=tmp_path / "s.db", run_id="r")
    episodes = run_stored(request)
    assert [e.key for e in episodes] == [
        f"rescue-smoke-v2/rescue-smoke-v2/000{i}/0" for i in range(3)
    ]
    with Store(tmp_path / "s.db") as store:
        for episode in episodes:
            trajectory = read_trajectory(episode.record)
            assert episode.record.is_relative_to(tmp_path / "r")
            assert (episode.outcome, episode.steps) == (
                trajectory.footer.outcome,
                trajectory.footer.steps,
            )
            assert episode.seed == trajectory.header.seed
            assert episode.level == trajectory.header.episode.level
            assert store.stages("r", episode.key) == trajectory.footer.stages
            assert _same(episode.metrics, score_rescue(trajectory))


def _same(a: dict[str, float], b: dict[str, float]) -> bool:
    return a.keys() == b.keys() and all(
        a[k] == b[k] or math.isnan(a[k]) and math.isnan(b[k]) for k in a
    )


def test_a_failed_write_leaves_nothing_of_the_episode(tmp_path, smoke3, monkeypatch):
    """An error while writing an episode's stages rolls back its row and metrics too."""
    request = RunRequest((str(smoke3),), "random", store=tmp_path / "s.db", run_id="r")
    monkeypatch.setattr(store_module, "_stage_row", lambda stage: 1 / 0)
    with Store(request.store) as store, pytest.raises(ZeroDivisionError):
        execute(plan_run(request, store), request, store)
    with sqlite3.connect(tmp_path / "s.db") as db:
        for table in ("episodes", "metrics", "stages"):
            assert db.execute(f"SELECT COUNT(*) FROM {table}").fetchone() == (0,)


@SERIAL  # a pool of two workers (tests/conftest.py)
def test_a_reader_during_a_run_sees_whole_episodes_only(tmp_path, smoke3):
    """Another connection, reading after each commit, never sees a row without its metrics."""
    request = RunRequest((str(smoke3),), "random", store=tmp_path / "s.db", run_id="r", workers=2)
    seen = []

    def read(result: JobResult) -> None:
        with sqlite3.connect(tmp_path / "s.db") as db:
            counts = dict(
                db.execute(
                    "SELECT e.key, COUNT(m.name) FROM episodes e LEFT JOIN "
                    "metrics m USING (run_id, key) GROUP BY e.key"
                )
            )
            orphans = db.execute(
                "SELECT COUNT(*) FROM metrics WHERE key NOT IN (SELECT key FROM episodes)"
            ).fetchone()[0]
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
        info.value
    )


def test_a_file_that_is_not_a_store_is_named(tmp_path):
    """A file that is not SQLite is a clear error, not a traceback."""
    path = tmp_path / "s.db"
    path.write_text("hello, this is not a database" * 10)
    with pytest.raises(ConfigError, match=r"s.db: not a sortie results store"):
        Store(path)


def test_a_run_id_with_another_config_is_refused(tmp_path):
    """Resuming a run id with another seed names the setting and both values."""
    with Store(tmp_path / "s.db") as store:
        store.begin_run("r", run_config())
        store.begin_run("r", run_config())
        with pytest.raises(ConfigError, match=r"run 'r' .*run_seed: stored 0, given 1"):
            store.begin_run("r", run_config(run_seed=1))
        assert store.runs() == ["r"]


def test_a_full_disk_is_a_store_error_that_says_to_free_space(tmp_path, smoke3):
    """SQLite's disk-full error while storing an episode names the file and says what to do."""
    request = RunRequest((str(smoke3),), "random", store=tmp_path / "s.db", run_id="r")
    with Store(request.store) as store:
        plan = plan_run(request, store)
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        store._db.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full now
        with pytest.raises(StoreError) as info:
            execute(plan, request, store)
    message = str(info.value)
    assert str(request.store) in message and "disk is full" in message
    assert "free disk space" in message and "--run-id" in message


def test_a_full_disk_while_writing_a_record_stops_the_run_and_a_resume_completes_it(
    tmp_path, smoke3, monkeypatch
):
    """ENOSPC on the first record: the documented message; the resume leaves no .tmp behind."""
    import errno
    from pathlib import Path

    from tests.conftest import comparable

    real, failed = Path.write_bytes, []

    def full_once(self, *args, **kwargs):
        if self.name.endswith(".tmp") and not failed:
            failed.append(self)
            real(self, b"half a record")
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_bytes", full_once)
    request = RunRequest((str(smoke3),), "random", store=tmp_path / "a" / "s.db", run_id="r")
    with pytest.raises(StoreError, match=r"\.jsonl: the disk is full .*free disk space"):
        run_stored(request)
    resumed = run_stored(request)
    clean = run_stored(dataclasses.replace(request, store=tmp_path / "b" / "s.db"))
    assert comparable(resumed) == comparable(clean) and len(resumed) == 3
    assert failed and not list(tmp_path.rglob("*.tmp"))


def test_a_damaged_page_is_a_store_error_that_says_how_to_recover(tmp_path, smoke3):
    """A store whose pages were overwritten gives an error naming `sqlite3 FILE .recover`."""
    run_stored(RunRequest((str(smoke3),), "random", store=tmp_path / "s.db", run_id="r"))
    damaged = tmp_path / "damaged.db"
    data = bytearray((tmp_path / "s.db").read_bytes())
    data[4096:] = b"\xff" * (len(data) - 4096)  # every page after the first (4 KiB pages)
    damaged.write_bytes(bytes(data))
    with pytest.raises(StoreError) as info, Store(damaged) as store:
        store.episodes("r")
    assert str(damaged) in str(info.value) and "damaged" in str(info.value)
    assert f"sqlite3 {damaged} .recover" in str(info.value)


def test_an_empty_file_is_refused_and_left_alone(tmp_path):
    """A 0-byte file at the store path is refused, not silently made a new store."""
    path = tmp_path / "s.db"
    path.touch()
    with pytest.raises(ConfigError, match=r"s.db: not a sortie results store \(an empty file"):
        Store(path)
    assert path.stat().st_size == 0


def test_a_run_opening_a_store_another_is_creating_waits_for_it(tmp_path):
    """A store file another run is still creating is waited for, not refused as empty."""
    path, opened = tmp_path / "s.db", []
    with opening_alone(tmp_path):  # a first run, between SQLite making the file and writing it
        path.touch()
        second = threading.Thread(target=lambda: opened.append(_runs_of_new_store(path)))
        second.start()
        second.join(0.5)
        waited = second.is_alive()
        path.unlink()  # the first run gave up: the second creates the store itself
    second.join(10)
    assert waited
    assert opened == [[]]


def _runs_of_new_store(path):
    with Store(path) as store:
        return store.runs()


def test_three_runs_starting_together_on_one_new_store_all_run(tmp_path):
    """Three processes that open one new store at once all get it, none refuses it as empty."""
    code = (
        "import sys; from pathlib import Path; from sortie.run.store import Store; "
        "Store(Path(sys.argv[1])).close(); print('opened')"
    )
    path = tmp_path / "new" / "s.db"
    runs = [
        subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outputs = [run.communicate(timeout=60)[0] for run in runs]
    assert outputs == ["opened\n"] * 3


def test_another_programs_sqlite_database_is_refused_and_left_alone(tmp_path):
    """An SQLite file with someone else's tables is refused and gets none of ours."""
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
    with pytest.raises(ConfigError, match=r"not a sortie results store \(its tables: notes\)"):
        Store(path)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT name FROM sqlite_master").fetchall() == [("notes",)]


_HOLDER = """
import sys, time
from pathlib import Path
from sortie.core.run_config import PluginRef, RunConfig
from sortie.run.store import Store
store = Store(Path(sys.argv[1]))
agent, backend = PluginRef(name="random"), PluginRef(name="embedded")
store.begin_run("r", RunConfig(agent=agent, backend=backend, family="rescue"))
print("claimed", flush=True)
time.sleep(120)
"""


def _hold_run(path) -> subprocess.Popen:
    """Start a process that claims run 'r' in the store at ``path`` and then waits."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "claimed\n"
    return holder


def _end(holder: subprocess.Popen) -> None:
    """Kill the holding process, as a crash would, and close its pipe."""
    holder.kill()
    holder.wait(timeout=30)
    assert holder.stdout is not None
    holder.stdout.close()


def test_a_second_writer_of_a_running_run_is_refused_naming_the_first(tmp_path):
    """While one process writes run 'r', another is refused with the first one's pid."""
    holder = _hold_run(tmp_path / "s.db")
    try:
        with Store(tmp_path / "s.db") as store, pytest.raises(StoreError) as info:
            store.begin_run("r", run_config())
        assert f"run 'r' is being written by pid {holder.pid} on" in str(info.value)
    finally:
        _end(holder)


def test_the_run_of_a_killed_writer_can_be_resumed(tmp_path):
    """Once the writer of run 'r' is killed, another process may resume the run at once."""
    holder = _hold_run(tmp_path / "s.db")
    _end(holder)
    with Store(tmp_path / "s.db") as store:
        store.begin_run("r", run_config())
        assert store.runs() == ["r"]


def test_a_writer_may_begin_its_own_run_again_and_frees_it_on_close(tmp_path):
    """The claiming store may begin the run twice; once closed, another store may take it."""
    with Store(tmp_path / "s.db") as first:
        first.begin_run("r", run_config())
        first.begin_run("r", run_config())
        with Store(tmp_path / "s.db") as second, pytest.raises(StoreError):
            second.begin_run("r", run_config())
    with Store(tmp_path / "s.db") as third:
        third.begin_run("r", run_config())
    assert not list(tmp_path.glob("*.lock"))


@pytest.mark.parametrize("run_id", ["../out", "/tmp/x", ".hidden", "a\x00b", "x" * 300, ""])
def test_a_run_id_that_cannot_name_a_file_is_refused(tmp_path, run_id):
    """Run ids with path parts, NUL bytes, a leading dot or 300 characters are clear errors."""
    with Store(tmp_path / "s.db") as store:
        with pytest.raises(ParameterError, match="run id"):
            store.begin_run(run_id, run_config())
        assert store.runs() == [] and not list(tmp_path.glob("*.lock"))


def test_a_store_reached_through_a_link_shares_its_run_lock(tmp_path):
    """Two stores opened by different paths to one file cannot both write run 'r'."""
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "s.db").symlink_to(tmp_path / "s.db")
    with Store(tmp_path / "s.db") as first:
        first.begin_run("r", run_config())
        with Store(tmp_path / "b" / "s.db") as second, pytest.raises(StoreError):
            second.begin_run("r", run_config())


def test_a_lock_file_that_is_a_symlink_is_refused_and_its_target_untouched(tmp_path):
    """A planted link at <store>.r.lock is never followed: its target keeps its bytes."""
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    (tmp_path / "s.db.r.lock").symlink_to(target)
    with Store(tmp_path / "s.db") as store:
        with pytest.raises(ConfigError, match="symbolic link where a lock file belongs"):
            store.begin_run("r", run_config())
    assert target.read_text() == "keep me\n"


def test_a_run_knows_its_family_and_its_records_say_how_it_was_played(tmp_path, smoke3):
    """The store names the run's family; its config and every header hold the family settings."""
    request = RunRequest(
        (str(smoke3),),
        "random",
        store=tmp_path / "s.db",
        run_id="r",
        limit=1,
        family_settings={"triggers": "native"},
    )
    (episode,) = run_stored(request)
    with Store(tmp_path / "s.db") as store:
        assert store.run_family("r") == "rescue"
        assert store.run_config("r").settings == {"triggers": "native"}
    assert read_trajectory(episode.record).header.config.settings == {"triggers": "native"}


def test_the_stored_config_and_each_header_agree_on_every_field_they_share(tmp_path, smoke3):
    """The store row and the record header are one typed model's fields, spelt one way."""
    request = RunRequest(
        (str(smoke3),), "random", store=tmp_path / "s.db", run_id="r", limit=1, seed=5
    )
    (episode,) = run_stored(request)
    with Store(tmp_path / "s.db") as store:
        stored = store.run_config("r")
    header = read_trajectory(episode.record).header.config
    assert stored.run_seed == 5
    assert all(getattr(stored, name) == getattr(header, name) for name in PlayConfig.model_fields)


def _store_as_before_typed_configs(path) -> None:
    """Rewrite the store's rows as sortie wrote them before typed configs: ``seed``."""
    with sqlite3.connect(path) as db:
        for run_id, text in db.execute("SELECT run_id, config FROM runs").fetchall():
            old = json.loads(text)
            old["seed"] = old.pop("run_seed")
            assert "record_frames" not in old and "episodes" not in old  # defaults, left out
            db.execute(
                "UPDATE runs SET config = ? WHERE run_id = ?",
                (json.dumps(old, sort_keys=True), run_id),
            )
    db.close()


def test_a_run_stored_under_the_old_key_names_reads_and_resumes(tmp_path, smoke3):
    """A row naming the run seed ``seed`` reads as ``run_seed`` and its run resumes."""
    request = RunRequest(
        (str(smoke3),), "random", store=tmp_path / "s.db", run_id="r", limit=1, seed=3
    )
    run_stored(request)
    _store_as_before_typed_configs(tmp_path / "s.db")
    with Store(tmp_path / "s.db") as store:
        assert store.run_config("r").run_seed == 3
        assert plan_run(request, store).todo == []


def test_a_run_stored_under_the_old_key_names_refuses_another_seed(tmp_path, smoke3):
    """Resuming an old row with another seed is still refused, naming the field and both values."""
    request = RunRequest(
        (str(smoke3),), "random", store=tmp_path / "s.db", run_id="r", limit=1, seed=3
    )
    run_stored(request)
    _store_as_before_typed_configs(tmp_path / "s.db")
    with Store(tmp_path / "s.db") as store:
        with pytest.raises(ConfigError, match=r"run_seed: stored 3, given 4"):
            plan_run(dataclasses.replace(request, seed=4), store)


def test_a_version_1_store_gains_the_family_of_each_run_from_its_records(tmp_path, smoke3):
    """Opening a store made before the family column fills it from each run's first record."""
    request = RunRequest((str(smoke3),), "random", store=tmp_path / "s.db", run_id="r", limit=1)
    run_stored(request)
    db = sqlite3.connect(tmp_path / "s.db")
    db.execute("ALTER TABLE runs DROP COLUMN family")  # the version-1 layout
    db.execute("INSERT INTO runs VALUES ('empty', 'now', '{}', '0.1.0', 1)")
    db.execute("PRAGMA user_version=1")
    db.commit()
    db.close()
    from sortie.report.tables import runs_family

    with Store(tmp_path / "s.db") as store:
        assert (store.run_family("r"), store.run_family("empty")) == ("rescue", None)
        with pytest.raises(ConfigError, match="'empty' comes from a store made before"):
            runs_family(store, ["empty"])  # unknown, and never guessed
    db = sqlite3.connect(tmp_path / "s.db")
    assert db.execute("PRAGMA user_version").fetchone()[0] == STORE_SCHEMA_VERSION == 2
    db.close()
