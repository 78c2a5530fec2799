"""A suite generated on demand (``sortie generate FAMILY``): what is asked, and its file.

Each family names its generator (``Family.generator``), a function of a ``GenerateRequest``
and an ``echo`` that writes the suite file; it reads the fields its family needs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sortie.core.episode import EpisodeSpec
from sortie.core.records_io import SuiteHeader, write_suite

Echo = Callable[[str], object]
"""Where a generator says what it wrote."""


@dataclass(frozen=True, slots=True)
class GenerateRequest:
    """What ``sortie generate FAMILY`` asks of the family's generator (each reads its own)."""

    level: str | None = None
    """A level (rescue)."""
    types: str | None = None
    """Mission types (aerial) or task templates (household)."""
    world: str | None = None
    """The world to generate in; None: the family's worlds in turn."""
    count: int = 10
    """Episodes to write."""
    seed: int = 0
    """Generation seed."""
    out: Path | None = None
    """Suite file to write; None: a name from the family, the kind and the seed."""


def block_settings(key: str, worlds: Sequence[str], request: GenerateRequest) -> dict[str, Any]:
    """Return a generated suite's settings: its seed, count and worlds, under ``key``."""
    return {
        "seeds": {key: request.seed},
        "counts": {key: request.count},
        "worlds": {key: list(worlds)},
    }


def write_generated(
    path: Path, made_by: tuple[str, str], settings: dict[str, Any], episodes: list[EpisodeSpec]
) -> None:
    """Write a generated suite: ``made_by`` is its generator and version."""
    header = SuiteHeader(
        suite=path.stem, generator=made_by[0], generator_version=made_by[1], settings=settings
    )
    write_suite(path, header, episodes)
