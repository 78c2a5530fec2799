"""The committed suites, shipped with the package beside this file, and how to load them.

``read("rescue-l3-v2")`` reads a packaged suite through ``importlib.resources`` (so it works
from a wheel as from a checkout); ``read("my/suite.jsonl")`` reads any suite file.
``suite_names()`` lists the packaged ones. This package sits below the mission families and
does not know them: ``sortie.missions.loading.load_suite`` (also ``sortie.load_suite``) reads a
suite with every episode checked by its family. How the files are made, and proof that they
regenerate byte for byte, lives in ``sortie.generation.suites``.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError, UnknownNameError, did_you_mean
from sortie.core.records_io import Suite, read_suite

__all__ = ["read", "suite_file", "suite_names"]

SUFFIX = ".jsonl"


def suite_names() -> list[str]:
    """Return the names of the packaged suites, sorted (e.g. ``rescue-l1-v2``)."""
    return sorted(
        entry.name.removesuffix(SUFFIX)
        for entry in _folder().iterdir()
        if entry.name.endswith(SUFFIX)
    )


def suite_file(name: str) -> Traversable:
    """Return the packaged file of suite ``name``, or raise naming the packaged suites."""
    names = suite_names()
    if name not in names:
        hint = did_you_mean(name, names)
        raise UnknownNameError(
            f"Unknown suite {name!r}.{hint} Packaged suites: "
            f"{', '.join(names)}; or give a suite file's path"
        )
    return _folder() / f"{name}{SUFFIX}"


def read(name: str | Path, check: Callable[[EpisodeSpec], None] | None = None) -> Suite:
    """Return the suite file at path ``name`` if there is one, else the packaged suite ``name``.

    ``check`` is called on every episode (it raises ConfigError on one it refuses).

    Raises:
        ConfigError: ``name`` looks like a path (it has a folder or ends in ``.jsonl``) but no
            file is there, or the file is not a valid suite.
        UnknownNameError: no packaged suite has that name (the message suggests one).
    """
    path = Path(name)
    try:
        is_file = path.is_file()
    except OSError as error:  # a name too long for the file system, say
        raise ConfigError(
            f"suite {str(name)[:60]!r}: not a usable path ({error.strerror})"
        ) from None
    if is_file:
        return read_suite(path, check=check)
    if isinstance(name, Path) or name.endswith(SUFFIX) or len(path.parts) > 1:
        raise ConfigError(
            f"suite {str(name)!r}: no such file (packaged suites are named "
            f"without a folder or suffix, e.g. 'rescue-l1-v2')"
        )
    with resources.as_file(suite_file(name)) as packaged:
        return read_suite(Path(packaged), check=check)


def _folder() -> Traversable:
    return resources.files(__name__)
