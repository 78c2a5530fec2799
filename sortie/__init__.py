"""sortie: run and score long-horizon embodied missions, stage by stage.

The public API is what ``__all__`` lists; everything else may change between versions. It
holds the contracts a plug-in implements or calls: an ``Agent`` (``reset(brief, seed)``,
``act(observation)``), a ``Backend``, a mission ``Family`` with its ``MissionRuntime`` and
``FamilySettings``, the words a family adds (``Vocabulary``, ``FamilyAction``, ``StepPart``),
and the episode loop and records (``run_episode``, ``read_trajectory``, ``Trajectory``).
Every name is imported from its module when first used, so ``import sortie`` costs almost
nothing (``sortie --help`` and a policy served over the wire load only what they use); the
gymnasium ids (``sortie/Rescue-v1``...) are registered as soon as gymnasium is imported.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from sortie.core.version import VERSION
from sortie.missions.gym_hook import register_with_gymnasium

if TYPE_CHECKING:  # the same names, for type checkers; at run time ``_HOME`` finds them
    from sortie.agents.base import AGENTS, Agent
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
    from sortie.missions.family import Family, FamilySettings
    from sortie.missions.loading import load_suite
    from sortie.missions.registry import FAMILIES
    from sortie.missions.runtime import MissionRuntime
    from sortie.run.episode import run_episode
    from sortie.sim.worlds import WORLDS, build_world

_HOME = {
    "sortie.agents.base": "AGENTS Agent",
    "sortie.backends": "BACKENDS Backend StepOutcome",
    "sortie.core": (
        "WORDS Action Brief ConfigError EpisodeSpec Event EventKind FamilyAction Fly Frames "
        "Interact InvalidAction MissionObservation Move Observation Pose Registry SortieError "
        "StepRecord Vocabulary WorldSpec"
    ),
    "sortie.core.records": "StepPart",
    "sortie.core.records_io": "read_trajectory",
    "sortie.core.trajectory": "Trajectory",
    "sortie.missions.family": "Family FamilySettings",
    "sortie.missions.loading": "load_suite",
    "sortie.missions.registry": "FAMILIES",
    "sortie.missions.runtime": "MissionRuntime",
    "sortie.run.episode": "run_episode",
    "sortie.sim.worlds": "WORLDS build_world",
}
"""Module -> the public names it defines (imported on first use)."""
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names.split()}

__version__ = VERSION
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

register_with_gymnasium()  # gymnasium.make("sortie/Rescue-v1", ...) once gymnasium is imported


def __getattr__(name: str) -> Any:
    if name in _MODULE_OF:
        return getattr(importlib.import_module(_MODULE_OF[name]), name)
    raise AttributeError(f"module 'sortie' has no attribute {name!r}")
