"""Read a suite with every episode checked by its family, and list the packaged suites."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from sortie.core.records_io import Suite
from sortie.missions.registry import FAMILIES, check_episode
from sortie.suites import read, suite_names


def load_suite(name: str | Path) -> Suite:
    """Return the suite file at path ``name`` if there is one, else the packaged suite ``name``.

    Every episode passes its family's check (``sortie.missions.registry.check_episode``).

    Raises:
        ConfigError: ``name`` looks like a path (it has a folder or ends in ``.jsonl``) but no
            file is there, or the file is not a valid suite (an episode its family refuses).
        UnknownNameError: no packaged suite has that name (the message suggests one).
    """
    return read(name, check=check_episode)


def suite_table() -> list[dict[str, Any]]:
    """Return one row per packaged suite: its family, episodes, groups and generator.

    The groups are what its family's tables head rows by (``level``, ``type``): each with
    its episode count, in first-seen order.
    """
    rows = []
    for name in suite_names():
        suite = read(name)
        families = Counter(e.family for e in suite.episodes)
        family = FAMILIES.get(next(iter(families))) if len(families) == 1 else None
        group = family.group if family else "level"
        keys = family.groupings.get(group) if family else None
        counts = Counter(k for e in suite.episodes for k in (keys(e) if keys else [e.level or "-"]))
        rows.append(
            {
                "suite": name,
                "family": ", ".join(families),
                "episodes": len(suite.episodes),
                "grouped by": group,
                "groups": dict(counts),
                "made by": f"{suite.header.generator} {suite.header.generator_version}".strip(),
            }
        )
    return rows
