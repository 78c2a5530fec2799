import contextlib
import math
import os
from pathlib import Path

import pytest

from sortie.core.records_io import write_suite
from sortie.core.run_config import PluginRef, RunConfig
from sortie.metrics.rescue import WALL_CLOCK_METRICS
from sortie.missions.loading import load_suite
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store


@pytest.fixture(autouse=True, scope="session")
def _graph_cache(tmp_path_factory) -> None:
    """Keep the navigation graphs the tests build out of the user's cache folder."""
    os.environ["SORTIE_CACHE"] = str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="session")
def smoke3(tmp_path_factory) -> Path:
    """A suite file with the first three smoke episodes (two L1 rooms, one L2 suburb)."""
    smoke = load_suite("rescue-smoke-v2")
    path = tmp_path_factory.mktemp("suites") / "smoke3.jsonl"
    write_suite(path, smoke.header, smoke.episodes[:3])
    return path


def run_config(family: str = "rescue", **fields) -> RunConfig:
    """Return the config of a run of agent random on the embedded backend, ``fields`` changed."""
    plugins = {"agent": PluginRef(name="random"), "backend": PluginRef(name="embedded")}
    return RunConfig(family=family, **(plugins | fields))


def run_stored(request: RunRequest) -> list:
    """Plan and execute ``request``; return the run's stored episodes."""
    with Store(request.store) as store:
        plan = plan_run(request, store)
        execute(plan, request, store)
        return store.episodes(plan.run_id)


def comparable(episodes) -> dict:
    """Return key -> (outcome, metrics) with NaN made comparable and wall-clock metrics left out."""
    return {
        e.key: (
            e.outcome,
            e.failure_reason,
            {
                name: "nan" if math.isnan(value) else value
                for name, value in e.metrics.items()
                if name not in WALL_CLOCK_METRICS
            },
        )
        for e in episodes
    }


@pytest.fixture
def override():
    """Return ``override(registry, name, target)``: registers a stand-in until the test ends."""
    with contextlib.ExitStack() as stack:
        yield lambda registry, name, target: stack.enter_context(registry.override(name, target))
