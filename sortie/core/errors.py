"""The error hierarchy of sortie.

Every error sortie raises on purpose derives from ``SortieError``::

    SortieError
    ├── ConfigError            bad input: a file, a CLI flag, a parameter
    │   ├── UnknownNameError   a registry miss ("Did you mean ...?")
    │   └── ParameterError     a value outside its allowed range
    ├── MissingExtraError      an optional dependency is not installed
    ├── SimulationError        the simulator was asked something impossible
    │   └── InvalidPoseError   a pose inside geometry or outside the world
    └── BackendError           a backend failed while running an episode

Messages say where, what was found and what is allowed.
"""

from __future__ import annotations


class SortieError(Exception):
    """Base of every error sortie raises on purpose."""


class ConfigError(SortieError, ValueError):
    """Bad input from a file, the command line or a call's arguments."""


class UnknownNameError(ConfigError, KeyError):
    """A name that no registry entry has."""

    def __str__(self) -> str:
        # KeyError quotes its message; keep it readable.
        return str(self.args[0]) if self.args else ""


class ParameterError(ConfigError):
    """A parameter value outside its allowed range or of the wrong type."""


class MissingExtraError(SortieError, ImportError):
    """An optional dependency is needed but not installed."""


class SimulationError(SortieError):
    """The simulator was asked to do something it cannot."""


class InvalidPoseError(SimulationError, ValueError):
    """A pose inside solid geometry or outside the world."""


class BackendError(SortieError):
    """A backend failed while running an episode."""
