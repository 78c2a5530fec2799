import dataclasses
import hashlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import Future
from pathlib import Path
from types import SimpleNamespace

import pytest

from sortie.core.columns import columns_file, load_columns
from sortie.core.records_io import read_trajectory
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.executor import _PoolRun
from sortie.run.store import Store
from tests.conftest import SERIAL, comparable, run_stored

pytestmark = SERIAL  # worker pools, Ray and killed runners (tests/conftest.py)


@pytest.mark.parametrize("agent", ["random", "oracle"])
def test_one_and_two_workers_give_the_same_metrics(tmp_path, smoke3, agent):
    """The same run seed gives bit-identical metrics in-process and on a pool of two."""
    runs = [
        run_stored(
            RunRequest(
                (str(smoke3),),
                agent,
                workers=workers,
                seed=3,
                store=tmp_path / "s.db",
                run_id=f"w{workers}",
            )
        )
        for workers in (1, 2)
    ]
    assert len(runs[0]) == 3 and comparable(runs[0]) == comparable(runs[1])


def test_free_workers_get_their_next_jobs_before_results_are_stored(tmp_path, smoke3):
    """While the main process stores a result, each worker already holds its next job, if any."""
    request = RunRequest((str(smoke3),), "random", workers=2, store=tmp_path / "s.db")
    with Store(request.store) as store:
        jobs = plan_run(request, store).todo
    jobs = [*jobs, *jobs, *jobs]  # nine jobs, so most results arrive while others wait
    seen: list[tuple[int, int]] = []
    pool_run = _PoolRun(
        jobs, lambda _: seen.append((len(pool_run.running), len(pool_run.waiting))), 2, 2
    )
    pool_run.run()
    assert len(seen) == 9
    assert all(running == 2 for running, waiting in seen if waiting > 0)


@dataclasses.dataclass
class _Result:
    """Stands for a JobResult: ``_collect`` reads its footer's failure and sets its attempts."""

    attempts: int = 0
    footer: SimpleNamespace = dataclasses.field(
        default_factory=lambda: SimpleNamespace(failure_reason=None)
    )


@pytest.mark.parametrize(
    ("failure", "order"), [(None, ["submit", "store"]), ("agent_error", ["store"])]
)
def test_a_free_worker_gets_a_job_before_a_result_is_stored_unless_it_is_an_error(failure, order):
    """After an error (which may stop the run) nothing is started until the result is stored."""
    done = Future()
    done.set_result(_Result(footer=SimpleNamespace(failure_reason=failure)))
    seen: list[str] = []
    pool = SimpleNamespace(submit=lambda *_: seen.append("submit") or Future())
    pool_run = _PoolRun([SimpleNamespace(key="next")], lambda _: seen.append("store"), 2, 2)
    pool_run.running = {done: SimpleNamespace(key="a")}
    pool_run._collect({done}, pool)
    assert seen == order


def test_a_result_finished_beside_a_job_that_raised_is_handed_over_first():
    """A job's bug stops the run, but the result that finished with it is stored before."""
    ok, bad = Future(), Future()
    ok.set_result(_Result())
    bad.set_exception(RuntimeError("a bug in the job"))
    handed: list[_Result] = []
    pool_run = _PoolRun([], handed.append, 2, 2)
    pool_run.running = {ok: SimpleNamespace(key="a"), bad: SimpleNamespace(key="b")}
    with pytest.raises(RuntimeError, match="a bug in the job"):
        pool_run._collect({ok, bad}, pool=None)
    assert handed == [_Result(attempts=1)] and pool_run.running == {}


def test_every_result_is_handed_over_when_storing_one_raises():
    """An abort raised while storing one result still lets the others be stored."""
    first, second = Future(), Future()
    first.set_result(_Result())
    second.set_result(_Result())
    handed: list[_Result] = []

    def store(result: _Result) -> None:
        handed.append(result)
        raise KeyboardInterrupt

    pool_run = _PoolRun([], store, 2, 2)
    pool_run.running = {first: SimpleNamespace(key="a"), second: SimpleNamespace(key="b")}
    with pytest.raises(KeyboardInterrupt):
        pool_run._collect({first, second}, pool=None)
    assert len(handed) == 2


def test_ray_gives_the_same_metrics_and_records_as_the_local_pool(tmp_path, smoke3):
    """On a local Ray instance of two CPUs: identical metrics, records written by this process."""
    pytest.importorskip("ray", reason="the Ray executor needs: pip install 'sortie[ray]'")
    requests = [
        RunRequest(
            (str(smoke3),),
            "random",
            workers=2,
            seed=3,
            executor=executor,
            store=tmp_path / "s.db",
            run_id=executor,
        )
        for executor in ("local", "ray")
    ]
    local, ray = (run_stored(request) for request in requests)
    assert len(ray) == 3 and comparable(local) == comparable(ray)
    lines = [
        [_without_timings(line) for line in e.record.read_text().splitlines()]
        for e in (local[0], ray[0])
    ]
    assert lines[0] == lines[1]
    for episode in ray:  # the columns file comes back with the record, and fits it
        record = episode.record.read_bytes()
        kept = columns_file(episode.record).read_bytes()
        steps = len(read_trajectory(episode.record).steps)
        assert load_columns(kept, hashlib.sha256(record).digest(), steps) is not None


def _without_timings(line: str) -> dict:
    """Return a record line without what the wall clock decides.

    That is the step timings and the latency clock, which counts an agent's thinking once it
    takes longer than a control period (a random agent preempted on a loaded machine).
    """
    import json

    record = json.loads(line)
    record.pop("timings", None)
    record.pop("clock_latency", None)
    for stage in record.get("stages", []) if record.get("kind") == "footer" else []:
        stage.pop("clock_latency", None)
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
    request = RunRequest(
        (str(smoke3),),
        "dying",
        agent_args={"marker": str(tmp_path / "m")},
        workers=2,
        store=tmp_path / "s.db",
        run_id="r",
    )
    with _registered_dying():
        episodes = run_stored(request)
    assert [e.failure_reason for e in episodes] == [
        e.failure_reason
        for e in run_stored(
            dataclasses.replace(request, agent="random", agent_args={}, run_id="plain")
        )
    ]
    assert (tmp_path / "m.0").exists() and not (tmp_path / "m.1").exists()


def test_a_job_whose_worker_keeps_dying_becomes_a_backend_error(tmp_path, smoke3):
    """After max_retries deaths running alone, the job is stored as backend_error."""
    request = RunRequest(
        (str(smoke3),),
        "dying",
        agent_args={"marker": str(tmp_path / "m"), "times": 9},
        workers=2,
        max_retries=1,
        store=tmp_path / "s.db",
        run_id="r",
    )
    with _registered_dying():
        episodes = run_stored(request)
    assert {e.failure_reason for e in episodes} == {"backend_error"}
    assert "died 2 times" in (episodes[0].error or "") and episodes[0].attempts == 2


def test_killed_runs_resume_to_the_same_store_as_an_uninterrupted_run(tmp_path, smoke3):
    """SIGKILL the runner at random moments, resume each time: same keys, same metrics."""
    reference = comparable(
        run_stored(
            RunRequest(
                (str(smoke3),), "random", repeats=2, store=tmp_path / "ref" / "s.db", run_id="k"
            )
        )
    )
    rng, store = random.Random(0), tmp_path / "s.db"
    for _ in range(3):
        process = _start_run(smoke3, store)
        time.sleep(rng.uniform(1.0, 4.0))
        process.kill()
        _reap(process)
    _reap(_start_run(smoke3, store), timeout=300)
    with Store(store) as opened:
        episodes = opened.episodes("k")
    assert comparable(episodes) == reference
    assert len({e.record for e in episodes}) == len(episodes) == 6


def test_workers_die_with_a_killed_runner(tmp_path, smoke3):
    """SIGKILL the runner while its pool works: no worker of its group is alive soon after."""
    store = tmp_path / "s.db"
    process = _start_run(smoke3, store)
    _wait_for(lambda: len(_alive_in_group(process.pid)) >= 3, 120, "the pool to start")
    process.kill()
    _reap(process)


_PARENT = """
import subprocess, sys, time
worker = subprocess.Popen([sys.executable, "-c", sys.argv[1]], stdout=sys.stdout)
time.sleep(600)
"""
_BUSY_WORKER = """
import os, re
from sortie.run.executor import _start_worker
_start_worker(os.getppid())
print(os.getpid(), flush=True)
re.match(r"(a*)*b", "a" * 64)  # backtracks for ages without letting go of the GIL
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent signal")
def test_a_worker_busy_in_native_code_dies_with_its_parent():
    """A worker that holds the GIL (so cannot poll its parent) still dies when the parent does."""
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, _BUSY_WORKER],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert parent.stdout is not None
    worker = int(parent.stdout.readline())
    time.sleep(0.5)  # well into the regex
    parent.kill()
    _reap(parent)
    assert worker not in _alive_in_group(parent.pid)


def test_ctrl_c_stops_the_pool_and_keeps_finished_episodes(tmp_path, smoke3):
    """SIGINT mid-run exits with 130, leaves no worker behind and keeps whole episodes."""
    store = tmp_path / "s.db"
    process = _start_run(smoke3, store, repeats=6)  # 18 episodes: not all done before SIGINT
    _wait_for(lambda: _stored(store) > 0, 180, "a first stored episode")
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=120) == 130
    _reap(process)
    assert 1 <= _stored(store) < 18


def _start_run(suite, store, repeats: int = 2) -> subprocess.Popen:
    command = [
        sys.executable,
        "-m",
        "sortie.cli",
        "run",
        str(suite),
        "--agent",
        "random",
        "--repeats",
        str(repeats),
        "--workers",
        "2",
        "--run-id",
        "k",
        "--store",
        str(store),
    ]
    return subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=_default_interrupt,
    )


def _default_interrupt() -> None:
    """Give the runner Ctrl-C's default, whatever the tests inherited.

    A shell starts a background job with SIGINT ignored, an ignored signal stays ignored
    across exec, and Python then installs no KeyboardInterrupt handler: a runner of tests
    started with ``&`` would hand the run a Ctrl-C it cannot see.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {seconds} s for {what}")
        time.sleep(0.1)


def _reap(process: subprocess.Popen, timeout: float = 60) -> None:
    """Wait for the runner, then for the rest of its process group (its workers) to exit.

    Workers get 30 s (the kernel kills them at once on Linux; elsewhere they poll); any left
    then are killed and the test fails.
    """
    process.wait(timeout=timeout)
    deadline = time.monotonic() + 30
    while left := _alive_in_group(process.pid):
        if time.monotonic() > deadline:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:  # they exited just now
                return
            pytest.fail(f"worker processes {left} outlived their runner by 30 s")
        time.sleep(0.1)


def _alive_in_group(group: int) -> list[int]:
    """Return the live (not zombie) processes of a process group."""
    proc = Path("/proc")
    if not proc.is_dir():  # no /proc: ask the kernel, zombies included
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return []
        return [group]
    alive = []
    for entry in proc.iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # not a process, or it just exited
            continue
        if int(fields[2]) == group and fields[0] not in ("Z", "X"):
            alive.append(int(entry.name))
    return alive


def _stored(store) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(store) as db:
            return int(db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def _registered_dying():
    """Register the dying agent for the test (the class is pickled, so workers find it)."""
    from sortie.agents.base import AGENTS
    from sortie.testing.agents import DyingAgent

    return AGENTS.override("dying", DyingAgent)


def test_on_ray_a_job_whose_worker_keeps_dying_becomes_a_backend_error(tmp_path, smoke3):
    """Ray retries a task whose worker died; past max_retries the episode is a backend_error."""
    pytest.importorskip("ray", reason="the Ray executor needs: pip install 'sortie[ray]'")
    request = RunRequest(
        (str(smoke3),),
        "dying",
        agent_args={"marker": str(tmp_path / "m"), "times": 2},
        workers=1,
        max_retries=1,
        executor="ray",
        store=tmp_path / "s.db",
        run_id="r",
    )
    with _registered_dying():
        episodes = run_stored(request)
    assert [e.failure_reason for e in episodes][0] == "backend_error"
    assert "lost 2 times" in (episodes[0].error or "")
    assert not {e.failure_reason for e in episodes[1:]} & {"agent_error", "backend_error"}


_PARENT_DEATH_SIGNAL = """
import ctypes, sys
import sortie.run.fork_server, sortie.run.executor
signal = ctypes.c_int(-1)
ctypes.CDLL(None).prctl(2, ctypes.byref(signal), 0, 0, 0)  # PR_GET_PDEATHSIG
print(signal.value)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent signal")
def test_only_the_fork_server_ties_its_life_to_its_parent():
    """A run's child that imports the fork server's module (a `sortie run` of its own) is free.

    Its parent has readied workers; the child must not be killed with that parent.
    """
    parent = (
        "import subprocess, sys; from sortie.run.fork_server import start_worker_server; "
        "start_worker_server(); subprocess.run([sys.executable, '-c', sys.argv[1]], check=True)"
    )
    out = subprocess.run(
        [sys.executable, "-c", parent, _PARENT_DEATH_SIGNAL],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "0"
