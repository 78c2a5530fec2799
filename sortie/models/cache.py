"""A content-addressed response cache: SQLite in WAL mode, keyed by the request's sha256.

The key is the sha256 of the whole request body as sent (model, messages with their images,
response format and schema, temperature, token limit, extra options) in canonical JSON. The
API key travels in a header, never in the body, so it is never part of a key or a row. The
server's address is not part of the key either: the same request to another host of the same
model is the same request. Rows keep the answer text, token usage, the latency measured when
the answer was first made (retries and waits included) and the attempts it took, so a replay
can charge the same decision time and write the same records.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    created REAL NOT NULL
)
"""


def request_key(request: dict[str, Any]) -> str:
    """Return the sha256 (hex) of ``request`` in canonical JSON (sorted keys, no spaces)."""
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


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
    """Set when the server refused the request's format (HTTP 400): the reason it gave."""


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
        row = self._connect().execute(
            "SELECT model, text, tokens_in, tokens_out, latency, attempts, rejected "
            "FROM responses WHERE key = ?", (key,)).fetchone()  # fmt: skip
        return None if row is None else CachedResponse(*row)

    def put(self, key: str, response: CachedResponse) -> None:
        """Store ``response`` under ``key`` (the first answer wins: a replay must not drift)."""
        with self._connect() as db:
            db.execute(
                "INSERT OR IGNORE INTO responses (key, model, text, rejected, tokens_in, "
                "tokens_out, latency, attempts, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (key, response.model, response.text, response.rejected, response.tokens_in,
                 response.tokens_out, response.latency, response.attempts, time.time()),
            )  # fmt: skip

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
            self._db = db
        return self._db
