"""Expert demonstrations from rescue and aerial runs: one row per step, in LeRobot's naming.

Each row is what the agent saw before a step and what it did: the ego RGB image, the body's
pose, the action (a fixed-length vector, and the exact action as JSON), the active stage and
the mission text. Columns follow LeRobot's dataset names (``observation.image``,
``observation.state``, ``action``, ``episode_index``, ``frame_index``, ``timestamp``,
``next.done``); the files are Hugging Face ``datasets`` parquet, not a LeRobot dataset
folder (docs/export.md says why).

Action vectors (``ACTION_NAMES`` names each entry, by body):

- walker: turn (degrees), speed (m/s), pitch given (0/1), pitch (degrees), grab, drop,
  open_door (0/1 each);
- multirotor: the magnitude of each of the eight flight primitives (one non-zero), then land,
  drop_payload, collect_sample, done (0/1 each).

An action the mission could not read is all zeros (its JSON says what was sent).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from PIL import Image

from sortie.core.actions import FlightPrimitive, Interaction
from sortie.core.records import Outcome
from sortie.export.files import Rows
from sortie.export.replay import replay
from sortie.export.source import StoredRun
from sortie.missions.aerial.vocabulary import TaskActionKind
from sortie.missions.registry import FAMILIES

WALKER = ("turn", "speed", "pitch_given", "pitch", *(i.value for i in Interaction))
MULTIROTOR = (*(p.value for p in FlightPrimitive), *(k.value for k in TaskActionKind))
ACTION_NAMES = {"walker": WALKER, "multirotor": MULTIROTOR}
"""The entries of the ``action`` vector, by the family's body."""
STATE_NAMES = ("x", "y", "z", "yaw")


def demo_rows(run: StoredRun, failures: bool) -> Rows:
    """Return one row per step of the run's successful episodes (``failures``: of all played).

    Episodes ended by an agent or backend error are never exported.
    """
    out = Rows()
    for index, (episode, trajectory) in enumerate(_chosen(run, failures, out)):
        success = trajectory.footer.outcome is Outcome.SUCCESS
        steps = list(replay(trajectory, episode.record, run.config, ["rgb"]))
        for frame, replayed in enumerate(steps):
            step = replayed.record
            rgb = replayed.observation.frames.rgb
            out.rows.append(
                {
                    "observation.image": None if rgb is None else Image.fromarray(rgb),
                    "observation.state": replayed.pose.as_list(),
                    "action": action_vector(run.family, step.action.model_dump(mode="json")),
                    "action.json": json.dumps(step.action.model_dump(mode="json"), sort_keys=True),
                    "episode_index": index,
                    "frame_index": frame,
                    "timestamp": replayed.observation.clock,
                    "next.done": frame == len(steps) - 1,
                    "next.success": success and frame == len(steps) - 1,
                    "stage": step.stage or "",
                    "task": replayed.brief.text,
                    "episode_id": episode.episode_id,
                    "key": episode.key,
                }
            )
        out.counts["episodes"] += 1
        out.counts["steps"] += len(steps)
    return out


def _chosen(run: StoredRun, failures: bool, out: Rows) -> Iterator[tuple[Any, Any]]:
    for episode, trajectory in run.scored():
        if failures or trajectory.footer.outcome is Outcome.SUCCESS:
            yield episode, trajectory
        else:
            out.counts["failed episodes left out"] += 1


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
