"""``sortie runs``: what a results store holds, one line a run."""

from __future__ import annotations

from collections import Counter
from typing import Any

from sortie.backends.catalog import camera_text
from sortie.core.errors import ConfigError, SortieError
from sortie.core.run_config import PluginRef, RunConfig
from sortie.missions.loading import load_suite
from sortie.run.batch import suite_digest
from sortie.run.store import Store


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
            rows.append(_row(store, run, None))
            continue
        if config is not None:  # None: dropped since it was listed (another process refused it)
            rows.append(_row(store, run, config))
    return rows


def _row(store: Store, run: str, config: RunConfig | None) -> dict[str, Any]:
    """Return one run's row; a config that did not read shows its parts as "?"."""
    outcomes = Counter(e.outcome for e in store.episodes(run))
    return {
        "run": run,
        "family": store.run_family(run) or "?",
        "suites": sorted(config.suites) if config else [],
        "agent": _named(config.agent) if config else "?",
        "backend": _backend(config) if config else "?",
        "stored": sum(outcomes.values()),
        "planned": _planned(config) if config else None,
        "success": outcomes["success"],
        "failure": outcomes["failure"],
        "errors": outcomes["error"],
        "began": store.created(run),
    }


SHOWN_ARGS = ("model", "url", "observation")
"""The arguments that tell runs of one agent apart at a glance (a model agent's model)."""


def _named(part: PluginRef) -> str:
    """Return the name of a config's agent or backend, with its telling arguments."""
    shown = [f"{k}={part.args[k]}" for k in SHOWN_ARGS if k in part.args]
    return " ".join([part.name, *shown])


def _backend(config: RunConfig) -> str:
    """Return the backend's name and arguments, with the camera and pose the agent was given."""
    said = [_named(config.backend)]
    camera = config.backend.args.get("camera")
    if camera:
        said.append(f"camera={camera_text(camera)}")
    pose = config.pose
    if pose is not None:
        noise = (
            f" ±{pose.position_noise:g} m {pose.heading_noise:g}°"
            if pose.position_noise or pose.heading_noise
            else ""
        )
        said.append(f"pose={pose.frame}{noise}")
    return " ".join(said)


def _planned(config: RunConfig) -> int | None:
    """Return the episodes the run asks for, or None when a suite is not the one it ran.

    A run's suites are stored by header name and hash; a suite file is found again by that
    name only if it is the packaged suite of the name, so a file of the same name with other
    episodes (its hash differs) is not counted as the run's.
    """
    total = 0
    for suite, digest in config.suites.items():
        try:
            found = load_suite(suite)
        except (SortieError, OSError):
            return None
        if suite_digest(found) != digest:
            return None
        count = len(found.episodes)
        total += min(count, config.limit) if config.limit else count
    return total * config.repeats
