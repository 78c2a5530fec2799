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

__all__ = [
    "BACKENDS",
    "Backend",
    "ObjectInfo",
    "OracleView",
    "StepOutcome",
    "SupportsInteraction",
    "SupportsOracleView",
]
