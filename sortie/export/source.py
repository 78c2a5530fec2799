"""The run an export reads: its stored episodes and records, checked for the right family."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sortie.core.errors import ConfigError
from sortie.core.records_io import Trajectory, read_trajectory
from sortie.core.trajectory import Outcome
from sortie.run.store import Store, StoredEpisode


@dataclass(frozen=True, slots=True)
class StoredRun:
    """One run of a results store: its configuration, its family and its episodes."""

    run_id: str
    config: dict[str, Any]
    family: str
    episodes: list[StoredEpisode]

    def scored(self) -> Iterator[tuple[StoredEpisode, Trajectory]]:
        """Yield the episodes the agent played to an end (not those ended by an error)."""
        for episode in self.episodes:
            if episode.outcome != Outcome.ERROR:
                yield episode, read_trajectory(episode.record)


def open_run(store: Store, run_id: str, families: frozenset[str], command: str) -> StoredRun:
    """Return run ``run_id`` of ``store`` if its family is one of ``families``.

    Raises:
        ConfigError: no such run (the runs there are listed), a run with no episodes, or one
            of another family (``command`` is the export that was asked for).
    """
    config = store.run_config(run_id)
    if config is None:
        runs = ", ".join(store.runs()) or "none"
        raise ConfigError(f"run {run_id!r} is not in {store.path}; its runs: {runs}")
    episodes = store.episodes(run_id)
    if not episodes:
        raise ConfigError(f"run {run_id!r} has no finished episodes: nothing to export")
    family = read_trajectory(episodes[0].record).header.episode.family
    if family not in families:
        wanted = " or ".join(sorted(families))
        raise ConfigError(
            f"sortie export {command} reads {wanted} runs; run {run_id!r} is {family}"
            + (" (use sortie export demos)" if family != "household" else " (use sft or dpo)")
        )
    return StoredRun(run_id, config, family, episodes)
