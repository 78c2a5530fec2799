"""Human references: a recorded human run as each episode's reference path for HS and nDTW.

``human:RUN_ID`` names a stored run (``sortie play``): each of its successful episodes gives
the path the person walked (the start, then every step's position). ``rescore`` scores
another run's episodes against those paths instead of the suite's reference path; episodes
the person did not complete get NaN for the path metrics.
"""

from __future__ import annotations

from typing import Any

from sortie.core.errors import ConfigError
from sortie.core.records_io import read_trajectory
from sortie.core.trajectory import Trajectory
from sortie.missions.registry import FAMILIES
from sortie.run.store import Store, StoredEpisode

PATH_METRICS = ("hs", "ndtw", "sdtw", "sdtw_r4r")
"""The metrics that compare a path with the reference."""


def parse_reference(text: str) -> str:
    """Return the run id of a ``human:RUN_ID`` reference.

    Raises:
        ConfigError: another form (the message shows the one allowed).
    """
    kind, sep, run_id = text.partition(":")
    if kind != "human" or not sep or not run_id:
        raise ConfigError(f"--reference {text!r}: expected human:RUN_ID (a run of `sortie play`)")
    return run_id


def human_paths(store: Store, run_id: str) -> dict[str, list[list[float]]]:
    """Return the path of each episode the run completed, by episode id (first repeat wins).

    Raises:
        ConfigError: no such run, none of its episodes succeeded, or a record is not the one
            its store row names (moved or swapped: ``check_identity``).
    """
    if store.run_config(run_id) is None:
        raise ConfigError(f"reference run {run_id!r} is not in {store.path}")
    paths: dict[str, list[list[float]]] = {}
    for episode in sorted(store.episodes(run_id), key=lambda e: e.repeat):
        if episode.outcome == "success" and episode.episode_id not in paths:
            trajectory = read_trajectory(episode.record)
            check_identity(trajectory, episode, f"reference run {run_id!r}")
            paths[episode.episode_id] = positions(trajectory)
    if not paths:
        raise ConfigError(f"reference run {run_id!r} has no successful episode to follow")
    return paths


def check_identity(trajectory: Trajectory, episode: StoredEpisode, where: str) -> None:
    """Raise unless ``trajectory`` is the record ``episode``'s store row names.

    A record swapped with another one's file (of its run or another) would silently change
    every number scored against it; its episode, suite, repeat, seed, outcome and steps must
    be the row's. Suite and repeat are compared when the header writes them.

    Raises:
        ConfigError: naming the file, what it holds and what the store says.
    """
    header, footer = trajectory.header, trajectory.footer
    given = header.config.model_fields_set
    pairs = {
        "episode": (header.episode.episode_id, episode.episode_id),
        "suite": (header.config.suite, episode.suite) if "suite" in given else None,
        "repeat": (header.config.repeat, episode.repeat) if "repeat" in given else None,
        "seed": (header.seed, episode.seed),
        "outcome": (str(footer.outcome), episode.outcome),
        "steps": (footer.steps, episode.steps),
    }
    differ = [f"{name} {a!r} (the store: {b!r})" for name, (a, b) in _compared(pairs) if a != b]
    if differ:
        raise ConfigError(
            f"{where}: {episode.record} is not the record of {episode.key}: it holds "
            f"{', '.join(differ)}; the file was moved or swapped: restore it, or record the "
            f"episode again"
        )


def _compared(pairs: dict[str, tuple[Any, Any] | None]) -> list[tuple[str, tuple[Any, Any]]]:
    return [(name, pair) for name, pair in pairs.items() if pair is not None]


def positions(trajectory: Trajectory) -> list[list[float]]:
    """Return the start and every step's position of a trajectory."""
    start = trajectory.header.episode.start
    return [[start.x, start.y, start.z], *trajectory.columns.position.tolist()]


def rescore(trajectory: Trajectory, path: list[list[float]] | None) -> dict[str, float]:
    """Return the trajectory's metrics with ``path`` as its reference (None: no reference)."""
    episode = trajectory.header.episode
    mission: dict[str, Any] = {**episode.mission, "reference_path": path or []}
    header = trajectory.header.model_copy(
        update={"episode": episode.model_copy(update={"mission": mission})}
    )
    scorer = FAMILIES.get(episode.family).load_scorer()
    return scorer(trajectory.with_header(header))


def referenced_metrics(store: Store, run_id: str, reference: str) -> dict[str, dict[str, float]]:
    """Return each episode's path metrics (by job key) of ``run_id`` against ``reference``."""
    paths = human_paths(store, parse_reference(reference))
    out = {}
    for episode in store.episodes(run_id):
        trajectory = read_trajectory(episode.record)
        check_identity(trajectory, episode, f"run {run_id!r}")
        metrics = rescore(trajectory, paths.get(episode.episode_id))
        out[episode.key] = {name: metrics[name] for name in PATH_METRICS if name in metrics}
    return out
