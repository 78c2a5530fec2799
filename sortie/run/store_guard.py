"""How the results store fails safely: SQLite errors as advice, foreign files refused, run locks.

SQLite failures (a full disk, a damaged file, a store locked for too long) become
``StoreError`` messages that name the file and say what to do; a file that is not an SQLite
database is refused, never written; ``lock_file`` gives a run id one writer at a time.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import os
import socket
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Concatenate, ParamSpec, Protocol, TypeVar

from sortie.core.errors import ConfigError, SortieError, StoreError

SQLITE_MAGIC = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""


class _HasPath(Protocol):
    path: Path


_S = TypeVar("_S", bound=_HasPath)
_P = ParamSpec("_P")
_R = TypeVar("_R")


def store_error(path: Path, doing: str, error: sqlite3.Error) -> SortieError:
    """Return the error to raise for a failed SQLite call: what happened and what to do."""
    code = (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF  # the primary result code
    if code == sqlite3.SQLITE_FULL:
        return StoreError(
            f"{path}: the disk is full ({error}) while {doing}; free disk space, "
            "then resume the run with the same --run-id (finished episodes are "
            "kept)"
        )
    if code == sqlite3.SQLITE_NOTADB:
        return ConfigError(
            f"{path}: not a sortie results store ({error}); it is left "
            "untouched; choose another --store"
        )
    if code == sqlite3.SQLITE_CORRUPT:
        return StoreError(
            f"{path}: the store is damaged ({error}) while {doing}; recover what "
            f"it holds with `sqlite3 {path} .recover | sqlite3 {path}.recovered` "
            "and use that file, or choose another --store"
        )
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return StoreError(
            f"{path}: another process kept the store locked for over a minute "
            f"while {doing} ({error}); try again when it is done"
        )
    if code in (
        sqlite3.SQLITE_READONLY,
        sqlite3.SQLITE_CANTOPEN,
        sqlite3.SQLITE_PERM,
        sqlite3.SQLITE_IOERR,
    ):
        return StoreError(
            f"{path}: cannot read or write the store while {doing} ({error}); "
            "check the file's permissions, its folder and the disk"
        )
    return StoreError(f"{path}: SQLite failed while {doing} ({error})")


def guarded(
    doing: str,
) -> Callable[[Callable[Concatenate[_S, _P], _R]], Callable[Concatenate[_S, _P], _R]]:
    """Return a decorator that turns a method's SQLite errors into ``_store_error``'s."""

    def decorate(
        method: Callable[Concatenate[_S, _P], _R],
    ) -> Callable[Concatenate[_S, _P], _R]:
        @functools.wraps(method)
        def guarded(self: _S, *args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                return method(self, *args, **kwargs)
            except sqlite3.Error as error:
                raise store_error(self.path, doing, error) from error

        return guarded

    return decorate


def check_store_file(path: Path) -> None:
    """Refuse a path that holds something other than an SQLite file (a new path is fine)."""
    if not path.exists():
        return
    if path.is_dir():
        raise ConfigError(f"{path}: a folder, not a results store file; pass --store FILE")
    with path.open("rb") as file:
        head = file.read(len(SQLITE_MAGIC))
    found = "an empty file (0 bytes)" if not head else "not an SQLite file"
    if head != SQLITE_MAGIC:
        raise ConfigError(
            f"{path}: not a sortie results store ({found}); it is left "
            "untouched; delete it or choose another --store"
        )


@contextlib.contextmanager
def opening_alone(folder: Path) -> Iterator[None]:
    """Hold the store folder's lock while a store in it is checked, created or upgraded.

    SQLite creates the file empty and writes its first page only at the first commit; a second
    run opening the same new store in between would find an empty file and refuse it. With
    the folder locked (a lock on the folder itself: nothing is left beside the store), the
    second waits until the first has written the store's tables.
    """
    handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # closing releases the lock


def lock_file(path: Path, what: str) -> IO[str]:
    """Return ``path`` opened and exclusively locked, stamped with this process; or refuse.

    Raises:
        StoreError: another process holds the lock (the message names its pid and host).
        ConfigError: ``path`` is a symbolic link (it is never followed: writing through it
            would truncate whatever it points at).
    """
    while True:
        handle = _open_own(path)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise StoreError(
                f"{what} is being written by {holder} (lock {path}); wait for it "
                "to finish or stop it, or choose another --run-id"
            ) from None
        if _same_file(handle, path):  # else its last holder removed it as we opened it
            break
        handle.close()
    handle.truncate(0)
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    handle.write(f"pid {os.getpid()} on {socket.gethostname()} since {since}\n")
    handle.flush()
    return handle


def _open_own(path: Path) -> IO[str]:
    """Open ``path`` for appending without following a symbolic link at its last part."""
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ConfigError(
                f"{path}: a symbolic link where a lock file belongs; it is left untouched "
                "(and so is what it points at): remove it"
            ) from None
        raise
    return os.fdopen(descriptor, "a+")


def _same_file(handle: IO[str], path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(handle.fileno()), path.stat())
    except FileNotFoundError:
        return False
