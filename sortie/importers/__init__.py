"""Importers: the seed benchmarks' episode files as sortie suites for their simulators.

An importer reads another benchmark's own files (RescueBench's ``level_<L>.jsonl``,
MissionBench's ``mission_config.yaml`` folders) and writes a suite whose episodes name that
benchmark's maps (``unreal.<Map>``, ``airsim.<Env>``), which only the matching backend loads.
It converts units and frames through ``sortie.backends.frames``, keeps the seed's ids in each
world's parameters, checks every episode against its family, and reports every problem it
finds (file, line or mission folder, field) before it stops; it never writes a partial suite.
EMMOE's task folders are the exception to the backend rule: Habitat has no backend here, so
``emmoe`` places each task on one of the embedded simulator's seeded apartments and proves it
playable with generation's oracle replay (a task that fits none is skipped, with its reason).

They live here, not in ``sortie.generation``: generation makes new worlds and episodes for the
embedded simulator, an importer only translates episodes that exist elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path

from sortie.core.episode import EpisodeSpec
from sortie.core.errors import ConfigError
from sortie.core.records_io import SuiteHeader, write_suite
from sortie.core.registry import Registry, check_arguments

Importer = Callable[..., tuple[SuiteHeader, list[EpisodeSpec]]]
"""``(paths, suite, **options) -> (header, episodes)``; options are the importer's own."""
IMPORTERS: Registry[Importer] = Registry("importer")
IMPORTERS.add("rescuebench", "sortie.importers.rescuebench:import_rescuebench")
IMPORTERS.add(
    "missionbench", "sortie.importers.missionbench:import_missionbench", extra="missionbench"
)
IMPORTERS.add("emmoe", "sortie.importers.emmoe_suite:import_emmoe")
IMPORTERS.add_entry_points("sortie.importers")  # of installed packages (docs/plugins.md)
HEADER_BYTES = 1 << 20
"""Most of an existing ``--out`` file read to tell whether it is a suite (its first line)."""


def import_suite(
    source: str,
    paths: Sequence[Path],
    out: Path,
    suite: str | None,
    options: Mapping[str, str] | None = None,
) -> tuple[SuiteHeader, int]:
    """Import ``paths`` with importer ``source`` into suite ``out``; return its header and count.

    ``options`` are the importer's own keyword arguments (``emmoe``: ``attributes``). What
    an importer skipped without stopping (``emmoe``: tasks that fit no apartment) is in the
    header's ``settings.skipped``.

    Raises:
        UnknownNameError: no importer is called ``source``.
        ConfigError: a path is missing, ``out`` cannot be written (``check_out``), an option
            is not the importer's, or the files hold problems (all of them listed).
    """
    importer = IMPORTERS.get(source)
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise ConfigError(f"import {source}: no such file or folder: {', '.join(missing)}")
    check_out(out)
    given = dict(options or {})
    check_arguments(f"importer {source!r}", partial(importer, paths, suite), given)
    header, episodes = importer(paths, suite or out.stem, **given)
    write_suite(out, header, episodes)
    return header, len(episodes)


def check_out(out: Path) -> None:
    """Refuse, before any work, an ``out`` that a suite cannot replace.

    A suite is written whole beside ``out`` and renamed over it. ``out`` may be new or a
    suite file (an earlier import, replaced); a folder, a device or FIFO, a file that is not
    a sortie suite (a user's own file, never overwritten) or a parent that is not a folder
    is refused, naming the path.

    Raises:
        ConfigError: naming ``out`` and what is in the way.
    """
    parent = out.parent
    if parent.exists() and not parent.is_dir():
        raise ConfigError(f"--out {out}: {parent} is not a folder")
    if not out.exists() and not out.is_symlink():
        return
    if out.is_dir():
        raise ConfigError(f"--out {out}: is a folder; give the suite file's path (suite.jsonl)")
    if not out.is_file():
        raise ConfigError(f"--out {out}: exists and is not a regular file; choose another --out")
    if not _is_suite(out):
        raise ConfigError(
            f"--out {out}: exists and is not a sortie suite file; it is not overwritten: "
            "choose another --out or remove it"
        )


def _is_suite(path: Path) -> bool:
    """Return whether ``path``'s first line is a suite header (an earlier import or suite)."""
    try:
        with path.open("rb") as file:
            first = file.readline(HEADER_BYTES)
        return SuiteHeader.model_validate_json(first).kind == "suite"
    except (OSError, ValueError):
        return False


def import_command(source: str, paths: Sequence[Path], out: Path, suite: str | None) -> int:
    """Import ``paths`` with importer ``source`` into suite file ``out``; return the count.

    Raises:
        UnknownNameError: no importer is called ``source``.
        ConfigError: a path is missing, or the files hold problems (all of them listed).
    """
    return import_suite(source, paths, out, suite)[1]


__all__ = ["IMPORTERS", "import_command", "import_suite"]
