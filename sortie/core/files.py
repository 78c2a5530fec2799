"""Reading files sortie did not just write: only regular files, bounded before reading.

A record, a columns file, a graph cache entry or an imported log may be a link to a device
(``/dev/zero`` never ends), a FIFO (a read waits for a writer for ever) or a file far larger
than any sortie writes. ``read_regular`` opens without waiting (``O_NONBLOCK``), refuses what
is not a regular file and checks the size before reading a byte. ``read_npz`` loads a derived
``.npz`` (sortie's caches) that may have been damaged since it was written: it checks every
member's compression and declared size before unpacking anything, and any failure of numpy's
loader means "not usable", never an exception.
"""

from __future__ import annotations

import io
import os
import stat
import zipfile
from pathlib import Path

import numpy as np

from sortie.core.errors import ConfigError

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
            raise ConfigError(f"{path}: {kind}; only regular files are read")
        if found.st_size > limit:
            raise ConfigError(_too_large(path, found.st_size, limit))
        data = file.read(limit + 1)  # the file may grow while it is read
    if len(data) > limit:
        raise ConfigError(_too_large(path, len(data), limit))
    return data


def _too_large(path: Path, size: int, limit: int) -> str:
    return f"{path}: {size} bytes or more; files of at most {limit} bytes are read"


def read_npz(data: bytes, budget: int) -> dict[str, np.ndarray] | None:
    """Return the arrays of the ``.npz`` file ``data``, or None if it does not load.

    Its members must be stored or deflated and declare at most ``budget`` bytes unpacked in
    all, checked before any is unpacked (the size unpacked is held to the declared one).
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
        if any(m.compress_type not in NPZ_METHODS for m in members):
            return None
        if sum(m.file_size for m in members) > budget:
            return None
        with np.load(io.BytesIO(data), allow_pickle=False) as loaded:
            return {name: loaded[name] for name in loaded.files}
    except Exception:  # damaged bytes raise a dozen kinds in numpy and zipfile: all mean unusable
        return None
