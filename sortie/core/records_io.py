"""Reading and writing JSONL files: episode suites and trajectory records.

Bad lines fail with the file, the line number and the field, all problems of a file at once.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from sortie.core.episode import SCHEMA_VERSION, EpisodeSpec, Record
from sortie.core.errors import ConfigError
from sortie.core.trajectory import StepRecord, TrajectoryFooter, TrajectoryHeader

M = TypeVar("M", bound=BaseModel)


class SuiteHeader(Record):
    """First line of a suite file: what the episodes are and how they were made."""

    kind: str = "suite"
    schema_version: int = SCHEMA_VERSION
    suite: str
    generator: str = ""
    generator_version: str = ""
    settings: dict[str, Any] = {}


@dataclass(frozen=True, slots=True)
class Suite:
    """A suite file's header and episodes."""

    header: SuiteHeader
    episodes: list[EpisodeSpec]


@dataclass(frozen=True, slots=True)
class Trajectory:
    """A whole trajectory record."""

    header: TrajectoryHeader
    steps: list[StepRecord]
    footer: TrajectoryFooter


def write_suite(path: Path, header: SuiteHeader, episodes: Iterable[EpisodeSpec]) -> None:
    """Write a suite file atomically (a reader never sees half of it)."""
    lines = [header.model_dump_json()] + [e.model_dump_json() for e in episodes]
    write_atomic(path, "\n".join(lines) + "\n")


def read_suite(path: Path) -> Suite:
    """Read a suite file, raising ConfigError listing every bad line with its field."""
    rows = _json_lines(path)
    if not rows:
        raise ConfigError(f"{path}: empty suite file")
    errors: list[str] = []
    header = _parse(SuiteHeader, rows[0], path, errors)
    episodes = [_parse(EpisodeSpec, row, path, errors) for row in rows[1:]]
    if header is not None and header.schema_version > SCHEMA_VERSION:
        errors.append(f"{path}:1: schema_version {header.schema_version} is newer than this "
                      f"sortie reads ({SCHEMA_VERSION}); upgrade sortie")  # fmt: skip
    if errors:
        raise ConfigError("\n".join(errors))
    assert header is not None
    return Suite(header, [e for e in episodes if e is not None])


def read_trajectory(path: Path) -> Trajectory:
    """Read a trajectory record, raising ConfigError on a truncated or malformed file."""
    rows = _json_lines(path)
    errors: list[str] = []
    if not rows or rows[0][1].get("kind") != "header":
        raise ConfigError(f"{path}:1: expected a header line first")
    if rows[-1][1].get("kind") != "footer":
        raise ConfigError(f"{path}:{rows[-1][0]}: no footer line: the record is truncated")
    header = _parse(TrajectoryHeader, rows[0], path, errors)
    steps = [_parse(StepRecord, row, path, errors) for row in rows[1:-1]]
    footer = _parse(TrajectoryFooter, rows[-1], path, errors)
    if errors:
        raise ConfigError("\n".join(errors))
    assert header is not None and footer is not None
    return Trajectory(header, [s for s in steps if s is not None], footer)


def _json_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    rows, errors = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            errors.append(f"{path}:{number}: not JSON: {error.msg} at column {error.colno}")
            continue
        if not isinstance(value, dict):
            errors.append(f"{path}:{number}: expected a JSON object, got {type(value).__name__}")
            continue
        rows.append((number, value))
    if errors:
        raise ConfigError("\n".join(errors))
    return rows


def _parse(model: type[M], row: tuple[int, dict[str, Any]], path: Path,
           errors: list[str]) -> M | None:
    number, value = row
    try:
        return model.model_validate(value)
    except ValidationError as error:
        for e in error.errors():
            field = ".".join(str(p) for p in e["loc"]) or "(line)"
            errors.append(f"{path}:{number}: {field}: {e['msg']}")
        return None


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Named per process, so two writers of one path (a worker orphaned by a killed run and
    # its rerun) never share a temporary file.
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)
