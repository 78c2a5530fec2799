"""The navigator's training sequences: one per episode, read from a ``sortie export demos`` folder.

A sequence holds, for every step of one episode, the network's input (the ego view as
``policy.view_input`` makes it, whether the casualty is carried) and the expert's action as a
class of ``policy.ACTIONS``, plus the episode's two goal images (before and after the
pick-up). The demos carry the images, the actions and the stages; carrying is read off the
stage (S3 and S4 begin at the pick-up: ``StepRecord.stage`` is the stage active during the
step, so it says what the agent held when it chose). The goal images are the brief's, which
the export does not keep: each episode's brief is made again by replaying its first step.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sortie.agents.navigator import policy
from sortie.core.episode import EpisodeSpec
from sortie.core.records_io import read_trajectory
from sortie.core.serialize import action_from_dict
from sortie.export.files import split_file
from sortie.export.replay import replay
from sortie.export.source import open_run
from sortie.run.store import Store

CARRYING_STAGES = frozenset({"S3", "S4"})
"""The stages during which the walker carries the casualty."""
COLUMNS = ["observation.image", "observation.depth", "action.json", "stage", "episode_id"]


@dataclass(frozen=True, slots=True)
class Sequence:
    """One episode's steps as the network reads them, and the expert's action at each."""

    episode_id: str
    views: NDArray[np.float32]
    """(T, 4, S, S): RGB and depth of each step."""
    carrying: NDArray[np.float32]
    """(T,): 1.0 where the casualty was carried."""
    labels: NDArray[np.int64]
    """(T,): the expert's action, an index into ``policy.ACTIONS``."""
    goals: NDArray[np.float32]
    """(2, 3, S, S): the goal image while not carrying, then while carrying."""

    def __len__(self) -> int:
        """Return the number of steps."""
        return len(self.labels)


def episode_goals(
    store: Path, run_id: str, size: int
) -> tuple[dict[str, NDArray[np.float32]], list[EpisodeSpec]]:
    """Return each episode of the run's goal images by episode id, and the episodes played.

    The brief is made again by replaying each record's reset (the images are not stored).
    """
    with Store(store) as opened:
        run = open_run(opened, run_id, "demos")
    goals, played = {}, []
    for episode in run.episodes:
        trajectory = read_trajectory(episode.record)
        played.append(trajectory.header.episode)
        steps = replay(trajectory, episode.record, run.config, ("rgb",))
        first = next(steps, None)
        steps.close()  # type: ignore[attr-defined]  # a generator: closing it frees the backend
        if first is not None:
            goals[episode.episode_id] = policy.goal_inputs(first.brief, size)
    return goals, played


def demo_sequences(
    demos: Path, split: str, goals: Mapping[str, NDArray[np.float32]], size: int, cache: Path
) -> list[Sequence]:
    """Return the sequences of one split of a demos export (none if the split is absent)."""
    import datasets

    path = demos / split_file(split)
    if not path.exists():
        return []
    datasets.disable_progress_bars()
    table = datasets.Dataset.from_parquet(str(path), cache_dir=str(cache))
    rows = table.select_columns(COLUMNS).with_format("numpy")[:]
    ids = [str(i) for i in rows["episode_id"]]
    out = []
    for episode_id in dict.fromkeys(ids):
        where = [i for i, e in enumerate(ids) if e == episode_id]
        out.append(_sequence(episode_id, rows, where, goals[episode_id], size))
    return out


def _sequence(
    episode_id: str, rows: Mapping[str, Any], where: list[int], goals: Any, size: int
) -> Sequence:
    views = np.stack(
        [
            policy.view_input(rows["observation.image"][i], rows["observation.depth"][i], size)
            for i in where
        ]
    )
    carrying = np.array([str(rows["stage"][i]) in CARRYING_STAGES for i in where], np.float32)
    labels = np.array(
        [policy.label_of(action_from_dict(json.loads(rows["action.json"][i]))) for i in where],
        np.int64,
    )
    return Sequence(episode_id, views, carrying, labels, goals)


def label_counts(sequences: list[Sequence]) -> dict[str, int]:
    """Return how often each action is the expert's in ``sequences`` (the ones that occur)."""
    counts = np.bincount(
        np.concatenate([s.labels for s in sequences]) if sequences else np.zeros(0, np.int64),
        minlength=len(policy.ACTIONS),
    )
    return {name: int(n) for name, n in zip(policy.ACTION_NAMES, counts, strict=True) if n}


def save_sequences(path: Path, sequences: list[Sequence]) -> None:
    """Write ``sequences`` to one ``.npz`` file (no pickles), atomically."""
    lengths = np.array([len(s) for s in sequences], np.int64)
    arrays = {
        "ids": np.array([s.episode_id for s in sequences], dtype=str),
        "lengths": lengths,
        "views": np.concatenate([s.views for s in sequences]),
        "carrying": np.concatenate([s.carrying for s in sequences]),
        "labels": np.concatenate([s.labels for s in sequences]),
        "goals": np.stack([s.goals for s in sequences]),
    }
    partial = path.with_name(f".{path.name}.partial.npz")
    np.savez_compressed(partial, **arrays)  # type: ignore[arg-type]  # numpy's stub
    partial.replace(path)


def load_sequences(path: Path) -> list[Sequence]:
    """Return the sequences ``save_sequences`` wrote to ``path``."""
    with np.load(path, allow_pickle=False) as data:
        ends = np.cumsum(data["lengths"])
        starts = ends - data["lengths"]
        views, carrying, labels = data["views"], data["carrying"], data["labels"]
        return [
            Sequence(str(i), views[a:b], carrying[a:b], labels[a:b], goals)
            for i, a, b, goals in zip(data["ids"], starts, ends, data["goals"], strict=True)
        ]
