"""The results store: one SQLite file (WAL mode) of runs, episodes, metrics and stages.

Each finished episode is written in one transaction, so a reader (or a resumed run after a
kill) sees whole episodes or nothing of them. Trajectory records stay JSONL files beside the
store; the store keeps their paths relative to its folder, so the folder can be moved.

A run has one writer at a time: ``begin_run`` claims the run id with an OS file lock
(``<store>.<run id>.lock``, holding the writer's pid, host and start time), which the OS drops
when the writer exits or is killed, so a killed run can be resumed at once. SQLite failures
become ``StoreError`` messages that say what to do, and a file that is not a sortie store is
refused, never written (``sortie.run.store_guard``).
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from sortie.core.episode import check_name
from sortie.core.errors import ConfigError
from sortie.core.records import ERROR_REASONS, StageRecord, Timings
from sortie.core.run_config import RunConfig
from sortie.core.version import VERSION
from sortie.run.jobs import JobResult
from sortie.run.store_guard import (
    check_store_file,
    guarded,
    lock_file,
    opening_alone,
    store_error,
)

STORE_SCHEMA_VERSION = 2
"""Version of the table layout below; kept in SQLite's ``user_version``.

2: ``runs.family``, the mission family of the run's suites (a version-1 store gains the
column when opened, filled from each run's first record header).
"""

_TABLES = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, created TEXT NOT NULL, config TEXT NOT NULL,
    code_version TEXT NOT NULL, schema_version INTEGER NOT NULL, family TEXT);
CREATE TABLE IF NOT EXISTS episodes (
    run_id TEXT NOT NULL, key TEXT NOT NULL, episode_id TEXT NOT NULL, suite TEXT NOT NULL,
    level TEXT NOT NULL, repeat INTEGER NOT NULL, seed INTEGER NOT NULL, outcome TEXT NOT NULL,
    failure_reason TEXT, steps INTEGER NOT NULL, record TEXT NOT NULL, finished TEXT NOT NULL,
    wall_seconds REAL, agent_seconds REAL, backend_seconds REAL, render_seconds REAL,
    attempts INTEGER NOT NULL, error TEXT, PRIMARY KEY (run_id, key));
CREATE TABLE IF NOT EXISTS metrics (
    run_id TEXT NOT NULL, key TEXT NOT NULL, name TEXT NOT NULL, value REAL,
    PRIMARY KEY (run_id, key, name));
CREATE TABLE IF NOT EXISTS stages (
    run_id TEXT NOT NULL, key TEXT NOT NULL, stage TEXT NOT NULL, status TEXT NOT NULL,
    target TEXT, d_init REAL, d_best REAL, d_final REAL, steps INTEGER NOT NULL,
    clock_sim REAL NOT NULL, clock_latency REAL NOT NULL, collisions INTEGER NOT NULL,
    started_step INTEGER, done_step INTEGER, PRIMARY KEY (run_id, key, stage));
"""
_STAGE_COLUMNS = (
    "stage",
    "status",
    "target",
    "d_init",
    "d_best",
    "d_final",
    "steps",
    "clock_sim",
    "clock_latency",
    "collisions",
    "started_step",
    "done_step",
)
_STAGE_MARKS = ", ".join("?" * (2 + len(_STAGE_COLUMNS)))


@dataclass(frozen=True, slots=True)
class StoredEpisode:
    """One episode row of a run, with its metrics."""

    key: str
    episode_id: str
    suite: str
    level: str
    repeat: int
    seed: int
    outcome: str
    failure_reason: str | None
    steps: int
    record: Path
    """Absolute path of the trajectory record."""
    wall_seconds: float
    attempts: int
    error: str | None
    metrics: dict[str, float]
    timings: Timings = field(default_factory=Timings)
    """Seconds spent in the agent, the backend and rendering, summed over the steps."""


class Store:
    """A results store file; the main process of a run is its only writer."""

    def __init__(self, path: Path) -> None:
        """Open (or create) the store at ``path``, refusing one from a newer sortie.

        Raises:
            ConfigError: ``path`` is a folder, an empty file, or a file (SQLite or not) that is
                not a sortie store, or a store from a newer sortie.
            StoreError: SQLite cannot open or read the file (see ``_store_error``).
        """
        self.path = path
        self.folder = path.resolve().parent
        self._claims: dict[str, tuple[Path, IO[str]]] = {}
        if not path.is_dir():
            self.folder.mkdir(parents=True, exist_ok=True)
        with opening_alone(self.folder):  # two runs creating one new store: one at a time
            check_store_file(path)
            try:
                # A busy timeout lets several runs share one store: writers wait, not fail.
                self._db = sqlite3.connect(path, timeout=60.0, isolation_level=None)
            except sqlite3.Error as error:
                raise store_error(path, "opening it", error) from error
            try:
                self._prepare()
            except BaseException:
                self._db.close()
                raise

    @guarded("opening it")
    def _prepare(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > STORE_SCHEMA_VERSION:
            raise ConfigError(
                f"{self.path}: results store schema version {version} is newer "
                f"than this sortie reads ({STORE_SCHEMA_VERSION}); upgrade sortie "
                "or choose another --store"
            )
        if version == 0:
            self._check_empty()
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL keeps every commit across a killed process; only a power cut may lose the last.
        self._db.execute("PRAGMA synchronous=NORMAL")
        if version < STORE_SCHEMA_VERSION:
            with self._transaction():
                if version == 1:
                    self._add_family_column()
                for statement in _TABLES.split(";"):
                    self._db.execute(statement)
                self._db.execute(f"PRAGMA user_version={STORE_SCHEMA_VERSION}")

    def _add_family_column(self) -> None:
        """Give a version-1 store its family column, read from each run's first record."""
        self._db.execute("ALTER TABLE runs ADD COLUMN family TEXT")
        first = self._db.execute(
            "SELECT run_id, MIN(record) FROM episodes GROUP BY run_id"
        ).fetchall()
        for run_id, record in first:
            family = _record_family(self.folder / record)
            if family is not None:
                self._db.execute("UPDATE runs SET family = ? WHERE run_id = ?", (family, run_id))

    def _check_empty(self) -> None:
        """Refuse an SQLite database of something else (it has tables but no store version)."""
        tables = [
            row[0]
            for row in self._db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        if tables:
            raise ConfigError(
                f"{self.path}: an SQLite database that is not a sortie results "
                f"store (its tables: {', '.join(tables[:5])}); it is left "
                "untouched; choose another --store"
            )

    def close(self) -> None:
        """Release the runs this store claimed and close the connection."""
        for run_id in list(self._claims):
            self._release(run_id)
        self._db.close()

    def __enter__(self) -> Store:
        """Return the open store."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the store."""
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:  # a failed COMMIT (a full disk) leaves it open
                self._db.execute("ROLLBACK")
            raise

    @guarded("recording the run")
    def begin_run(self, run_id: str, config: RunConfig) -> None:
        """Claim run ``run_id`` and record its resolved config, or check it matches the stored one.

        The claim lasts until the store is closed (or this process ends). A row written by an
        older sortie is compared as read (``run_config``: migrated, never rewritten).

        Raises:
            ParameterError: ``run_id`` cannot name a file (see ``check_name``).
            StoreError: another process is writing the run (the message names it).
            ConfigError: the run exists with another config (the message lists what differs).
        """
        check_name(run_id, "run id")
        claimed_here = run_id not in self._claims
        self._claim(run_id)
        given = config.model_dump(mode="json")
        try:
            stored = self._insert_or_read(run_id, config).model_dump(mode="json")
            if stored != given:
                raise ConfigError(
                    f"{self.path}: run {run_id!r} was made with another config "
                    f"({_differences(stored, given)}); resume it with the same "
                    "settings or choose another --run-id"
                )
        except ConfigError:
            if claimed_here:
                self._release(run_id)
            raise

    def _insert_or_read(self, run_id: str, config: RunConfig) -> RunConfig:
        """Store ``config`` as run ``run_id``'s unless it has one; return the one stored."""
        # Insert-if-absent then read back, in one write transaction: two new runs of one id
        # cannot both insert, and each compares against what is really stored.
        text = json.dumps(config.model_dump(mode="json"), sort_keys=True)
        with self._transaction():
            self._db.execute(
                "INSERT OR IGNORE INTO runs VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, _now(), text, VERSION, STORE_SCHEMA_VERSION, config.family),
            )
            row = self._db.execute(
                "SELECT config, family FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
        return self._config(run_id, *row)

    def drop_if_empty(self, run_id: str) -> None:
        """Remove run ``run_id`` if it holds no episode (a run refused before its first one)."""
        with self._transaction():
            self._db.execute(
                "DELETE FROM runs WHERE run_id = ? AND NOT EXISTS "
                "(SELECT 1 FROM episodes WHERE episodes.run_id = runs.run_id)",
                (run_id,),
            )

    def _claim(self, run_id: str) -> None:
        """Hold the run's lock file for this store, or say who holds it."""
        if run_id not in self._claims:
            real = self.path.resolve()  # one lock however the store is reached (links too)
            lock = real.with_name(f"{real.name}.{run_id}.lock")
            self._claims[run_id] = (lock, lock_file(lock, f"{self.path}: run {run_id!r}"))

    def _release(self, run_id: str) -> None:
        lock, handle = self._claims.pop(run_id)
        lock.unlink(missing_ok=True)  # while still locked: a waiting opener sees it is stale
        handle.close()

    @guarded("reading a run")
    def run_config(self, run_id: str) -> RunConfig | None:
        """Return the stored config of ``run_id``, or None if there is no such run.

        Raises:
            ConfigError: the stored config does not read as a ``RunConfig``.
        """
        row = self._db.execute(
            "SELECT config, family FROM runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        return None if row is None else self._config(run_id, *row)

    def _config(self, run_id: str, text: str, family: str | None) -> RunConfig:
        """Return a stored config, migrated on read; the row is never rewritten.

        ``RunConfig`` reads the old key names (``seed``); a row from before configs named
        their family (store schema 1) takes it from the ``family`` column.
        """
        data = json.loads(text)
        if family is not None:
            data.setdefault("family", family)
        try:
            return RunConfig.model_validate(data)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(map(str, first["loc"]))
            raise ConfigError(
                f"{self.path}: run {run_id!r}: its stored config does not read: {where}: "
                f"{first['msg']}"
            ) from None

    @guarded("reading a run")
    def run_family(self, run_id: str) -> str | None:
        """Return the mission family of ``run_id``.

        None: no such run, or a run from a version-1 store whose records were unreadable when
        the store was upgraded.
        """
        row = self._db.execute("SELECT family FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return None if row is None else row[0]

    @guarded("reading a run")
    def created(self, run_id: str) -> str | None:
        """Return when run ``run_id`` was begun (ISO 8601, UTC), or None if there is no such run."""
        row = self._db.execute("SELECT created FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return None if row is None else str(row[0])

    @guarded("listing the runs")
    def runs(self) -> list[str]:
        """Return the run ids in the store, oldest first."""
        return [r[0] for r in self._db.execute("SELECT run_id FROM runs ORDER BY created, run_id")]

    @guarded("storing an episode")
    def add(self, run_id: str, result: JobResult) -> None:
        """Write one finished episode (row, metrics, stages) in a single transaction.

        An episode already stored under the same key (an error being retried) is replaced.
        """
        job, footer = result.job, result.footer
        with self._transaction():
            for table in ("episodes", "metrics", "stages"):
                self._db.execute(
                    f"DELETE FROM {table} WHERE run_id = ? AND key = ?", (run_id, job.key)
                )
            self._db.execute(
                "INSERT INTO episodes VALUES (" + ", ".join("?" * 18) + ")",
                (
                    run_id,
                    job.key,
                    job.episode.episode_id,
                    job.suite,
                    job.episode.level,
                    job.repeat,
                    job.seed,
                    footer.outcome,
                    footer.failure_reason,
                    footer.steps,
                    os.path.relpath(job.record.resolve(), self.folder),
                    _now(),
                    result.wall_seconds,
                    result.timings.agent,
                    result.timings.backend,
                    result.timings.render,
                    result.attempts,
                    footer.error,
                ),
            )
            self._db.executemany(
                "INSERT INTO metrics VALUES (?, ?, ?, ?)",
                [(run_id, job.key, name, value) for name, value in sorted(result.metrics.items())],
            )
            self._db.executemany(
                f"INSERT INTO stages VALUES ({_STAGE_MARKS})",
                [(run_id, job.key, *_stage_row(stage)) for stage in footer.stages],
            )

    @guarded("reading a run's episodes")
    def keys(self, run_id: str, errors_only: bool = False) -> set[str]:
        """Return the keys of the run's stored episodes (only the errored ones if asked)."""
        rows = self._db.execute(
            "SELECT key, failure_reason FROM episodes WHERE run_id = ?", (run_id,)
        )
        return {key for key, reason in rows if not errors_only or reason in ERROR_REASONS}

    @guarded("reading a run's episodes")
    def episodes(self, run_id: str) -> list[StoredEpisode]:
        """Return the run's episodes with their metrics, ordered by key."""
        metrics = self._metrics(run_id)
        rows = self._db.execute(
            "SELECT key, episode_id, suite, level, repeat, seed, outcome, failure_reason, steps, "
            "record, wall_seconds, attempts, error, agent_seconds, backend_seconds, "
            "render_seconds FROM episodes WHERE run_id = ? ORDER BY key",
            (run_id,),
        )
        return [self._episode(row, metrics[row[0]]) for row in rows]

    def _episode(self, row: tuple[Any, ...], metrics: dict[str, float]) -> StoredEpisode:
        key, episode_id, suite, level, repeat, seed, outcome, reason, steps = row[:9]
        record, wall_seconds, attempts, error = row[9:13]
        agent, backend, render = (value or 0.0 for value in row[13:])
        return StoredEpisode(
            key,
            episode_id,
            suite,
            level,
            repeat,
            seed,
            outcome,
            reason,
            steps,
            self.folder / record,
            wall_seconds,
            attempts,
            error,
            metrics,
            Timings(agent=agent, backend=backend, render=render),
        )

    def _metrics(self, run_id: str) -> dict[str, dict[str, float]]:
        by_key: dict[str, dict[str, float]] = defaultdict(dict)
        rows = self._db.execute("SELECT key, name, value FROM metrics WHERE run_id = ?", (run_id,))
        for key, name, value in rows:
            by_key[key][name] = math.nan if value is None else value  # SQLite stores NaN as NULL
        return by_key

    @guarded("reading an episode's stages")
    def stages(self, run_id: str, key: str) -> list[StageRecord]:
        """Return the stage records of one episode, in mission order."""
        rows = self._db.execute(
            f"SELECT {', '.join(_STAGE_COLUMNS)} FROM stages WHERE run_id = ? AND key = ? "
            "ORDER BY rowid",
            (run_id, key),
        )
        return [
            StageRecord(name=row[0], **dict(zip(_STAGE_COLUMNS[1:], row[1:], strict=True)))
            for row in rows
        ]


def _stage_row(stage: StageRecord) -> tuple[Any, ...]:
    return (
        stage.name,
        stage.status,
        stage.target,
        stage.d_init,
        stage.d_best,
        stage.d_final,
        stage.steps,
        stage.clock_sim,
        stage.clock_latency,
        stage.collisions,
        stage.started_step,
        stage.done_step,
    )


def _differences(stored: dict[str, Any], given: dict[str, Any]) -> str:
    names = sorted(set(stored) | set(given))
    return "; ".join(
        f"{name}: stored {stored.get(name)!r}, given {given.get(name)!r}"
        for name in names
        if stored.get(name) != given.get(name)
    )


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _record_family(record: Path) -> str | None:
    """Return the family in a record's header line, or None if it cannot be read."""
    try:
        with record.open(encoding="utf-8") as lines:
            header = json.loads(lines.readline())
        return str(header["episode"]["family"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
