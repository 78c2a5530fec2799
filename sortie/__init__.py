"""sortie: run and score long-horizon embodied missions, stage by stage.

The public API is what ``__all__`` lists; everything else may change between versions. It
holds the contracts a plug-in implements or calls: an ``Agent`` (``reset(brief, seed)``,
``act(observation)``), a ``Backend``, a mission ``Family`` with its ``MissionRuntime`` and
``FamilySettings``, the words a family adds (``Vocabulary``, ``FamilyAction``, ``StepPart``),
and the episode loop and records (``run_episode``, ``read_trajectory``, ``Trajectory``).
The names of the layers above the simulator and the missions (agents, runs) are imported when
first used, so ``import sortie`` stays light for a policy served over the wire.
"""

import importlib
from typing import Any

from sortie.backends import BACKENDS, Backend, StepOutcome
from sortie.core import (
    WORDS,
    Action,
    Brief,
    ConfigError,
    EpisodeSpec,
    Event,
    EventKind,
    FamilyAction,
    Fly,
    Frames,
    Interact,
    InvalidAction,
    MissionObservation,
    Move,
    Observation,
    Pose,
    Registry,
    SortieError,
    StepRecord,
    Vocabulary,
    WorldSpec,
)
from sortie.core.records import StepPart
from sortie.core.records_io import read_trajectory
from sortie.core.trajectory import Trajectory
from sortie.core.version import VERSION
from sortie.missions.family import Family, FamilySettings
from sortie.missions.gym_ids import register_envs
from sortie.missions.loading import load_suite
from sortie.missions.registry import FAMILIES
from sortie.sim.worlds import WORLDS, build_world

register_envs()  # gymnasium.make("sortie/Rescue-v1", ...) and "sortie/Aerial-v1" after import

__version__ = VERSION

_LAZY = {
    "AGENTS": "sortie.agents.base",
    "Agent": "sortie.agents.base",
    "MissionRuntime": "sortie.missions.runtime",
    "run_episode": "sortie.run.episode",
}
"""Public names imported on first use, by the module that defines them."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sortie' has no attribute {name!r}")


__all__ = [
    "AGENTS",
    "BACKENDS",
    "FAMILIES",
    "WORDS",
    "WORLDS",
    "Action",
    "Agent",
    "Backend",
    "Brief",
    "ConfigError",
    "EpisodeSpec",
    "Event",
    "EventKind",
    "Family",
    "FamilyAction",
    "FamilySettings",
    "Fly",
    "Frames",
    "Interact",
    "InvalidAction",
    "MissionObservation",
    "MissionRuntime",
    "Move",
    "Observation",
    "Pose",
    "Registry",
    "SortieError",
    "StepOutcome",
    "StepPart",
    "StepRecord",
    "Trajectory",
    "Vocabulary",
    "WorldSpec",
    "__version__",
    "build_world",
    "load_suite",
    "read_trajectory",
    "run_episode",
]
