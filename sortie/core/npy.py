r"""One ``.npy`` array read from bytes, its header parsed by a strict grammar, never evaluated.

numpy's own loader reads an array's header (a Python dict literal) with ``ast.literal_eval``:
about 30 µs an array, three quarters of the cost of loading a small one and over half of
reading a record's columns file (``sortie.core.columns``). sortie reads ``.npy`` members only
from its own ``.npz`` caches, which numpy wrote, and those may have been damaged since; so this
module accepts exactly the header numpy's writer (``numpy.lib.format``, versions 1.0, 2.0 and
3.0) gives an array whose dtype has no fields, and nothing else::

    b"\x93NUMPY" major minor         the magic string and the version: 1.0, 2.0 or 3.0
    length                           uint16 (1.0) or uint32 (2.0, 3.0), little-endian
    {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }      keys in this order
    spaces, then a newline           to the end of ``length`` bytes

``descr`` is a dtype's ``str`` (byte order, kind, size, a datetime unit), exactly as numpy
writes it for that dtype; ``shape`` a tuple as Python writes one: ``()``, ``(5,)``,
``(3, 4)``, each size in digits with no leading zero. Anything else (a dtype with fields, or
with Python objects, whose ``str`` ``'|O'`` has no size; another spelling; bytes left over)
raises ``ConfigError`` naming the member, the byte, what was found there and what is allowed.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass

import numpy as np

from sortie.core.errors import ConfigError

MAGIC = b"\x93NUMPY"
"""How a ``.npy`` file starts; its version's two bytes follow."""
LENGTH_FORMATS = {b"\x01\x00": "<H", b"\x02\x00": "<I", b"\x03\x00": "<I"}
"""By version (major, minor byte), how the header's length is stored: the versions numpy writes."""
MAX_HEADER = 10_000
"""Bytes: a longer header is refused, as numpy's reader refuses it (sortie's take 118)."""
_DESCR = re.compile(r"[<>|][a-zA-Z][0-9]{1,20}(?:\[[0-9]{0,20}[a-zA-Z]{1,2}\])?")
_SIZE = re.compile(r"0|[1-9][0-9]{0,20}")


@dataclass(frozen=True, slots=True)
class Header:
    """What an array's header declares, and where its data starts in the member."""

    dtype: np.dtype
    fortran_order: bool
    shape: tuple[int, ...]
    data_offset: int


def read_array(member: bytes, name: str) -> np.ndarray:
    """Return the one array the ``.npy`` bytes ``member`` (called ``name`` in errors) hold.

    The data must fill the rest of ``member`` exactly. The array is a writable copy, as
    numpy's loader gives.

    Raises:
        ConfigError: the header is not one numpy writes (see the module docstring), or the
            data is not the size its dtype and shape take.
    """
    header = parse_header(member, name)
    dtype, shape = header.dtype, header.shape
    count, size = math.prod(shape), len(member) - header.data_offset
    if size != count * dtype.itemsize:
        raise ConfigError(
            f"{name}: {size} bytes of data after the .npy header; allowed: "
            f"{count * dtype.itemsize}, what {dtype.str} x {shape} takes"
        )
    flat = np.frombuffer(member, dtype, count, header.data_offset).copy()
    try:
        if header.fortran_order:
            return flat.reshape(shape[::-1]).transpose()
        return flat.reshape(shape)
    except ValueError as error:  # more dimensions than numpy holds
        raise ConfigError(f"{name}: the .npy header's shape {shape}: {error}") from None


def parse_header(member: bytes, name: str) -> Header:
    """Return the header of the ``.npy`` bytes ``member``, checked against numpy's grammar.

    Raises:
        ConfigError: anything numpy's writer does not write, naming ``name`` and the byte.
    """
    start, text = _header_text(member, name)
    at = _expect(text, 0, "{'descr': '", name, start)
    close = text.find("'", at)
    descr = text[at : close if close >= 0 else len(text)]
    dtype = _dtype(descr, name, start + at)
    at = _expect(text, at + len(descr), "', 'fortran_order': ", name, start)
    fortran = text.startswith("True", at)
    if not (fortran or text.startswith("False", at)):
        raise _refused(name, start + at, text[at : at + 5], "True or False")
    at = _expect(text, at + (4 if fortran else 5), ", 'shape': (", name, start)
    shape, at = _shape(text, at, name, start)
    at = _expect(text, at, "), }", name, start)
    _padding(text, at, name, start)
    return Header(dtype, fortran, shape, start + len(text))


def _header_text(member: bytes, name: str) -> tuple[int, str]:
    """Return where the header's text starts in ``member``, and the text."""
    if member[: len(MAGIC)] != MAGIC:
        raise _refused(name, 0, member[: len(MAGIC)], f"the magic string {MAGIC!r}")
    version = member[len(MAGIC) : len(MAGIC) + 2]
    length_format = LENGTH_FORMATS.get(version)
    if length_format is None:
        found = ".".join(str(byte) for byte in version) if len(version) == 2 else "the end"
        raise _refused(name, len(MAGIC), found, "version 1.0, 2.0 or 3.0")
    start = len(MAGIC) + 2 + struct.calcsize(length_format)
    if len(member) < start:
        raise _refused(name, len(MAGIC) + 2, "the end", "the header's length")
    (length,) = struct.unpack_from(length_format, member, len(MAGIC) + 2)
    if length > MAX_HEADER or start + length > len(member):
        room = min(MAX_HEADER, len(member) - start)
        raise _refused(name, len(MAGIC) + 2, f"a header of {length} bytes", f"at most {room}")
    raw = member[start : start + length]
    if not raw.isascii():
        at = next(i for i, byte in enumerate(raw) if byte > 127)
        raise _refused(name, start + at, raw[at : at + 1], "ASCII text")
    return start, raw.decode("ascii")


def _expect(text: str, at: int, literal: str, name: str, start: int) -> int:
    """Return where ``literal``, found at ``at`` in the header ``text``, ends."""
    if not text.startswith(literal, at):
        raise _refused(name, start + at, text[at : at + len(literal)], repr(literal))
    return at + len(literal)


def _dtype(descr: str, name: str, where: int) -> np.dtype:
    """Return the dtype ``descr`` names, if numpy writes exactly ``descr`` for it."""
    allowed = "a dtype's str as numpy writes it, such as '<f8', '|u1' or '<U12'"
    if not _DESCR.fullmatch(descr):
        raise _refused(name, where, descr[:40], allowed)
    try:
        dtype = np.dtype(descr)
    except TypeError:
        raise _refused(name, where, descr, allowed) from None
    if dtype.str != descr:
        raise _refused(name, where, descr, f"{dtype.str!r}, numpy's spelling of that dtype")
    if dtype.itemsize == 0:  # any shape fits no data: a hostile file's way to a huge array
        raise _refused(name, where, descr, "a dtype of at least one byte, such as '<U1'")
    return dtype


def _shape(text: str, at: int, name: str, start: int) -> tuple[tuple[int, ...], int]:
    """Return the sizes of the shape written from ``at`` on, and where its ")" is.

    ``at`` is just after the shape's "("; the shape is written as Python writes a tuple:
    ``()``, ``(5,)``, ``(3, 4)``.
    """
    sizes: list[int] = []
    if text.startswith(")", at):
        return (), at
    while True:
        found = _SIZE.match(text, at)
        if found is None:
            raise _refused(name, start + at, text[at : at + 8], "a size: digits, no leading 0")
        sizes.append(int(found.group()))
        at = found.end()
        close = ",)" if len(sizes) == 1 else ")"
        if text.startswith(close, at):
            return tuple(sizes), at + len(close) - 1
        if not text.startswith(", ", at):
            raise _refused(name, start + at, text[at : at + 2], f"{close!r} or ', '")
        at += 2


def _padding(text: str, at: int, name: str, start: int) -> None:
    """Check that the header's text ends, from ``at``, in spaces and then one newline."""
    tail = text[at:]
    spaces = len(tail) - len(tail.lstrip(" "))
    if tail[spaces:] != "\n":
        found = tail[spaces : spaces + 8] or "the end"
        raise _refused(name, start + at + spaces, found, "spaces, then a newline at the end")


def _refused(name: str, where: int, found: object, allowed: str) -> ConfigError:
    """Return the error for ``found`` at byte ``where`` of member ``name``'s header."""
    return ConfigError(
        f"{name}: byte {where} of the .npy header: found {found!r}; allowed: {allowed}"
    )
