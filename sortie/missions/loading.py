"""Read a suite with every episode checked by its family (the files: ``sortie.suites``)."""

from __future__ import annotations

from pathlib import Path

from sortie.core.records_io import Suite
from sortie.missions.registry import check_episode
from sortie.suites import read


def load_suite(name: str | Path) -> Suite:
    """Return the suite file at path ``name`` if there is one, else the packaged suite ``name``.

    Every episode passes its family's check (``sortie.missions.registry.check_episode``).

    Raises:
        ConfigError: ``name`` looks like a path (it has a folder or ends in ``.jsonl``) but no
            file is there, or the file is not a valid suite (an episode its family refuses).
        UnknownNameError: no packaged suite has that name (the message suggests one).
    """
    return read(name, check=check_episode)
