"""``sortie runs``: what a results store holds, one line a run."""

from __future__ import annotations

from collections import Counter
from typing import Any

from sortie.core.errors import ConfigError, SortieError
from sortie.core.run_config import PluginRef, RunConfig
from sortie.run.store import Store
from sortie.suites import read


def run_table(store: Store) -> list[dict[str, Any]]:
    """Return one row per stored run: suites, agent, backend, episodes done and errored, date.

    ``planned`` is the episodes the run's suites, limit and repeats ask for (None when a suite
    file has moved); the difference from ``stored`` is what is still to run, or was refused.
    """
    rows = []
    for run in store.runs():
        try:
            config = store.run_config(run)
        except ConfigError:  # a row no reader knows (a store of an older schema): listed bare
            rows.append(_unreadable(store, run))
            continue
        if config is None:  # dropped since it was listed (a refused run of another process)
            continue
        episodes = store.episodes(run)
        outcomes = Counter(e.outcome for e in episodes)
        rows.append(
            {
                "run": run,
                "family": store.run_family(run) or "?",
                "suites": sorted(config.suites),
                "agent": _named(config.agent),
                "backend": _named(config.backend),
                "stored": len(episodes),
                "planned": _planned(config),
                "success": outcomes["success"],
                "failure": outcomes["failure"],
                "errors": outcomes["error"],
                "began": store.created(run),
            }
        )
    return rows


SHOWN_ARGS = ("model", "url", "observation")
"""The arguments that tell runs of one agent apart at a glance (a model agent's model)."""


def _named(part: PluginRef) -> str:
    """Return the name of a config's agent or backend, with its telling arguments."""
    shown = [f"{k}={part.args[k]}" for k in SHOWN_ARGS if k in part.args]
    return " ".join([part.name, *shown])


def _planned(config: RunConfig) -> int | None:
    total = 0
    for suite in config.suites:
        try:
            count = len(read(suite).episodes)
        except (SortieError, OSError):
            return None
        total += min(count, config.limit) if config.limit else count
    return total * config.repeats


def _unreadable(store: Store, run: str) -> dict[str, Any]:
    """Return the row of a run whose stored config does not read: its counts, the rest "?"."""
    outcomes = Counter(e.outcome for e in store.episodes(run))
    return {
        "run": run,
        "family": store.run_family(run) or "?",
        "suites": [],
        "agent": "?",
        "backend": "?",
        "stored": sum(outcomes.values()),
        "planned": None,
        "success": outcomes["success"],
        "failure": outcomes["failure"],
        "errors": outcomes["error"],
        "began": store.created(run),
    }
