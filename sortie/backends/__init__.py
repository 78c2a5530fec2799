"""Backends: the simulators missions run on, behind one protocol."""

from sortie.backends.base import (
    Backend,
    ObjectInfo,
    OracleView,
    StepOutcome,
    SupportsInteraction,
    SupportsOracleView,
)
from sortie.core.registry import Registry

BACKENDS: Registry[type] = Registry("backend")
BACKENDS.add("embedded", "sortie.backends.embedded:EmbeddedBackend")
BACKENDS.add("airsim", "sortie.backends.airsim:AirSimBackend", extra="airsim")
BACKENDS.add("unrealcv", "sortie.backends.unrealcv:UnrealCVBackend", extra="unreal")
BACKENDS.add_entry_points("sortie.backends")  # backends of installed packages (docs/plugins.md)

__all__ = [
    "BACKENDS",
    "Backend",
    "ObjectInfo",
    "OracleView",
    "StepOutcome",
    "SupportsInteraction",
    "SupportsOracleView",
]
