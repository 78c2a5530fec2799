"""Reading and writing JSONL files: episode suites and trajectory records.

This is the one loading path for files that come from outside: every line is checked before
pydantic sees it (UTF-8, size, nesting depth, finite numbers, no lone surrogates) and every
problem of a file is reported at once as ``file:line: field: what was found``. Limits:

- a regular file (not a FIFO or device) of at most ``MAX_FILE_BYTES``, lines of at most
  ``MAX_LINE_BYTES``;
- JSON nested at most ``MAX_DEPTH`` deep; integers of at most 19 digits; no NaN or Infinity;
- a UTF-8 byte-order mark at the start of a file is skipped.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from sortie.core.columns import (
    EXTRA_BYTES,
    StepColumns,
    StepRow,
    columns_file,
    load_columns,
    save_columns,
    well_formed,
)
from sortie.core.episode import SCHEMA_VERSION, EpisodeSpec, Name, Record, Version
from sortie.core.errors import ConfigError, StoreError
from sortie.core.files import read_regular
from sortie.core.records import (
    ERROR_REASONS,
    RECORD_SCHEMA_VERSION,
    StepRecord,
    TrajectoryFooter,
    TrajectoryHeader,
    step_model,
)
from sortie.core.trajectory import Trajectory

M = TypeVar("M", bound=BaseModel)

MAX_FILE_BYTES = 512 * 2**20
MAX_LINE_BYTES = 32 * 2**20
MAX_DEPTH = 32
_MAX_INT = 2**63
_DIGITS_AS_ZEROS = bytes.maketrans(b"0123456789", b"0" * 10)
_LONG_RUN = b"0" * 19
"""Digits enough for an integer the reader refuses (once every digit reads as a zero)."""
Row = tuple[int, dict[str, Any]]
"""A JSON line: its number in the file and its object."""
EpisodeCheck = Callable[[EpisodeSpec], None]
"""A family's check of an episode's own data; raises ConfigError (or ValueError) when bad."""


class SuiteHeader(Record):
    """First line of a suite file: what the episodes are and how they were made."""

    kind: Literal["suite"] = "suite"
    schema_version: Version = SCHEMA_VERSION
    suite: Name
    generator: str = ""
    generator_version: str = ""
    settings: dict[str, Any] = {}


@dataclass(frozen=True, slots=True)
class Suite:
    """A suite file's header and episodes."""

    header: SuiteHeader
    episodes: list[EpisodeSpec]


def write_suite(path: Path, header: SuiteHeader, episodes: Iterable[EpisodeSpec]) -> None:
    """Write a suite file atomically (a reader never sees half of it)."""
    lines = [header.model_dump_json()] + [e.model_dump_json() for e in episodes]
    write_atomic(path, "\n".join(lines) + "\n")


def read_suite(path: Path, check: EpisodeCheck | None = None) -> Suite:
    """Read a suite file, raising ConfigError listing every bad line with its field.

    ``check`` validates each episode's family data (``sortie.missions.registry.check_episode``);
    episode ids must be unique in the file.
    """
    errors: list[str] = []
    rows = _json_lines(path, errors)
    if not rows:
        raise ConfigError("\n".join(errors) or f"{path}: empty suite file")
    header = _parse(SuiteHeader, rows[0], path, errors)
    episodes = [(row[0], _parse(EpisodeSpec, row, path, errors)) for row in rows[1:]]
    if header is not None:
        errors += _version_errors(path, 1, header.schema_version)
    for number, spec in episodes:
        errors += _version_errors(path, number, spec.schema_version) if spec is not None else []
    errors += _duplicates(path, episodes)
    if check is not None:
        errors += [
            message
            for number, spec in episodes
            if spec is not None
            if (message := _checked(check, spec, path, number))
        ]
    if errors:
        raise ConfigError(_joined(errors))
    assert header is not None
    return Suite(header, [e for _, e in episodes if e is not None])


def read_trajectory(
    path: Path, check: EpisodeCheck | None = None, written: Written | None = None
) -> Trajectory:
    """Read a trajectory record, raising ConfigError on a truncated or malformed file.

    Records of layout version 1 are upgraded as they are read (see ``upgrade_v1``). When the
    record's columns file matches its bytes (``sortie.core.columns``), the header and footer
    are read, the steps' columns loaded from it, and the step lines parsed only when
    ``steps`` is first used (with the same checks, raising ConfigError there).

    ``written``: the record as this process has just written it at ``path`` (what
    ``write_record`` returned). Its bytes and columns are read as the file and its columns
    file would be, without reading them from the disk again (a run scores every record it
    writes, and loading the columns it had just saved cost more than a millisecond).
    """
    if written is not None and (columns := _written_columns(written)) is not None:
        read = _read_with(path, written.data, _step_count(written.data), columns, check)
        if read is not None:
            return read
    data = _read_bytes(path)
    read = _read_with_columns(path, data, check)
    return read if read is not None else _read_lines(path, data, check)


def write_columns(path: Path, trajectory: Trajectory) -> None:
    """Write the columns file of the record at ``path``, which was read as ``trajectory``.

    Later reads of the unchanged record load the steps' columns from it instead of parsing
    every step line (``sortie.core.columns``).
    """
    digest = hashlib.sha256(_read_bytes(path)).digest()
    write_atomic(columns_file(path), save_columns(trajectory.columns, digest))


@dataclass(frozen=True, slots=True)
class Written:
    """A record as ``write_record`` wrote it: its bytes and, when it saved them, its columns."""

    data: bytes
    columns: StepColumns | None
    """The steps' columns saved beside the record; None: none were (a full read makes them)."""


def write_record(
    path: Path, lines: Sequence[bytes], steps: Sequence[StepRow], readable: bool = False
) -> Written:
    """Write a record made of ``lines`` (UTF-8 JSON, no newline) and, when it can, its columns.

    ``steps`` are the rows of the steps the step lines were written from (a recorder keeps
    these, not the records). Their columns are the ones a read of the lines would make (each
    number reads back as written) when every step line passes the reader's checks by
    construction: short enough, nothing nested too deep, no escape that could be a lone
    surrogate, no integer of 19 digits or more. ``readable``: the writer of the step lines
    knows they do (``StepDraft.readable``); otherwise they are scanned for it. Then scoring
    the record loads its columns instead of parsing every line it has just written;
    otherwise the columns are left for a full read to make (``write_columns``).
    """
    data = b"\n".join([*lines, b""])  # the final newline without another copy of the record
    write_atomic(path, data)
    side = columns_file(path)
    ends = _long_integer(lines[0]) or _long_integer(lines[-1])  # the header's and footer's
    steps_read = readable or (
        _vouched(data, len(lines[0]), len(lines[-1])) and not _long_integer(data)
    )
    if not ends and steps_read:
        columns = StepColumns.of_rows(steps)
        write_atomic(side, save_columns(columns, hashlib.sha256(data).digest()))
        return Written(data, columns)
    side.unlink(missing_ok=True)
    return Written(data, None)


_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[{\n")
"""Every byte but the opening brackets and the newline (deleted to count brackets a line)."""


def _vouched(data: bytes, first: int, last: int) -> bool:
    """Return whether every step line of ``data``, written from checked values, reads back.

    ``first`` and ``last`` are the byte lengths of the header and footer lines, which are not
    step lines. Whole-record byte scans: a loop over the lines took a microsecond a step.
    """
    steps = data[first + 1 : len(data) - last - 1]
    if not steps:
        return True
    brackets = steps.translate(None, _NOT_BRACKETS)
    return (
        max(map(len, steps.split(b"\n"))) <= MAX_LINE_BYTES
        and max(map(len, brackets.split(b"\n"))) < MAX_DEPTH
        and b"\\u" not in steps
    )


def _long_integer(data: bytes) -> bool:
    """Return whether ``data`` may hold an integer of 19 digits or more.

    Every run of that many digits must follow a decimal point (a float's leading zeros can
    make 19: 0.0012345678901234567); a run that follows anything else is an integer, or text
    that looks like one. With every digit read as a zero, the first 19 of each run after a
    point are dropped (a float's fraction has at most 21 digits; a longer one is counted, at
    no harm), then any run left of 19 counts. Scanned with bytes methods: a regular
    expression took 20 ms a MB, a loop over the runs 1.5 ms.
    """
    return _long_run(data.translate(_DIGITS_AS_ZEROS))


def _long_run(zeros: bytes) -> bool:
    """Return whether ``zeros`` (JSON with every digit read as a zero) may hold a long integer."""
    return _LONG_RUN in zeros.replace(b"." + _LONG_RUN, b".")


def _written_columns(written: Written) -> StepColumns | None:
    """Return ``written``'s columns if they would load for its bytes (``load_columns``).

    None for a record over ``MAX_FILE_BYTES``: read from the disk, it is refused as any later
    read refuses it, so a run does not score what a report cannot read.
    """
    if written.columns is None or len(written.data) > MAX_FILE_BYTES:
        return None
    lines = _step_count(written.data)
    return written.columns if lines >= 0 and well_formed(written.columns, lines) else None


def _step_count(data: bytes) -> int:
    """Return the step lines of a record written by a run: no blank line, a final newline."""
    return data.count(b"\n") - 2


def _read_with_columns(path: Path, data: bytes, check: EpisodeCheck | None) -> Trajectory | None:
    """Return the record read with its columns file, or None when that file does not fit it.

    Anything amiss (no columns file, another record's, a header or footer that does not read)
    returns None, and the whole record is read line by line, which reports what is wrong.
    """
    lines = _step_count(data)
    columns = _columns_of(columns_file(path), data, lines)
    return None if columns is None else _read_with(path, data, lines, columns, check)


def _read_with(
    path: Path, data: bytes, lines: int, columns: StepColumns, check: EpisodeCheck | None
) -> Trajectory | None:
    """Return the record ``data`` (``lines`` steps) read with its steps' ``columns``.

    Its header and footer are read; None when either does not read, or is of another layout
    version: the whole record is then read line by line, which reports what is wrong.
    """
    last_start = data.rindex(b"\n", 0, len(data) - 1) + 1
    errors: list[str] = []
    header = _parse_line(TrajectoryHeader, (1, data[: data.index(b"\n")]), path, errors)
    footer = _parse_line(TrajectoryFooter, (lines + 2, data[last_start:-1]), path, errors)
    if header is None or footer is None or header.schema_version != RECORD_SCHEMA_VERSION:
        return None
    if check is not None and (problem := _checked(check, header.episode, path, 1)):
        raise ConfigError(problem)
    family = header.episode.family
    return Trajectory(header, lambda: _step_lines(path, data, family), footer, columns)


def _columns_of(side: Path, data: bytes, lines: int) -> StepColumns | None:
    """Return the columns kept in ``side`` for the record ``data``, or None if they do not fit."""
    if lines < 0 or not data.endswith(b"\n"):
        return None
    budget = len(data) + EXTRA_BYTES
    try:
        stored = read_regular(side, budget)
    except (OSError, ConfigError):
        return None  # absent, too large, or not a regular file (a FIFO, /dev/zero): unused
    return load_columns(stored, hashlib.sha256(data).digest(), lines, budget)


def _parse_line(model: type[M], row: tuple[int, bytes], path: Path, errors: list[str]) -> M | None:
    """Return one line checked and parsed as ``model``, or None (the problem added to errors)."""
    number, line = row
    value, problem = _decode_line(line)
    if problem is not None:
        errors.append(f"{path}:{number}: {problem}")
        return None
    return _parse(model, (number, value), path, errors)


def _step_lines(path: Path, data: bytes, family: str) -> list[StepRecord]:
    """Return the step records of a record's bytes, raising ConfigError on any bad line."""
    errors: list[str] = []
    rows = _rows(path, data, errors)
    model = step_model(family)
    steps = [_parse(model, row, path, errors) for row in rows[1:-1]]
    if errors:
        raise ConfigError(_joined(errors))
    return [s for s in steps if s is not None]


def _read_lines(path: Path, data: bytes, check: EpisodeCheck | None) -> Trajectory:
    """Return the record read line by line: every line checked and parsed."""
    errors: list[str] = []
    rows = _rows(path, data, errors)
    if errors:
        raise ConfigError(_joined(errors))
    if not rows or rows[0][1].get("kind") != "header":
        raise ConfigError(f"{path}:1: expected a header line first")
    if rows[-1][1].get("kind") != "footer":
        raise ConfigError(f"{path}:{rows[-1][0]}: no footer line: the record is truncated")
    version = rows[0][1].get("schema_version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        raise ConfigError(
            f"{path}:{rows[0][0]}: schema_version: expected an integer, got {version!r}"
        )
    if version > RECORD_SCHEMA_VERSION:
        raise ConfigError(_newer(path, version, RECORD_SCHEMA_VERSION))
    if version == 1:
        rows = upgrade_v1(rows)
    header = _parse(TrajectoryHeader, rows[0], path, errors)
    model = step_model(header.episode.family if header is not None else _family_of(rows[0][1]))
    steps = [_parse(model, row, path, errors) for row in rows[1:-1]]
    footer = _parse(TrajectoryFooter, rows[-1], path, errors)
    if header is not None and check is not None:
        problem = _checked(check, header.episode, path, rows[0][0])
        errors += [problem] if problem else []
    if errors:
        raise ConfigError(_joined(errors))
    assert header is not None and footer is not None
    return Trajectory(header, [s for s in steps if s is not None], footer)


def _family_of(header: dict[str, Any]) -> str:
    """Return the family a header line names, read leniently (the header itself did not read)."""
    episode = header.get("episode")
    family = episode.get("family") if isinstance(episode, dict) else None
    return family if isinstance(family, str) else ""


def upgrade_v1(rows: list[Row]) -> list[Row]:
    """Return version-1 record lines as version 2: an agent or backend error is outcome ``error``.

    Version 1 wrote such episodes as ``failure``; nothing else in the layout changed.
    """
    (first, header), (last, footer) = rows[0], rows[-1]
    reason = footer.get("failure_reason")
    if isinstance(reason, str) and reason in ERROR_REASONS:
        footer = {**footer, "outcome": "error"}
    return [
        (first, {**header, "schema_version": RECORD_SCHEMA_VERSION}),
        *rows[1:-1],
        (last, footer),
    ]


def _newer(path: Path, found: int, known: int, line: int = 1) -> str:
    return (
        f"{path}:{line}: schema_version {found} is newer than this sortie reads ({known}); "
        "upgrade sortie"
    )


def _version_errors(path: Path, line: int, found: int) -> list[str]:
    """Return the error of a suite line whose schema version this sortie cannot read."""
    if found < 1:
        return [f"{path}:{line}: schema_version {found}: versions start at 1"]
    if found > SCHEMA_VERSION:
        return [_newer(path, found, SCHEMA_VERSION, line)]
    return []


def _duplicates(path: Path, episodes: list[tuple[int, EpisodeSpec | None]]) -> list[str]:
    """Return one error per episode id used on more than one line."""
    first: dict[str, int] = {}
    errors = []
    for number, spec in episodes:
        if spec is None:
            continue
        seen = first.setdefault(spec.episode_id, number)
        if seen != number:
            errors.append(
                f"{path}:{number}: episode_id {spec.episode_id!r} is already used on "
                f"line {seen}; episode ids must be unique in a suite"
            )
    return errors


def _checked(check: EpisodeCheck, spec: EpisodeSpec, path: Path, number: int) -> str | None:
    """Return the family check's complaint about ``spec`` as ``file:line: ...``, or None."""
    try:
        check(spec)
    except (ConfigError, ValueError) as error:
        return f"{path}:{number}: {error}"
    return None


def _json_lines(path: Path, errors: list[str]) -> list[Row]:
    """Return the file's non-blank lines as (line number, JSON object); add bad ones to errors."""
    return _rows(path, _read_bytes(path), errors)


def _rows(path: Path, data: bytes, errors: list[str]) -> list[Row]:
    """Return the non-blank lines of ``data`` (read from ``path``) as (line number, object)."""
    rows: list[Row] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        value, problem = _decode_line(line)
        if problem is not None:
            errors.append(f"{path}:{number}: {problem}")
        else:
            rows.append((number, value))
    return rows


def _read_bytes(path: Path) -> bytes:
    try:
        data = read_regular(path, MAX_FILE_BYTES)  # a FIFO or device: a ConfigError naming it
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None
    return data.removeprefix(b"\xef\xbb\xbf")


def _decode_line(line: bytes) -> tuple[Any, str | None]:
    """Return (the line's JSON object, None), or (None, what is wrong with it)."""
    if len(line) > MAX_LINE_BYTES:
        return None, f"line of {len(line)} bytes; at most {MAX_LINE_BYTES} are read"
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, f"not UTF-8 text: byte 0x{line[error.start]:02x} at column {error.start + 1}"
    try:
        value = (_PLAIN_NUMBERS if _numbers_plain(line) else _DECODER).decode(text)
    except json.JSONDecodeError as error:
        return None, f"not JSON: {error.msg} at column {error.colno}"
    except RecursionError:
        return None, f"JSON nested deeper than {MAX_DEPTH} levels"
    except ValueError as error:
        return None, f"not allowed in JSON here: {error}"
    if not isinstance(value, dict):
        return None, f"expected a JSON object, got {type(value).__name__}"
    return value, None if _plain(line) else _shape_problem(value, 1)


def _plain(line: bytes) -> bool:
    r"""Return whether no value of ``line`` can be nested too deep or hold a lone surrogate.

    A surrogate comes only from a ``\u`` escape, and nothing is nested deeper than there are
    brackets, or than its brackets outside strings nest: byte scans that spare most lines
    the walk over every value, which took about as long as parsing them. ``line`` is JSON
    that decoded.
    """
    if b"\\u" in line:
        return False
    return line.count(b"[") + line.count(b"{") < MAX_DEPTH or _nesting(line) < MAX_DEPTH


def _nesting(line: bytes) -> int:
    """Return how deep the brackets of the JSON text ``line`` nest, outside its strings.

    With every escaped backslash and escaped quote taken out, the quotes left delimit the
    strings; the text between them holds the brackets that nest. A value inside the deepest
    brackets lies one level deeper than they nest.
    """
    unescaped = line.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(unescaped.split(b'"')[::2]).translate(None, _NOT_NESTING)
    return max(accumulate(map(_NESTING_STEP.__getitem__, outside)), default=0)


_NOT_NESTING = bytes(b for b in range(256) if b not in b"[]{}")
_NESTING_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} (only finite numbers are allowed)")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text[:30]} (only finite numbers are allowed)")
    return number


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 19 or abs(number := int(text)) >= _MAX_INT:
        raise ValueError(f"integer of {len(text.lstrip('-'))} digits (at most ±2^63 allowed)")
    return number


_DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_int=_bounded_int, parse_float=_finite_float
)
"""One decoder for every line (``json.loads`` with hooks builds a new one per call)."""
_PLAIN_NUMBERS = json.JSONDecoder(parse_constant=_refuse_constant)
"""The decoder of a line none of whose numbers the hooks of ``_DECODER`` could refuse
(``_numbers_plain``): the same values, without calling Python for every number (a record's
header holds about 1,400)."""
_LARGE_EXPONENTS = (b"e000", b"e+000", b"E000", b"E+000")
"""Exponents of three digits or more, with every digit read as a zero."""


def _numbers_plain(line: bytes) -> bool:
    """Return whether every number of ``line`` reads as a finite float or a bounded integer.

    An integer reaches 2^63 only with 19 digits, and a float overflows only with an exponent
    of three digits or with 309 digits before its point: without such runs of digits the
    hooks of ``_DECODER`` refuse nothing. (Text that looks like one sends the line to them,
    at no harm.)
    """
    zeros = line.translate(_DIGITS_AS_ZEROS)
    return not (_long_run(zeros) or any(exponent in zeros for exponent in _LARGE_EXPONENTS))


def _shape_problem(value: Any, depth: int) -> str | None:
    """Return what makes ``value`` unreadable (too deep, a lone surrogate), or None."""
    if depth > MAX_DEPTH:
        return f"JSON nested deeper than {MAX_DEPTH} levels"
    if isinstance(value, str):
        return _text_problem(value)
    items: Iterable[Any] = ()
    if isinstance(value, dict):
        items = [*value.keys(), *value.values()]
    elif isinstance(value, list):
        items = value
    for item in items:
        if problem := _shape_problem(item, depth + 1):
            return problem
    return None


def _text_problem(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"a string holds a lone surrogate (\\u{ord(text[error.start]):04x}), not text"
    return None


def _joined(errors: list[str], shown: int = 50) -> str:
    """Return the errors one per line, at most ``shown`` of them."""
    more = [f"... and {len(errors) - shown} more"] if len(errors) > shown else []
    return "\n".join(errors[:shown] + more)


def _parse(model: type[M], row: Row, path: Path, errors: list[str]) -> M | None:
    number, value = row
    try:
        return model.model_validate(value)
    except ValidationError as error:
        for e in error.errors():
            field = ".".join(str(p) for p in e["loc"]) or "(line)"
            errors.append(f"{path}:{number}: {field}: {_message(e)}")
        return None


def _message(error: Any) -> str:
    """Return pydantic's complaint as what was wrong and what was found."""
    if error["type"] == "value_error":  # our validators' messages say what they got
        return str(error["msg"]).removeprefix("Value error, ")
    got = "" if error["type"] == "missing" else f", got {_shown(error.get('input'))}"
    return f"{error['msg']}{got}"


def _shown(value: Any) -> str:
    """Return a short text of a bad value for an error message."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
"""Errors of a write that mean the disk (or the user's quota) is full."""
READ_ONLY = frozenset({errno.EROFS})
"""Errors of a write that mean the file system cannot be written at all."""


def write_atomic(path: Path, content: str | bytes) -> None:
    """Write ``content`` to a temporary file beside ``path``, then rename it into place.

    A failed write leaves no temporary file, and one left by a process that died while
    writing ``path`` (killed mid-write) goes at the next write of ``path``.

    Raises:
        StoreError: the write failed (a full disk, a read-only file system: ``write_failure``).
    """
    # Named per process, so two writers of one path (a worker orphaned by a killed run and
    # its rerun) never share a temporary file.
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temporaries(path)
        if isinstance(content, bytes):
            temporary.write_bytes(content)
        else:
            temporary.write_text(content)
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        raise write_failure(path, error, "writing this file") from None


def write_failure(path: Path, error: OSError, doing: str) -> StoreError:
    """Return the error to raise for a failed write of ``path``: what happened, what to do."""
    why = error.strerror or str(error)
    if error.errno in FULL:
        return StoreError(
            f"{path}: the disk is full ({why}) while {doing}; free disk space, then run the "
            "command again (a run resumes with the same --run-id: finished episodes are kept)"
        )
    if error.errno in READ_ONLY:
        return StoreError(
            f"{path}: the file system is read-only ({why}) while {doing}; choose a folder "
            "on a writable disk (--out, --store)"
        )
    return StoreError(
        f"{path}: cannot write ({why}) while {doing}; check the folder's permissions and the disk"
    )


@contextlib.contextmanager
def writing(folder: Path, doing: str) -> Iterator[None]:
    """Turn a full disk or a read-only file system met in the block into ``write_failure``.

    Other OS errors pass unchanged: a block that also reads cannot tell a read's from a
    write's.
    """
    try:
        yield
    except OSError as error:
        if error.errno not in FULL | READ_ONLY:
            raise
        raise write_failure(Path(error.filename or folder), error, doing) from None


def _remove_stale_temporaries(path: Path) -> None:
    """Remove the temporary files of ``path`` left by processes that are gone.

    Names are matched by their ends, not by a glob: a glob compiles a pattern for every new
    name, which cost more than writing a small file.
    """
    prefix = f"{path.name}."
    with os.scandir(path.parent) as entries:
        names = [e.name for e in entries if e.name.startswith(prefix) and e.name.endswith(".tmp")]
    for name in names:
        pid = name[len(prefix) : -len(".tmp")]
        if pid.isascii() and pid.isdigit() and not _alive(int(pid)):
            (path.parent / name).unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    """Return whether process ``pid`` runs on this machine (this process counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process, or not a pid: leave its file be
    return True
