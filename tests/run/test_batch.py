import pytest

from sortie.core.errors import ConfigError, ParameterError, RunAbortedError
from sortie.core.folders import MARKER
from sortie.core.records_io import Suite, SuiteHeader
from sortie.run.batch import RunRequest, execute, plan_run, select_episodes
from sortie.run.store import Store
from sortie.testing.episodes import room_rescue
from tests.conftest import SERIAL


def _suite(name: str, count: int) -> Suite:
    return Suite(
        header=SuiteHeader(suite=name), episodes=[room_rescue(f"{name}/{i}") for i in range(count)]
    )


def test_a_request_refuses_its_bad_fields_when_made():
    """A RunRequest with bad counts or an unsafe run id cannot be made, every count named."""
    with pytest.raises(ParameterError, match="--workers must be at least 1.*--limit must be"):
        RunRequest(("s",), "random", workers=0, limit=0)
    with pytest.raises(ParameterError, match="--run-id '../x'"):
        RunRequest(("s",), "random", run_id="../x")


def test_limit_takes_the_first_episodes_of_each_suite():
    """--limit 2 keeps the first two episodes of every suite."""
    chosen = select_episodes({"a": _suite("a", 3), "b": _suite("b", 1)}, limit=2)
    assert {name: [e.episode_id for e in es] for name, es in chosen.items()} == {
        "a": ["a/0", "a/1"],
        "b": ["b/0"],
    }


def test_episode_ids_pick_across_suites_in_suite_order():
    """--episodes b/0,a/2 keeps those two, each in its suite, in the suite's order."""
    chosen = select_episodes({"a": _suite("a", 3), "b": _suite("b", 2)}, ids=("b/0", "a/2"))
    assert {name: [e.episode_id for e in es] for name, es in chosen.items()} == {
        "a": ["a/2"],
        "b": ["b/0"],
    }


def test_an_unknown_episode_id_is_refused_with_the_nearest():
    """A misspelt id names the suites searched and the closest id."""
    with pytest.raises(ConfigError, match=r"no episode 'a/22' in a\. Did you mean 'a/2'\?"):
        select_episodes({"a": _suite("a", 3)}, ids=("a/22",))


def test_a_selection_is_stored_so_a_resume_must_repeat_it(tmp_path, smoke3):
    """A run made with --limit 1 cannot be resumed with --limit 2 (the message says so)."""
    request = RunRequest((str(smoke3),), "random", store=tmp_path / "s.db", run_id="r", limit=1)
    with Store(request.store) as store:
        assert len(plan_run(request, store).jobs) == 1
        with pytest.raises(ConfigError, match="limit: stored 1, given 2"):
            plan_run(
                RunRequest(request.suites, "random", store=request.store, run_id="r", limit=2),
                store,
            )


def test_an_aerial_agent_is_refused_rescue_suites(tmp_path, smoke3):
    """The heuristic agent (aerial) on a rescue suite is refused before the run is recorded."""
    request = RunRequest((str(smoke3),), "heuristic", store=tmp_path / "s.db", run_id="r")
    with Store(request.store) as store:
        with pytest.raises(
            ConfigError,
            match="agent 'heuristic' plays aerial missions; suite rescue-smoke-v2 is rescue",
        ):
            plan_run(request, store)
        assert store.runs() == []


@SERIAL  # a pool of two workers (tests/conftest.py)
def test_a_pool_run_of_failing_episodes_stops_and_keeps_what_finished(tmp_path, smoke3):
    """On two workers, the abort after two dying-agent errors stops the pool; both are stored."""
    request = RunRequest(
        (str(smoke3),),
        "dying",
        agent_args={"marker": str(tmp_path / "m"), "times": 9},
        workers=2,
        max_retries=0,
        store=tmp_path / "s.db",
        run_id="r",
        max_consecutive_errors=2,
    )
    from tests.run.test_executor import _registered_dying

    with _registered_dying(), Store(request.store) as store:
        with pytest.raises(RunAbortedError, match="2 episodes in a row ended in an error"):
            execute(plan_run(request, store), request, store)
        assert [e.failure_reason for e in store.episodes("r")] == ["backend_error"] * 2


def test_a_run_refused_at_its_preflight_leaves_no_run_in_the_store(tmp_path, smoke3):
    """A model agent whose server is not there: ConfigError, and the store lists no such run."""
    import socket

    with socket.socket() as probe:  # bound, not listening: refused, and no one else's port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        request = RunRequest(
            (str(smoke3),),
            "mllm-rescue",
            agent_args={"model": "m", "base_url": f"http://127.0.0.1:{port}/v1", "max_retries": 0},
            store=tmp_path / "s.db",
            run_id="gone",
        )
        with Store(request.store) as store:
            plan = plan_run(request, store)
            with pytest.raises(ConfigError, match="unreachable"):
                execute(plan, request, store)
            assert store.runs() == []


def _plan(folder, store_name, suite, run_id="r"):
    """Plan run ``run_id`` of one episode in the store ``store_name`` of ``folder``."""
    request = RunRequest((str(suite),), "random", store=folder / store_name, run_id=run_id, limit=1)
    with Store(request.store) as store:
        return plan_run(request, store)


def test_a_second_store_in_the_folder_cannot_take_a_runs_records(tmp_path, smoke3):
    """Run r of b.db beside a.db's run r is refused, naming a.db's run, and a.db's is kept."""
    _plan(tmp_path, "a.db", smoke3)
    with pytest.raises(ConfigError, match=r"another output \(records of run r of store a\.db\)"):
        _plan(tmp_path, "b.db", smoke3)
    with Store(tmp_path / "b.db") as store:
        assert store.runs() == []
    assert (tmp_path / "r" / MARKER).read_text() == "records of run r of store a.db\n"
    assert len(_plan(tmp_path, "a.db", smoke3).jobs) == 1  # a.db's own run resumes


def test_a_folder_marked_before_stores_were_named_resumes_only_in_its_store(tmp_path, smoke3):
    """Records marked by an older sortie are taken by the store holding the run, not another."""
    _plan(tmp_path, "a.db", smoke3)
    (tmp_path / "r" / MARKER).write_text("records of run r\n")
    with pytest.raises(ConfigError, match=r"another output \(records of run r\)"):
        _plan(tmp_path, "b.db", smoke3)
    _plan(tmp_path, "a.db", smoke3)
    assert (tmp_path / "r" / MARKER).read_text() == "records of run r of store a.db\n"
