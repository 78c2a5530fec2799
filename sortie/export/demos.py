"""Expert demonstrations from rescue and aerial runs: one row per step, in LeRobot's naming.

Each row is what the agent saw before a step and what it did: the ego RGB, depth and
semantic images, the body's pose before and after, the action (a fixed-length vector, and
the exact action as JSON), the active stage and the mission text. Columns follow LeRobot's
dataset names (``observation.image``, ``observation.state``, ``action``, ``episode_index``,
``frame_index``, ``timestamp``, ``next.done``); the files are Hugging Face ``datasets``
parquet, not a LeRobot dataset folder (docs/export.md says why).

Whole episodes go to the ``train`` or the ``validation`` split, by a hash of the episode id
(``split_of``): the same episode lands in the same split in every export, its repeats too.

Action vectors (``ACTION_NAMES`` names each entry, by body):

- walker: turn (degrees), speed (m/s), pitch given (0/1), pitch (degrees), grab, drop,
  open_door (0/1 each);
- multirotor: the magnitude of each of the eight flight primitives (one non-zero), then land,
  drop_payload, collect_sample, done (0/1 each).

An action the mission could not read is all zeros (its JSON says what was sent).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from PIL import Image

from sortie.core.actions import FlightPrimitive, Interaction
from sortie.core.errors import ConfigError
from sortie.core.records import Outcome
from sortie.core.records_io import read_trajectory
from sortie.export.replay import ReplayedStep, replay
from sortie.export.source import StoredRun
from sortie.missions.aerial.vocabulary import TaskActionKind
from sortie.missions.registry import FAMILIES
from sortie.run.store import StoredEpisode

WALKER = ("turn", "speed", "pitch_given", "pitch", *(i.value for i in Interaction))
MULTIROTOR = (*(p.value for p in FlightPrimitive), *(k.value for k in TaskActionKind))
ACTION_NAMES = {"walker": WALKER, "multirotor": MULTIROTOR}
"""The entries of the ``action`` vector, by the family's body."""
STATE_NAMES = ("x", "y", "z", "yaw")
SENSORS = ("rgb", "depth", "semantic")
"""The images replayed for every step."""
SPLITS = ("train", "validation")
VALIDATION = 0.1
"""The share of episodes in the validation split: RescueBench's 9:1."""


def split_point(episode_id: str) -> float:
    """Return where ``episode_id`` falls in [0, 1): the first 8 bytes of its SHA-256."""
    digest = hashlib.sha256(episode_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def split_of(episode_id: str, validation: float = VALIDATION) -> str:
    """Return the split of ``episode_id``: ``validation`` below the share, else ``train``.

    A larger share only moves episodes from train to validation, never back.
    """
    return "validation" if split_point(episode_id) < validation else "train"


@dataclass
class DemoSplits:
    """The episodes of each split, and the counts of what was left out and written."""

    episodes: dict[str, list[tuple[int, StoredEpisode]]] = field(default_factory=dict)
    """Each split's episodes with their ``episode_index``; a split with none is absent."""
    counts: Counter[str] = field(default_factory=Counter)
    """Episodes left out, and episodes and steps written (by split) as ``rows_of`` goes."""


def demo_splits(run: StoredRun, failures: bool, validation: float = VALIDATION) -> DemoSplits:
    """Return the run's successful episodes (``failures``: all played) by split.

    Episodes ended by an agent or backend error are never exported.

    Raises:
        ConfigError: ``validation`` is not a share in [0, 1).
    """
    if not 0.0 <= validation < 1.0:
        raise ConfigError(f"--validation {validation}: expected a share in [0, 1), e.g. 0.1")
    out = DemoSplits()
    played = [e for e in run.episodes if e.outcome != Outcome.ERROR]
    for index, episode in enumerate(e for e in played if failures or e.outcome == Outcome.SUCCESS):
        out.episodes.setdefault(split_of(episode.episode_id, validation), []).append(
            (index, episode)
        )
    left_out = 0 if failures else sum(e.outcome != Outcome.SUCCESS for e in played)
    if left_out:
        out.counts["failed episodes left out"] = left_out
    return out


def rows_of(run: StoredRun, split: DemoSplits, name: str) -> Iterator[dict[str, Any]]:
    """Yield the rows of split ``name``, one per step, replaying its episodes in turn."""
    for index, episode in split.episodes.get(name, []):
        trajectory = read_trajectory(episode.record)
        success = trajectory.footer.outcome is Outcome.SUCCESS
        steps = replay(trajectory, episode.record, run.config, SENSORS)
        last = len(trajectory.steps) - 1
        for frame, replayed in enumerate(steps):
            row = demo_row(run.family, replayed)
            row.update(
                {
                    "episode_index": index,
                    "frame_index": frame,
                    "next.done": frame == last,
                    "next.success": success and frame == last,
                    "episode_id": episode.episode_id,
                    "key": episode.key,
                }
            )
            yield row
        done = {"episodes": 1, "steps": last + 1}
        split.counts.update(done)
        split.counts.update({f"{name} {what}": count for what, count in done.items()})


def demo_row(family: str, replayed: ReplayedStep) -> dict[str, Any]:
    """Return what one replayed step shows and does (the columns that need no episode)."""
    step, frames = replayed.record, replayed.observation.frames
    action = step.action.model_dump(mode="json")
    stages = [name for name, _ in replayed.brief.stages]
    return {
        "observation.image": None if frames.rgb is None else Image.fromarray(frames.rgb),
        "observation.depth": frames.depth,
        "observation.semantic": frames.semantic,
        "observation.state": replayed.pose.as_list(),
        "next.observation.state": step.pose.as_list(),
        "action": action_vector(family, action),
        "action.json": json.dumps(action, sort_keys=True),
        "timestamp": replayed.observation.clock,
        "stage": step.stage or "",
        "stage_index": stages.index(step.stage) if step.stage in stages else -1,
        "task": replayed.brief.text,
        "semantic_classes": json.dumps(replayed.brief.semantic_classes, sort_keys=True),
    }


def peeked(
    rows: Iterator[dict[str, Any]],
) -> tuple[dict[str, Any] | None, Iterator[dict[str, Any]]]:
    """Return the first of ``rows`` (None: there are none) and all of them, that one included."""
    first = next(rows, None)
    return first, rows if first is None else chain([first], rows)


def demo_features(first: dict[str, Any]) -> Any:
    """Return the ``datasets`` features of the demo rows, sized by the ``first`` row's images.

    Depth is float32 metres (``inf`` where nothing was hit) and semantic int32 instance ids,
    both exact ``Array2D``s: smaller than ``datasets``' 16-bit images here, and not rounded.
    """
    import datasets

    height, width = first["observation.depth"].shape
    number = datasets.Value("float64")
    text = datasets.Value("string")
    return datasets.Features(
        {
            "observation.image": datasets.Image(),
            "observation.depth": datasets.Array2D((height, width), "float32"),
            "observation.semantic": datasets.Array2D((height, width), "int32"),
            "observation.state": datasets.List(number),
            "next.observation.state": datasets.List(number),
            "action": datasets.List(number),
            "action.json": text,
            "timestamp": number,
            "stage": text,
            "stage_index": datasets.Value("int64"),
            "task": text,
            "semantic_classes": text,
            "episode_index": datasets.Value("int64"),
            "frame_index": datasets.Value("int64"),
            "next.done": datasets.Value("bool"),
            "next.success": datasets.Value("bool"),
            "episode_id": text,
            "key": text,
        }
    )


def action_names(family: str) -> tuple[str, ...]:
    """Return the entries of the action vector of ``family``'s body."""
    return ACTION_NAMES[FAMILIES.get(family).body]


def action_vector(family: str, action: dict[str, Any]) -> list[float]:
    """Return a stored action as the family's fixed-length vector (see the module docstring)."""
    names = action_names(family)
    vector = dict.fromkeys(names, 0.0)
    kind = action.get("type")
    if kind == "move":
        vector["turn"], vector["speed"] = float(action["turn"]), float(action["speed"])
        if action.get("pitch") is not None:
            vector["pitch_given"], vector["pitch"] = 1.0, float(action["pitch"])
    elif kind in ("interact", "task") and action.get("kind") in vector:
        vector[str(action["kind"])] = 1.0
    elif kind == "fly" and action.get("primitive") in vector:
        vector[str(action["primitive"])] = float(action["magnitude"])
    return [vector[name] for name in names]
