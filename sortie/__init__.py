"""sortie: run and score long-horizon embodied missions, stage by stage.

The public API is what ``__all__`` lists; everything else may change between versions.
"""

from sortie.backends import BACKENDS, Backend, StepOutcome
from sortie.core import (
    Action,
    ConfigError,
    EpisodeSpec,
    Event,
    EventKind,
    Fly,
    Frames,
    Interact,
    Move,
    Observation,
    Pose,
    Registry,
    SortieError,
    WorldSpec,
)
from sortie.core.version import VERSION
from sortie.missions.gym_ids import register_envs
from sortie.missions.loading import load_suite
from sortie.sim.worlds import WORLDS, build_world

register_envs()  # gymnasium.make("sortie/Rescue-v1", ...) and "sortie/Aerial-v1" after import

__version__ = VERSION

__all__ = [
    "BACKENDS",
    "WORLDS",
    "Action",
    "Backend",
    "ConfigError",
    "EpisodeSpec",
    "Event",
    "EventKind",
    "Fly",
    "Frames",
    "Interact",
    "Move",
    "Observation",
    "Pose",
    "Registry",
    "SortieError",
    "StepOutcome",
    "WorldSpec",
    "__version__",
    "build_world",
    "load_suite",
]
