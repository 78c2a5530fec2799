"""Reading files sortie did not just write: only regular files, bounded before reading.

A record, a columns file, a graph cache entry or an imported log may be a link to a device
(``/dev/zero`` never ends), a FIFO (a read waits for a writer for ever) or a file far larger
than any sortie writes. ``read_regular`` opens without waiting (``O_NONBLOCK``), refuses what
is not a regular file and checks the size before reading a byte. ``read_npz`` loads a derived
``.npz`` (sortie's caches) that may have been damaged since it was written: it checks every
member's compression and declared size before unpacking anything, reads each array with
``sortie.core.npy`` (numpy's header grammar, strictly; never evaluated), and any failure means
"not usable", never an exception.
"""

from __future__ import annotations

import io
import os
import stat
import zipfile
from pathlib import Path

import numpy as np

from sortie.core.errors import ConfigError
from sortie.core.npy import read_array

_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
}
NPZ_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
"""The compression of the members of an ``.npz`` that is unpacked (numpy writes these two)."""


def read_regular(path: Path, limit: int) -> bytes:
    """Return the bytes of the regular file at ``path`` (links followed), at most ``limit``.

    Raises:
        ConfigError: ``path`` is not a regular file (a device, FIFO, socket or folder) or
            holds more than ``limit`` bytes; the message names the path.
        OSError: the file cannot be opened or read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as file:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            kind = _KINDS.get(stat.S_IFMT(found.st_mode), "not a file")
            raise ConfigError(f"{path}: cannot read: {kind}; only regular files are read")
        if found.st_size > limit:
            raise ConfigError(_too_large(path, f"{found.st_size} bytes", limit))
        data = file.read(found.st_size + 1)
        if len(data) > found.st_size:  # it grew since: read on, up to the limit
            data += file.read(limit + 1 - len(data))
    if len(data) > limit:
        raise ConfigError(_too_large(path, f"more than {limit} bytes (it grew while read)", limit))
    return data


def _too_large(path: Path, size: str, limit: int) -> str:
    return f"{path}: {size}; files of at most {limit} bytes are read"


def read_npz(data: bytes, budget: int) -> dict[str, np.ndarray] | None:
    """Return the arrays of the ``.npz`` file ``data``, or None if it does not load whole.

    Its members must be ``.npy`` arrays, stored or deflated, declaring at most ``budget``
    bytes unpacked in all: checked before any is unpacked (and zipfile holds each to its
    declared size). Each member is read whole, so its CRC is checked, and must be exactly
    one array: a damaged header cannot make part of a member read as other numbers.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            if not _members_fit(members, budget):
                return None
            return {
                m.filename[: -len(".npy")]: read_array(archive.read(m), m.filename) for m in members
            }
    except Exception:  # damaged bytes raise a dozen kinds in zipfile and numpy: all mean unusable
        return None


def _members_fit(members: list[zipfile.ZipInfo], budget: int) -> bool:
    names = [m.filename for m in members]
    return (
        all(m.compress_type in NPZ_METHODS for m in members)
        and all(name.endswith(".npy") for name in names)
        and len(set(names)) == len(names)
        and sum(m.file_size for m in members) <= budget
    )
