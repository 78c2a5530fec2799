"""Records, the registry and errors: the vocabulary every other package speaks."""

from sortie.core.actions import (
    Action,
    FlightPrimitive,
    Fly,
    Interact,
    Interaction,
    InvalidAction,
    Move,
    Subtask,
    TaskAction,
    TaskActionKind,
)
from sortie.core.episode import EpisodeSpec, WorldSpec
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
from sortie.core.observation import Event, EventKind, Frames, Observation, Sensor
from sortie.core.pose import Pose, wrap_degrees
from sortie.core.registry import Registry
from sortie.core.trajectory import (
    PluginRef,
    StepRecord,
    Timings,
    TrajectoryFooter,
    TrajectoryHeader,
)

__all__ = [
    "Action",
    "BackendError",
    "ConfigError",
    "EpisodeSpec",
    "Event",
    "EventKind",
    "FlightPrimitive",
    "Fly",
    "Frames",
    "Interact",
    "Interaction",
    "InvalidAction",
    "InvalidPoseError",
    "MissingExtraError",
    "Move",
    "Observation",
    "ParameterError",
    "PluginRef",
    "Pose",
    "Registry",
    "Sensor",
    "SimulationError",
    "SortieError",
    "StepRecord",
    "Subtask",
    "TaskAction",
    "TaskActionKind",
    "Timings",
    "TrajectoryFooter",
    "TrajectoryHeader",
    "UnknownNameError",
    "WorldSpec",
    "wrap_degrees",
]
