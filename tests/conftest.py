import contextlib
import math
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from sortie.core.records_io import write_suite
from sortie.core.run_config import PluginRef, RunConfig
from sortie.metrics.rescue import WALL_CLOCK_METRICS
from sortie.missions.loading import load_suite
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store

SERIAL = pytest.mark.xdist_group("serial")
"""Under ``pytest -n N``, the tests so marked run on one process, one after another.

For the tests that time a server or a client against the wall clock, and for those that load
more than one core themselves (a pool of workers, Ray, three fingerprint processes): none
of the first runs beside one of the second, nor two of either at once. Any other test may run
beside them, as any other program may on a shared machine. A module whose module-scoped
fixture is costly is grouped by its own name instead, so that the fixture is built once.
"""


GROUPED = "sortie_grouped"
"""The key of an xdist worker's input that says its controller distributes by group."""


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Under ``pytest -n N``, distribute as ``--dist loadgroup``: xdist's ``load`` ignores groups.

    Runs before xdist makes its session; without the plugin (``-p no:xdist``) there is no
    ``dist`` option and nothing is done. (An explicit ``--dist load`` is taken as loadgroup.)
    """
    if getattr(config.option, "dist", None) == "load":
        config.option.dist = "loadgroup"


@pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown where the plugin is not
def pytest_configure_node(node) -> None:
    """Tell each xdist worker whether tests are distributed by group (its own options are not)."""
    node.workerinput[GROUPED] = node.config.option.dist == "loadgroup"


def grouped(config: pytest.Config) -> bool:
    """Return whether this process is an xdist worker of a run distributed by group."""
    return bool(getattr(config, "workerinput", {}).get(GROUPED, False))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup``, end each grouped test's id with ``@group``, as xdist means to.

    xdist's scheduler reads a test's group from that suffix; pytest-xdist 3.8.0 writes it where
    pytest 9.2's structured ids no longer look (``item._nodeid``), so every group was ignored
    without a word (pytest-xdist issue #1386). Nothing is done where xdist's own suffix took.
    """
    if not grouped(config):
        return
    for item in items:
        marks = item.iter_markers("xdist_group")
        names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in marks}
        suffix = "@" + "_".join(sorted(names))
        if names and not item.nodeid.endswith(suffix):
            item._id = type(item._id).parse(item.nodeid + suffix)


@pytest.fixture(autouse=True, scope="session")
def _graph_cache(tmp_path_factory) -> None:
    """Keep the navigation graphs the tests build out of the user's cache folder.

    Under ``pytest -n N`` the processes share one folder, as a run's workers share the user's:
    a graph is built once, and the cache's writes are atomic whoever reads them.
    """
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = shared / "cache"
    folder.mkdir(exist_ok=True)
    os.environ["SORTIE_CACHE"] = str(folder)


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


@pytest.fixture(autouse=True)
def clients_closed(monkeypatch) -> Iterator[None]:
    """Close every model client a test made (an agent's too), as a run closes its own.

    A client holds its HTTP connections until closed; the clients of tests that build agents
    or clients by hand were left to the garbage collector, which reported their sockets
    unclosed in whichever test it ran.
    """
    from sortie.models.client import ModelClient

    made: list[ModelClient] = []
    make = ModelClient.__init__

    def tracked(self: ModelClient, *args, **kwargs) -> None:
        make(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(ModelClient, "__init__", tracked)
    yield
    for client in made:
        client.close()
