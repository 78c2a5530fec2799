"""Model use per run (calls, tokens, errors, latency) for reports, read from the records."""

from __future__ import annotations

from collections.abc import Sequence

from sortie.core.records_io import read_trajectory
from sortie.models.accounting import CallStats, call_stats
from sortie.run.store import Store


def run_usage(store: Store, runs: Sequence[str]) -> dict[str, CallStats]:
    """Return the model use of each run that made model calls, by run id."""
    usage = {}
    for run in runs:
        stats = call_stats(read_trajectory(e.record) for e in store.episodes(run))
        if stats.calls:
            usage[run] = stats
    return usage
