"""The shared records, the open table of words, the registry and errors: what all speak.

Each name is imported from its module when first used (``__getattr__``), so importing a light
module of the package (``sortie.core.errors``) does not build every pydantic record: the
command line's help and a worker's start stay quick.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, for type checkers; at run time ``_HOME`` finds them
    from sortie.core.actions import (
        Action,
        FamilyAction,
        FlightPrimitive,
        Fly,
        Interact,
        Interaction,
        InvalidAction,
        Move,
    )
    from sortie.core.episode import EpisodeSpec, Placement, WorldSpec
    from sortie.core.errors import (
        BackendError,
        ConfigError,
        InvalidPoseError,
        MissingExtraError,
        ParameterError,
        SimulationError,
        SortieError,
        UnknownNameError,
    )
    from sortie.core.observation import (
        Brief,
        Event,
        EventKind,
        Frames,
        MissionObservation,
        Observation,
        Sensor,
    )
    from sortie.core.pose import Pose, wrap_degrees
    from sortie.core.records import (
        PluginRef,
        StageRecord,
        StepRecord,
        Timings,
        TrajectoryFooter,
        TrajectoryHeader,
    )
    from sortie.core.registry import Registry
    from sortie.core.vocabulary import WORDS, Vocabulary

_HOME = {
    "sortie.core.actions": (
        "Action FamilyAction FlightPrimitive Fly Interact Interaction InvalidAction Move"
    ),
    "sortie.core.episode": "EpisodeSpec Placement WorldSpec",
    "sortie.core.errors": (
        "BackendError ConfigError InvalidPoseError MissingExtraError ParameterError "
        "SimulationError SortieError UnknownNameError"
    ),
    "sortie.core.observation": "Brief Event EventKind Frames MissionObservation Observation Sensor",
    "sortie.core.pose": "Pose wrap_degrees",
    "sortie.core.records": (
        "PluginRef StageRecord StepRecord Timings TrajectoryFooter TrajectoryHeader"
    ),
    "sortie.core.registry": "Registry",
    "sortie.core.vocabulary": "WORDS Vocabulary",
}
"""Module -> the public names it defines (imported on first use)."""
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names.split()}

__all__ = [
    "Action",
    "BackendError",
    "Brief",
    "ConfigError",
    "EpisodeSpec",
    "Event",
    "EventKind",
    "FamilyAction",
    "FlightPrimitive",
    "Fly",
    "Frames",
    "Interact",
    "Interaction",
    "InvalidAction",
    "InvalidPoseError",
    "MissingExtraError",
    "MissionObservation",
    "Move",
    "Observation",
    "ParameterError",
    "Placement",
    "PluginRef",
    "Pose",
    "Registry",
    "Sensor",
    "SimulationError",
    "SortieError",
    "StageRecord",
    "StepRecord",
    "Timings",
    "TrajectoryFooter",
    "TrajectoryHeader",
    "UnknownNameError",
    "Vocabulary",
    "WORDS",
    "WorldSpec",
    "wrap_degrees",
]


def __getattr__(name: str) -> Any:
    if name in _MODULE_OF:
        return getattr(importlib.import_module(_MODULE_OF[name]), name)
    raise AttributeError(f"module 'sortie.core' has no attribute {name!r}")
