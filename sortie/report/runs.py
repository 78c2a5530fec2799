"""``sortie runs``: what a results store holds, one line a run."""

from __future__ import annotations

from collections import Counter
from typing import Any

from sortie.core.errors import SortieError
from sortie.run.store import Store
from sortie.suites import read


def run_table(store: Store) -> list[dict[str, Any]]:
    """Return one row per stored run: suites, agent, backend, episodes done and errored, date.

    ``planned`` is the episodes the run's suites, limit and repeats ask for (None when a suite
    file has moved); the difference from ``stored`` is what is still to run, or was refused.
    """
    rows = []
    for run in store.runs():
        config = store.run_config(run) or {}
        episodes = store.episodes(run)
        outcomes = Counter(e.outcome for e in episodes)
        rows.append(
            {
                "run": run,
                "family": store.run_family(run) or "?",
                "suites": sorted(config.get("suites", {})),
                "agent": _named(config.get("agent")),
                "backend": _named(config.get("backend")),
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


def _named(part: Any) -> str:
    """Return the name of a config's agent or backend part, with its telling arguments."""
    if not isinstance(part, dict):
        return "?"
    args = part.get("args") or {}
    shown = [f"{k}={args[k]}" for k in SHOWN_ARGS if k in args]
    return " ".join([str(part.get("name", "?")), *shown])


def _planned(config: dict[str, Any]) -> int | None:
    total = 0
    for suite in config.get("suites", {}):
        try:
            count = len(read(suite).episodes)
        except (SortieError, OSError):
            return None
        limit = config.get("limit")
        total += min(count, limit) if limit else count
    return total * int(config.get("repeats", 1))
