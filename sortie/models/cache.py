"""A content-addressed response cache: SQLite in WAL mode, keyed by the request's sha256.

The key is the sha256 of the server's address (normalised, without any user:password) and
the whole request body as sent (model, messages with their images, response format and
schema, temperature, token limit, extra options) in canonical JSON. Two servers may serve
different weights under one model name, so they never share an answer. The API key travels
in a header, never in the body, so it is never part of a key; answers are stored with it
scrubbed. Rows keep the answer text, token usage, the latency measured when the answer was
first made (retries and waits included) and the attempts it took, so a replay can charge the
same decision time and write the same records.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    rejected TEXT,
    tokens_in INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    latency REAL NOT NULL,
    attempts INTEGER NOT NULL,
    created REAL NOT NULL,
    malformed TEXT,
    waited REAL,
    failed_time REAL,
    served TEXT,
    reasoning TEXT,
    finish_reason TEXT,
    chat_template TEXT
)
"""
_LATER_COLUMNS = (
    ("malformed", "TEXT"),
    ("waited", "REAL"),
    ("failed_time", "REAL"),
    ("served", "TEXT"),
    ("reasoning", "TEXT"),
    ("finish_reason", "TEXT"),
    ("chat_template", "TEXT"),
)
"""Columns added after the first cache files were written (older files gain them)."""
_COLUMNS = (
    "model, text, tokens_in, tokens_out, latency, attempts, rejected, malformed, "
    "waited, failed_time, served, reasoning, finish_reason, chat_template"
)
_READ = _COLUMNS.replace("waited, failed_time", "COALESCE(waited, 0), COALESCE(failed_time, 0)")
"""What ``get`` reads: a row of an older file holds NULL where it waited nothing."""
_DEFAULT_PORTS = {"http": 80, "https": 443}


def request_key(request: dict[str, Any], base_url: str) -> str:
    """Return the sha256 (hex) of the server ``base_url`` and ``request`` in canonical JSON."""
    keyed = {"server": server_address(base_url), "request": request}
    canonical = json.dumps(keyed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def server_address(base_url: str) -> str:
    """Return ``base_url`` normalised for the cache key.

    Lower-case scheme and host, no user:password, no default port, no trailing slash:
    ``HTTP://Host:80/v1/`` is ``http://host/v1``.
    """
    parts = urlsplit(base_url.strip())
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    host = f"[{host}]" if ":" in host else host  # an IPv6 address keeps its brackets
    try:
        port = parts.port
    except ValueError:  # not a number: keep the URL as given (the request will fail anyway)
        return base_url.strip()
    netloc = host if port in (None, _DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path.rstrip("/"), parts.query, ""))


@dataclass(frozen=True, slots=True)
class CachedResponse:
    """One stored answer (or a stored refusal of the request's response format)."""

    model: str
    text: str
    tokens_in: int
    tokens_out: int
    latency: float
    attempts: int = 1
    rejected: str | None = None
    """Set when the server refused the request's format (an HTTP error): the reason it gave."""
    malformed: str | None = None
    """Set when the answer was JSON of the wrong shape: what was wrong (``text`` is the body)."""
    waited: float = 0.0
    """Seconds of ``latency`` spent waiting before retries."""
    failed_time: float = 0.0
    """Seconds of ``latency`` spent in attempts that failed."""
    served: str | None = None
    """The model the server said it served."""
    reasoning: str | None = None
    """The model's thinking, where the server sent it apart from the answer."""
    finish_reason: str | None = None
    """Why the answer ended, as the server said (``length``: cut at the token limit)."""
    chat_template: str | None = None
    """The chat template that served the answer (stated by the user, or told by the server)."""


class ResponseCache:
    """Answers by request key in one SQLite file, shared safely by worker processes (WAL).

    The connection opens on first use, so a cache can be created in one process and used in
    another (the runner builds agents in the main process only to read their sensors).
    """

    def __init__(self, path: str | Path) -> None:
        """Use the cache file at ``path`` (created on first write if missing)."""
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None

    def get(self, key: str) -> CachedResponse | None:
        """Return the answer stored under ``key``, or None."""
        row = (
            self._connect()
            .execute(f"SELECT {_READ} FROM responses WHERE key = ?", (key,))
            .fetchone()
        )
        return None if row is None else CachedResponse(*row)

    def put(self, key: str, response: CachedResponse) -> None:
        """Store ``response`` under ``key`` (the first answer wins: a replay must not drift)."""
        with self._connect() as db:
            db.execute(
                f"INSERT OR IGNORE INTO responses (key, created, {_COLUMNS}) "
                f"VALUES ({', '.join('?' * (2 + len(_COLUMNS.split(','))))})",
                (
                    key,
                    time.time(),
                    response.model,
                    response.text,
                    response.tokens_in,
                    response.tokens_out,
                    response.latency,
                    response.attempts,
                    response.rejected,
                    response.malformed,
                    response.waited,
                    response.failed_time,
                    response.served,
                    response.reasoning,
                    response.finish_reason,
                    response.chat_template,
                ),
            )

    def __len__(self) -> int:
        return int(self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close the connection (reopened on the next use)."""
        if self._db is not None:
            self._db.close()
            self._db = None

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(_SCHEMA)
            _add_later_columns(db)
            self._db = db
        return self._db


def _add_later_columns(db: sqlite3.Connection) -> None:
    """Give a cache file written before some columns existed those columns."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(responses)")}
    for column, kind in _LATER_COLUMNS:
        if column in columns:
            continue
        try:
            db.execute(f"ALTER TABLE responses ADD COLUMN {column} {kind}")
        except sqlite3.OperationalError as error:  # another worker added it a moment ago
            if "duplicate column" not in str(error):
                raise
