"""Model use per run (calls, tokens, errors, latency) for reports, read from the records."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sortie.core.errors import ConfigError
from sortie.core.records_io import Trajectory, read_trajectory
from sortie.models.accounting import CallStats, call_stats
from sortie.run.store import Store


def run_usage(store: Store, runs: Sequence[str]) -> dict[str, CallStats]:
    """Return the model use of each run that made model calls, by run id."""
    usage = {}
    for run in runs:
        stats = call_stats(t for t in (_readable(e.record) for e in store.episodes(run)) if t)
        if stats.calls:
            usage[run] = stats
    return usage


def _readable(path: Path) -> Trajectory | None:
    # A missing or damaged record loses its own calls, not the report (its page says why).
    try:
        return read_trajectory(path)
    except (ConfigError, OSError):
        return None
