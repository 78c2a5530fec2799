"""What a run's start imports: the heavy libraries only where they are used."""

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
