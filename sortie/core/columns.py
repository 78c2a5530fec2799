"""A record's steps as columns: the numbers scoring reads, in arrays, and the file that keeps them.

Scoring needs a few numbers of each step (where the agent stood, its collisions, its stage and
distance, its action's type, its events' kinds), not the whole validated step. Reading them
from the JSONL means decoding and validating every line: about 55 ms for 2,000 steps, against
about 1 ms to load them as arrays. So when a run scores a record it writes the columns beside
it (``<record>.columns.npz``), with the SHA-256 of the record's bytes; a later read whose
record still has those bytes loads the columns instead of parsing the steps
(``sortie.core.records_io.read_trajectory``).

The JSONL stays the record and the interchange format. The columns file is a cache of it: one
that is missing, stale (the record changed), of another version or malformed is ignored, and
the steps are read from the JSONL as before.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, fields
from itertools import chain
from pathlib import Path
from typing import NamedTuple

import numpy as np

from sortie.core.files import read_npz
from sortie.core.records import StepRecord

COLUMNS_VERSION = 1
"""Layout of the columns file; a file of another version is ignored (and rewritten by a run)."""
SUFFIX = ".columns.npz"
EXTRA_BYTES = 2**16
"""A columns file may be at most this much larger than its record (it is always smaller: a
step line takes hundreds of bytes, its columns under a hundred)."""


@dataclass(frozen=True)
class StepColumns:
    """One array per field that scoring reads, one row per step (events: one row per event).

    Text fields are stored as codes into a table of the names they take (``-1``: None).
    """

    position: np.ndarray
    """``(n, 3)`` float64: the pose's x, y, z after each step."""
    collisions: np.ndarray
    """``(n,)`` int64: collisions counted in each step."""
    target_distance: np.ndarray
    """``(n,)`` float64: distance to the active stage's target after the step; NaN for None."""
    stage: np.ndarray
    """``(n,)`` int32: the active stage, a code into ``stage_names``; -1 for None."""
    stage_names: np.ndarray
    action: np.ndarray
    """``(n,)`` int32: the action's type, a code into ``action_names``."""
    action_names: np.ndarray
    timings: np.ndarray
    """``(n, 3)`` float64: wall seconds spent by the agent, the backend and the renderer."""
    event_step: np.ndarray
    """``(e,)`` int64: the step of each event, in record order."""
    event_kind: np.ndarray
    """``(e,)`` int32: each event's kind, a code into ``event_names``."""
    event_names: np.ndarray

    @classmethod
    def of(cls, steps: Sequence[StepRecord]) -> StepColumns:
        """Return the columns of validated step records."""
        return cls.of_rows([StepRow.of(s) for s in steps])

    @classmethod
    def of_rows(cls, rows: Sequence[StepRow]) -> StepColumns:
        """Return the columns of steps read as rows (``StepRow.of``), in order."""
        position, collisions, distance, stages, actions, timings, events = (
            zip(*rows, strict=True) if rows else ((),) * 7
        )
        stage, stage_names = _coded(stages)
        action, action_names = _coded(actions)
        event_kind, event_names = _coded(tuple(chain.from_iterable(events)))
        counts = np.fromiter(map(len, events), np.intp, len(events))
        return cls(
            position=_triples(position),
            collisions=np.fromiter(collisions, np.int64, len(collisions)),
            target_distance=np.array([np.nan if d is None else d for d in distance], float),
            stage=stage,
            stage_names=stage_names,
            action=action,
            action_names=action_names,
            timings=_triples(timings),
            event_step=np.repeat(np.arange(len(events), dtype=np.int64), counts),
            event_kind=event_kind,
            event_names=event_names,
        )

    def __len__(self) -> int:
        return len(self.collisions)

    def action_is(self, name: str) -> np.ndarray:
        """Return, per step, whether its action is of type ``name``."""
        return self.action == _code(self.action_names, name)

    def with_event(self, kind: str) -> np.ndarray:
        """Return, per step, whether it has an event of ``kind``."""
        marked = np.zeros(len(self), bool)
        marked[self.event_step[self.event_kind == _code(self.event_names, kind)]] = True
        return marked

    def events(self, kind: str) -> int:
        """Return how many events of ``kind`` the steps have."""
        return int(np.count_nonzero(self.event_kind == _code(self.event_names, kind)))


class StepRow(NamedTuple):
    """What the columns keep of one step: a recorder keeps this, not the whole record.

    A named tuple: a recorder makes one every step, and a tuple is made in a fraction of a
    frozen dataclass's time.
    """

    position: tuple[float, float, float]
    collisions: int
    target_distance: float | None
    stage: str | None
    action: str
    timings: tuple[float, float, float]
    events: tuple[str, ...]

    @classmethod
    def of(cls, step: StepRecord) -> StepRow:
        """Return the row of a validated step record."""
        pose, timings = step.pose, step.timings
        return cls(
            (pose.x, pose.y, pose.z),
            step.collisions,
            step.target_distance,
            step.stage,
            step.action.type,
            (timings.agent, timings.backend, timings.render),
            tuple(str(e.kind) for e in step.events),
        )


def columns_file(record: Path) -> Path:
    """Return where the columns of the record at ``record`` are kept: beside it."""
    return record.with_name(record.name.removesuffix(".jsonl") + SUFFIX)


def save_columns(columns: StepColumns, digest: bytes) -> bytes:
    """Return the columns file of a record whose bytes have SHA-256 ``digest``."""
    arrays = {f.name: getattr(columns, f.name) for f in fields(StepColumns)}
    buffer = io.BytesIO()
    np.savez(
        buffer, version=np.array(COLUMNS_VERSION), digest=np.frombuffer(digest, np.uint8), **arrays
    )
    return buffer.getvalue()


def load_columns(
    data: bytes, digest: bytes, lines: int, budget: int | None = None
) -> StepColumns | None:
    """Return the columns kept in ``data``, or None if they do not fit the record.

    They fit a record whose bytes have SHA-256 ``digest`` and hold ``lines`` step lines when
    they are of this version and well formed; otherwise the caller reads the JSONL instead.
    Their members unpack to at most ``budget`` bytes (by default the file's size: a run
    stores them uncompressed), checked before any is unpacked (``sortie.core.files``).
    """
    arrays = read_npz(data, len(data) if budget is None else budget)
    if arrays is None or not _belongs(arrays, digest):
        return None
    del arrays["version"], arrays["digest"]
    if set(arrays) != {f.name for f in fields(StepColumns)}:
        return None
    columns = StepColumns(**arrays)
    return columns if well_formed(columns, lines) else None


def _belongs(arrays: dict[str, np.ndarray], digest: bytes) -> bool:
    version, stored = arrays.get("version"), arrays.get("digest")
    return (
        version is not None
        and stored is not None
        and version.shape == ()
        and version.dtype.kind == "i"
        and int(version) == COLUMNS_VERSION
        and stored.dtype == np.uint8
        and stored.tobytes() == digest
    )


_KINDS = {
    "position": "f",
    "collisions": "i",
    "target_distance": "f",
    "stage": "i",
    "action": "i",
    "timings": "f",
    "event_step": "i",
    "event_kind": "i",
    "stage_names": "U",
    "action_names": "U",
    "event_names": "U",
}
"""The dtype kind each column must have."""


def well_formed(columns: StepColumns, lines: int) -> bool:
    """Return whether every column has its kind and shape and every code names a table entry.

    Columns that are not are not used: the record's lines are read instead.
    """
    if any(getattr(columns, name).dtype.kind != kind for name, kind in _KINDS.items()):
        return False
    n, e = lines, len(columns.event_step)
    shapes = (
        columns.position.shape == (n, 3),
        columns.timings.shape == (n, 3),
        *(getattr(columns, name).shape == (n,) for name in ("collisions", "target_distance")),
        columns.stage.shape == (n,) and columns.action.shape == (n,),
        columns.event_kind.shape == (e,) and columns.event_step.shape == (e,),
    )
    finite = np.isfinite(columns.position).all() and np.isfinite(columns.timings).all()
    return (
        all(shapes)
        and bool(finite)
        and _codes_fit(columns.stage, columns.stage_names, none=True)
        and _codes_fit(columns.action, columns.action_names)
        and _codes_fit(columns.event_kind, columns.event_names)
        and _within(columns.event_step, n)
    )


def _codes_fit(codes: np.ndarray, table: np.ndarray, none: bool = False) -> bool:
    """Return whether every code indexes ``table`` (or is -1, when None is allowed)."""
    return table.ndim == 1 and _within(codes, len(table), -1 if none else 0)


def _within(values: np.ndarray, size: int, lowest: int = 0) -> bool:
    """Return whether every value lies in ``lowest .. size - 1``."""
    return values.size == 0 or bool(values.min() >= lowest and values.max() < size)


def _coded(values: Sequence[str | None]) -> tuple[np.ndarray, np.ndarray]:
    """Return ``values`` as codes into a table of their distinct names (None: -1), and the table."""
    names = sorted({v for v in values if v is not None})
    index: dict[str | None, int] = {name: i for i, name in enumerate(names)}
    index[None] = -1
    codes = np.fromiter(map(index.__getitem__, values), np.int32, len(values))
    return codes, np.array(names, dtype=str) if names else np.array([], dtype="<U1")


def _triples(values: Sequence[tuple[float, float, float]]) -> np.ndarray:
    """Return three numbers a row as an ``(n, 3)`` float64 array.

    Read as one flat run: ``np.array`` over a list of tuples took twice as long.
    """
    flat = np.fromiter(chain.from_iterable(values), float, 3 * len(values))
    return flat.reshape(-1, 3)


def _code(table: np.ndarray, name: str) -> int:
    """Return the code of ``name`` in ``table``, or -2 (matching no code) when it is absent."""
    found = np.flatnonzero(table == name)
    return int(found[0]) if len(found) else -2
