"""The error hierarchy of sortie.

Every error sortie raises on purpose derives from ``SortieError``::

    SortieError
    ├── ConfigError            bad input: a file, a CLI flag, a parameter
    │   ├── UnknownNameError   a registry miss ("Did you mean ...?")
    │   └── ParameterError     a value outside its allowed range
    ├── MissingExtraError      an optional dependency is not installed
    ├── SimulationError        the simulator was asked something impossible
    │   └── InvalidPoseError   a pose inside geometry or outside the world
    │       └── InvalidStartError  an episode's own start pose is one (also a ConfigError)
    ├── BackendError           a backend failed while running an episode
    ├── StoreError             the results store cannot be used (disk full, damaged, claimed)
    └── RunAbortedError        a run stopped after too many agent or backend errors in a row

Elsewhere, beside their cause: ``models.client.ModelCallError`` (a SortieError: a model call
failed for good), ``models.client.QuotaError`` (both: the account's quota is spent, which
stops the run) and ``models.client.ReplayMissError`` (a ConfigError: a replay asked for an
answer its cache does not hold).

Messages say where, what was found and what is allowed.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


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


class InvalidStartError(InvalidPoseError, ConfigError):
    """An episode's start pose is inside geometry, in the air or outside the world: bad input."""


class BackendError(SortieError):
    """A backend failed while running an episode."""


class StoreError(SortieError):
    """The results store cannot be used: a full disk, a damaged file, a run claimed by another."""


class RunAbortedError(SortieError):
    """A run stopped early after too many episodes in a row ended in an agent or backend error.

    What finished is stored; the message says how many errors, the last one, and how to resume.
    """


def did_you_mean(name: str, options: Iterable[str]) -> str:
    """Return `` Did you mean 'x'?`` for the option nearest ``name``, or nothing if none is near."""
    close = difflib.get_close_matches(name, list(options), n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""
