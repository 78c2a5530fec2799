"""The run an export reads: its stored episodes and records, checked for the right family."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sortie.core.errors import ConfigError
from sortie.core.records import Outcome
from sortie.core.records_io import read_trajectory
from sortie.core.run_config import RunConfig
from sortie.core.trajectory import Trajectory
from sortie.missions.registry import FAMILIES
from sortie.run.store import Store, StoredEpisode


@dataclass(frozen=True, slots=True)
class StoredRun:
    """One run of a results store: its configuration, its family and its episodes."""

    run_id: str
    config: RunConfig
    family: str
    episodes: list[StoredEpisode]

    def scored(self) -> Iterator[tuple[StoredEpisode, Trajectory]]:
        """Yield the episodes the agent played to an end (not those ended by an error)."""
        for episode in self.episodes:
            if episode.outcome != Outcome.ERROR:
                yield episode, read_trajectory(episode.record)


def open_run(store: Store, run_id: str, kind: str) -> StoredRun:
    """Return run ``run_id`` of ``store`` if its family makes exports of ``kind``.

    Raises:
        ConfigError: no such run (the runs there are listed), a run with no episodes, or one
            of a family that does not make this kind (the message names the kinds it makes).
    """
    config = store.run_config(run_id)
    if config is None:
        runs = ", ".join(store.runs()) or "none"
        raise ConfigError(f"run {run_id!r} is not in {store.path}; its runs: {runs}")
    episodes = store.episodes(run_id)
    if not episodes:
        raise ConfigError(f"run {run_id!r} has no finished episodes: nothing to export")
    family = store.run_family(run_id) or read_trajectory(episodes[0].record).header.episode.family
    makes = FAMILIES.get(family).exports
    if kind not in makes:
        wanted = " or ".join(
            name for name in FAMILIES.names() if kind in FAMILIES.get(name).exports
        )
        use = f"use sortie export {' or '.join(makes)}" if makes else "it makes no export"
        raise ConfigError(
            f"sortie export {kind} reads {wanted} runs; run {run_id!r} is {family} ({use})"
        )
    return StoredRun(run_id, config, family, episodes)
