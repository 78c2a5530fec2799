"""The shared records, the open table of words, the registry and errors: what all speak."""

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
