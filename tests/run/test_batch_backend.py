import json
import sqlite3

import pytest

from sortie.backends import BACKENDS
from sortie.backends.catalog import Capabilities
from sortie.backends.embedded import EmbeddedBackend
from sortie.core.errors import ConfigError
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store


class Tuned(EmbeddedBackend):
    """An embedded backend with an argument of its own; it counts how often it is built."""

    built: list[int] = []

    def __init__(self, body="walker", camera=None, sensors=(), port: int = 9000) -> None:
        super().__init__(body=body, camera=camera, sensors=sensors)
        Tuned.built.append(port)


class FlightOnly(EmbeddedBackend):
    """An embedded backend declaring only a multirotor body."""

    capabilities = Capabilities(
        frozenset({"multirotor"}), False, frozenset({"rgb"}), "embedded world builders"
    )


def _request(tmp_path, smoke3, **changes):
    base = dict(store=tmp_path / "s.db", run_id="r", limit=1, backend="tuned")
    return RunRequest((str(smoke3),), "random", **(base | changes))


def _stored_config(path) -> dict:
    with sqlite3.connect(path) as db:
        return json.loads(db.execute("SELECT config FROM runs").fetchone()[0])


def test_the_stored_config_records_the_backend_name_and_args(tmp_path, smoke3):
    """A run on -b port=9001 stores the backend as tuned with port 9001."""
    request = _request(tmp_path, smoke3, backend_args={"port": "9001"})
    with BACKENDS.override("tuned", Tuned), Store(request.store) as store:
        plan_run(request, store)
    backend = _stored_config(request.store)["backend"]
    assert (backend["name"], backend["args"]["port"]) == ("tuned", 9001)


def test_a_resume_on_another_backend_is_refused_as_a_changed_config(tmp_path, smoke3):
    """Resuming run r with --backend embedded after tuned says the backend differs."""
    with BACKENDS.override("tuned", Tuned), Store(tmp_path / "s.db") as store:
        plan_run(_request(tmp_path, smoke3), store)
        with pytest.raises(ConfigError, match="another config.*backend"):
            plan_run(_request(tmp_path, smoke3, backend="embedded"), store)


def test_a_resume_with_other_backend_args_is_refused(tmp_path, smoke3):
    """Resuming with -b port=9002 after port 9001 is a changed config."""
    with BACKENDS.override("tuned", Tuned), Store(tmp_path / "s.db") as store:
        plan_run(_request(tmp_path, smoke3, backend_args={"port": "9001"}), store)
        with pytest.raises(ConfigError, match="another config"):
            plan_run(_request(tmp_path, smoke3, backend_args={"port": "9002"}), store)


def test_a_backend_lacking_the_familys_body_is_refused_before_the_run_is_recorded(tmp_path, smoke3):
    """A rescue suite on a flight-only backend fails in plan_run; the store holds no run."""
    request = _request(tmp_path, smoke3, backend="flying")
    with BACKENDS.override("flying", FlightOnly), Store(request.store) as store:
        with pytest.raises(ConfigError, match="backend 'flying' cannot run this suite"):
            plan_run(request, store)
    with sqlite3.connect(request.store) as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_the_jobs_run_on_the_named_backend_with_its_args(tmp_path, smoke3):
    """Executing the plan builds the tuned backend once, with port 9003."""
    Tuned.built.clear()
    request = _request(tmp_path, smoke3, backend_args={"port": "9003"})
    with BACKENDS.override("tuned", Tuned), Store(request.store) as store:
        execute(plan_run(request, store), request, store)
        episodes = store.episodes("r")
    assert Tuned.built == [9003] and len(episodes) == 1


def test_an_imported_rescuebench_suite_is_refused_on_the_embedded_backend(tmp_path):
    """Its header names unrealcv, so plan_run on the embedded backend says which to use."""
    from pathlib import Path

    from sortie.importers import import_command

    fixture = Path(__file__).parents[2] / "docs" / "examples" / "rescuebench"
    suite = tmp_path / "rb.jsonl"
    import_command("rescuebench", [fixture / "level_2.jsonl"], suite, None)
    request = RunRequest((str(suite),), "random", store=tmp_path / "s.db", run_id="r")
    with Store(request.store) as store, pytest.raises(ConfigError, match="run it with --backend"):
        plan_run(request, store)


def test_an_imported_rescuebench_suite_plans_on_the_unrealcv_backend(tmp_path):
    """The same suite passes the checks on --backend unrealcv (no simulator is contacted)."""
    from pathlib import Path

    from sortie.importers import import_command

    fixture = Path(__file__).parents[2] / "docs" / "examples" / "rescuebench"
    suite = tmp_path / "rb.jsonl"
    import_command("rescuebench", [fixture / "level_2.jsonl"], suite, None)
    request = RunRequest(
        (str(suite),), "random", store=tmp_path / "s.db", run_id="r", backend="unrealcv"
    )
    with Store(request.store) as store:
        assert len(plan_run(request, store).jobs) == 2


def test_an_imported_missionbench_suite_plans_on_the_airsim_backend(tmp_path):
    """An imported MissionBench suite passes the checks on --backend airsim."""
    from pathlib import Path

    from sortie.importers import import_command

    dataset = Path(__file__).parents[2] / "docs" / "examples" / "missionbench" / "dataset"
    suite = tmp_path / "mb.jsonl"
    import_command("missionbench", [dataset], suite, None)
    request = RunRequest(
        (str(suite),), "random", store=tmp_path / "s.db", run_id="r", backend="airsim"
    )
    with Store(request.store) as store:
        assert len(plan_run(request, store).jobs) == 3


def test_unreal_worlds_are_refused_on_embedded_even_without_a_header(tmp_path):
    """An unreal.X world in a suite without a backend header is refused by embedded."""
    from sortie.core.records_io import SuiteHeader, write_suite
    from sortie.testing.episodes import room_rescue

    spec = room_rescue("u/0")
    spec = spec.model_copy(update={"world": spec.world.model_copy(update={"builder": "unreal.X"})})
    suite = tmp_path / "u.jsonl"
    write_suite(suite, SuiteHeader(suite="u"), [spec])
    request = RunRequest((str(suite),), "random", store=tmp_path / "s.db", run_id="r")
    with Store(request.store) as store, pytest.raises(ConfigError, match="external simulator"):
        plan_run(request, store)


def test_what_the_suites_say_is_checked_before_the_run_s_parts(tmp_path):
    """A suite for another backend is refused before a bad agent argument is looked at."""
    from pathlib import Path

    from sortie.importers import import_command

    fixture = Path(__file__).parents[2] / "docs" / "examples" / "rescuebench"
    suite = tmp_path / "rb.jsonl"
    import_command("rescuebench", [fixture / "level_2.jsonl"], suite, None)
    request = RunRequest(
        (str(suite),), "random", agent_args={"colour": "red"}, store=tmp_path / "s.db"
    )
    with Store(request.store) as store, pytest.raises(ConfigError, match="run it with --backend"):
        plan_run(request, store)
