import dataclasses
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store
from tests.conftest import comparable, run_stored


@pytest.mark.parametrize("agent", ["random", "oracle"])
def test_one_and_two_workers_give_the_same_metrics(tmp_path, smoke3, agent):
    """The same run seed gives bit-identical metrics in-process and on a pool of two."""
    runs = [run_stored(RunRequest((str(smoke3),), agent, workers=workers, seed=3,
                                  store=tmp_path / "s.db", run_id=f"w{workers}"))
            for workers in (1, 2)]  # fmt: skip
    assert len(runs[0]) == 3 and comparable(runs[0]) == comparable(runs[1])


def test_ray_gives_the_same_metrics_and_records_as_the_local_pool(tmp_path, smoke3):
    """On a local Ray instance of two CPUs: identical metrics, records written by this process."""
    pytest.importorskip("ray", reason="the Ray executor needs: pip install 'sortie[ray]'")
    requests = [RunRequest((str(smoke3),), "random", workers=2, seed=3, executor=executor,
                           store=tmp_path / "s.db", run_id=executor)
                for executor in ("local", "ray")]  # fmt: skip
    local, ray = (run_stored(request) for request in requests)
    assert len(ray) == 3 and comparable(local) == comparable(ray)
    lines = [[_without_timings(line) for line in e.record.read_text().splitlines()]
             for e in (local[0], ray[0])]  # fmt: skip
    assert lines[0] == lines[1]


def _without_timings(line: str) -> dict:
    import json

    record = json.loads(line)
    record.pop("timings", None)
    return record


def test_resume_runs_only_what_is_missing(tmp_path, smoke3):
    """A resumed run does the jobs not yet stored; resuming a complete run does nothing."""
    request = RunRequest((str(smoke3),), "random", store=tmp_path / "s.db", run_id="r")
    with Store(request.store) as store:
        plan = plan_run(request, store)
        execute(dataclasses.replace(plan, todo=plan.todo[:2]), request, store)
        rest = plan_run(request, store)
        assert [job.key for job in rest.todo] == [plan.todo[2].key]
        execute(rest, request, store)
        assert plan_run(request, store).todo == [] and len(store.episodes("r")) == 3


def test_retry_errors_reruns_only_the_errored_episodes(tmp_path, smoke3):
    """--retry-errors re-runs the agent/backend errors and nothing else, replacing their rows."""
    request = RunRequest((str(smoke3),), "random", store=tmp_path / "s.db", run_id="r")
    before = comparable(run_stored(request))
    key = sorted(before)[1]
    with sqlite3.connect(request.store) as db:
        db.execute("UPDATE episodes SET failure_reason = 'agent_error' WHERE key = ?", (key,))
    with Store(request.store) as store:
        assert plan_run(request, store).todo == []
        retry = plan_run(dataclasses.replace(request, retry_errors=True), store)
        assert [job.key for job in retry.todo] == [key]
    assert comparable(run_stored(dataclasses.replace(request, retry_errors=True))) == before


def test_a_dead_worker_is_replaced_and_its_job_retried(tmp_path, smoke3):
    """Two workers lost together are retried alone; the episodes then finish normally."""
    request = RunRequest((str(smoke3),), "dying", {"marker": str(tmp_path / "m")}, workers=2,
                         store=tmp_path / "s.db", run_id="r")  # fmt: skip
    with _registered_dying():
        episodes = run_stored(request)
    assert [e.failure_reason for e in episodes] == [e.failure_reason for e in run_stored(
        dataclasses.replace(request, agent="random", agent_args={}, run_id="plain"))]
    assert (tmp_path / "m.0").exists() and not (tmp_path / "m.1").exists()


def test_a_job_whose_worker_keeps_dying_becomes_a_backend_error(tmp_path, smoke3):
    """After max_retries deaths running alone, the job is stored as backend_error."""
    request = RunRequest((str(smoke3),), "dying", {"marker": str(tmp_path / "m"), "times": 9},
                         workers=2, max_retries=1, store=tmp_path / "s.db",
                         run_id="r")  # fmt: skip
    with _registered_dying():
        episodes = run_stored(request)
    assert {e.failure_reason for e in episodes} == {"backend_error"}
    assert "died 2 times" in (episodes[0].error or "") and episodes[0].attempts == 2


def test_killed_runs_resume_to_the_same_store_as_an_uninterrupted_run(tmp_path, smoke3):
    """SIGKILL the runner at random moments, resume each time: same keys, same metrics."""
    reference = comparable(run_stored(RunRequest((str(smoke3),), "random", repeats=2,
                                                 store=tmp_path / "ref" / "s.db", run_id="k")))
    rng, store = random.Random(0), tmp_path / "s.db"
    for _ in range(3):
        process = _start_run(smoke3, store)
        time.sleep(rng.uniform(1.0, 4.0))
        process.kill()
        _reap(process)
    _reap(_start_run(smoke3, store), timeout=60)
    with Store(store) as opened:
        episodes = opened.episodes("k")
    assert comparable(episodes) == reference
    assert len({e.record for e in episodes}) == len(episodes) == 6


def test_ctrl_c_stops_the_pool_and_keeps_finished_episodes(tmp_path, smoke3):
    """SIGINT mid-run exits with 130, leaves no worker behind and keeps whole episodes."""
    store = tmp_path / "s.db"
    process = _start_run(smoke3, store)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not _stored(store):
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=20) == 130
    _reap(process, timeout=5)
    assert 1 <= _stored(store) < 6


def _start_run(suite, store) -> subprocess.Popen:
    command = [sys.executable, "-m", "sortie.cli", "run", str(suite), "--agent", "random",
               "--repeats", "2", "--workers", "2", "--run-id", "k", "--store", str(store)]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip


def _reap(process: subprocess.Popen, timeout: float = 10) -> None:
    """Wait for the runner, then for its orphaned workers to exit on their own."""
    process.wait(timeout=timeout)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.killpg(process.pid, signal.SIGKILL)
    pytest.fail("worker processes outlived their runner")


def _stored(store) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(store) as db:
            return int(db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


class _registered_dying:
    """Register the dying agent for the test (the class is pickled, so workers find it)."""

    def __enter__(self):
        from sortie.agents.base import AGENTS
        from sortie.testing.agents import DyingAgent

        AGENTS._entries["dying"] = DyingAgent

    def __exit__(self, *exc):
        from sortie.agents.base import AGENTS

        del AGENTS._entries["dying"]


def test_on_ray_a_job_whose_worker_keeps_dying_becomes_a_backend_error(tmp_path, smoke3):
    """Ray retries a task whose worker died; past max_retries the episode is a backend_error."""
    pytest.importorskip("ray", reason="the Ray executor needs: pip install 'sortie[ray]'")
    request = RunRequest((str(smoke3),), "dying", {"marker": str(tmp_path / "m"), "times": 2},
                         workers=1, max_retries=1, executor="ray", store=tmp_path / "s.db",
                         run_id="r")  # fmt: skip
    with _registered_dying():
        episodes = run_stored(request)
    assert [e.failure_reason for e in episodes][0] == "backend_error"
    assert "lost 2 times" in (episodes[0].error or "")
    assert not {e.failure_reason for e in episodes[1:]} & {"agent_error", "backend_error"}
