"""Importers: the seed benchmarks' episode files as sortie suites for their simulators.

An importer reads another benchmark's own files (RescueBench's ``level_<L>.jsonl``,
MissionBench's ``mission_config.yaml`` folders) and writes a suite whose episodes name that
benchmark's maps (``unreal.<Map>``, ``airsim.<Env>``), which only the matching backend loads.
It converts units and frames through ``sortie.backends.frames``, keeps the seed's ids in each
world's parameters, checks every episode against its family, and reports every problem it
finds (file, line or mission folder, field) before it stops; it never writes a partial suite.

They live here, not in ``sortie.generation``: generation makes new worlds and episodes for the
embedded simulator, an importer only translates episodes that exist elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.core.records_io import SuiteHeader, write_suite
from sortie.core.registry import Registry

Importer = Callable[[Sequence[Path], str], tuple[SuiteHeader, list[EpisodeSpec]]]
IMPORTERS: Registry[Importer] = Registry("importer")
IMPORTERS.add("rescuebench", "sortie.importers.rescuebench:import_rescuebench")
IMPORTERS.add(
    "missionbench", "sortie.importers.missionbench:import_missionbench", extra="missionbench"
)


def import_command(source: str, paths: Sequence[Path], out: Path, suite: str | None) -> int:
    """Import ``paths`` with importer ``source`` into suite file ``out``; return the count.

    Raises:
        UnknownNameError: no importer is called ``source``.
        ConfigError: a path is missing, or the files hold problems (all of them listed).
    """
    importer = IMPORTERS.get(source)
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise ConfigError(f"import {source}: no such file or folder: {', '.join(missing)}")
    header, episodes = importer(paths, suite or out.stem)
    write_suite(out, header, episodes)
    return len(episodes)


__all__ = ["IMPORTERS", "import_command"]
