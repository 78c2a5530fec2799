"""What a run's start imports: the heavy libraries only where they are used."""

import json
import subprocess
import sys

HEAVY = ("openai", "scipy.stats", "matplotlib")
"""A third, a half and a quarter of a second to import; a run needs none to start."""


def test_starting_a_run_imports_no_model_sdk_statistics_or_plotting():
    """The run command, the executor and the report tables load without the heavy libraries."""
    code = (
        "import sys, sortie.cli.running, sortie.run.executor, sortie.report.tables; "
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert found == "[]"


def _imported_after(code: str, modules: tuple[str, ...]) -> list[str]:
    """Return which of ``modules`` a fresh interpreter holds after running ``code``."""
    code += f"; import json, sys; print(json.dumps([m for m in {modules!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_the_command_line_loads_without_numpy_pydantic_or_gymnasium():
    """``sortie --help`` needs only typer and rich: the records and the simulator load later."""
    found = _imported_after("import sortie.cli", ("numpy", "pydantic", "gymnasium", "scipy"))
    assert found == []


def test_import_sortie_registers_the_envs_once_gymnasium_is_imported():
    """In either order, ``gymnasium.make("sortie/Rescue-v1")`` finds sortie's ids."""
    for code in ("import sortie, gymnasium", "import gymnasium, sortie"):
        found = _imported_after(
            code + "; registered = 'sortie/Rescue-v1' in gymnasium.registry; "
            "assert registered, 'not registered'",
            ("gymnasium",),
        )
        assert found == ["gymnasium"], code
    assert _imported_after("import sortie", ("gymnasium", "numpy")) == []


def test_a_results_table_interval_needs_no_scipy_stats():
    """The bootstrap of a results table runs without importing scipy.stats (half a second)."""
    code = "from sortie.metrics.intervals import mean_interval; mean_interval([1.0, 2.0, 4.0])"
    assert _imported_after(code, ("scipy.stats",)) == []


def test_the_embedded_backend_and_navigation_load_without_scipys_sparse_or_spatial():
    """Graphs are searched on sortie's own arrays: scipy loads only for numpy's fallbacks."""
    code = "import sortie.backends.embedded, sortie.sim.navigation"
    modules = ("scipy.sparse", "scipy.spatial", "scipy.sparse.csgraph")
    assert _imported_after(code, modules) == []


def test_a_familys_step_record_loads_that_family_alone():
    """Rescue declares no words of its own: learning so loads no other family's descriptor."""
    code = (
        "import sortie.missions.registry; from sortie.core.records import step_model; "
        "step_model('rescue')"
    )
    modules = (
        "sortie.missions.rescue.family",
        "sortie.missions.aerial.family",
        "sortie.missions.household.family",
    )
    assert _imported_after(code, modules) == ["sortie.missions.rescue.family"]
