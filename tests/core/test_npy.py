"""Reading ``.npy`` members by numpy's header grammar, strictly (``sortie.core.npy``)."""

import io
import struct
import zipfile

import numpy as np
import pytest

from sortie.core.errors import ConfigError
from sortie.core.files import read_npz
from sortie.core.npy import parse_header, read_array

ARRAYS = {
    "positions": np.arange(12.0).reshape(4, 3),
    "collisions": np.arange(5, dtype=np.int64),
    "codes": np.array([0, -1, 2], np.int32),
    "digest": np.frombuffer(bytes(range(32)), np.uint8),
    "version": np.array(1),
    "key": np.array("graph-v3 abc"),
    "names": np.array(["move_forward", "turn_left", "stop"]),
    "heights": np.linspace(0, 1, 7, dtype=np.float32),
    "packed": np.packbits(np.eye(9, dtype=bool), axis=1),
    "flags": np.array([True, False]),
    "no_steps": np.zeros((0, 3)),
    "no_events": np.zeros(0, np.int64),
    "fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
    "big_endian": np.arange(4, dtype=">i4"),
    "three_d": np.arange(24, dtype=np.int16).reshape(2, 3, 4),
}
"""Arrays of the dtypes and shapes sortie's caches hold (columns, graphs), and two layouts."""
GOOD = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"
"""numpy's header for a 2 x 3 float64 array, before its padding."""
OPENING = "{'descr': '"
DTYPE_STR = "a dtype's str as numpy writes it, such as '<f8', '|u1' or '<U12'"


def _opening_refused(found: str) -> str:
    """Return the error for a header that starts with ``found`` instead of numpy's opening."""
    return f"byte 10 of the .npy header: found {found!r}; allowed: {OPENING!r}"


def _written(array: np.ndarray, version: tuple[int, int] | None = None) -> bytes:
    """Return ``array`` as numpy writes it to a ``.npy`` file."""
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, version=version)
    return buffer.getvalue()


def _member(header: str, data: bytes = bytes(48), version: bytes = b"\x01\x00") -> bytes:
    """Return a ``.npy`` member with the header text ``header`` (a newline added) and ``data``."""
    text = (header + "\n").encode("utf8")
    length = struct.pack("<H" if version == b"\x01\x00" else "<I", len(text))
    return b"\x93NUMPY" + version + length + text + data


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_an_array_numpy_wrote_reads_as_numpy_reads_it(name):
    """Each kind of array sortie stores comes back with numpy's dtype, shape, layout and bits."""
    member = _written(ARRAYS[name])
    ours, numpys = read_array(member, name), np.lib.format.read_array(io.BytesIO(member))
    assert (ours.dtype, ours.shape) == (numpys.dtype, numpys.shape)
    assert ours.flags.f_contiguous == numpys.flags.f_contiguous
    assert ours.flags.writeable and ours.tobytes("A") == numpys.tobytes("A")


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_every_version_numpy_writes_is_read(version):
    """Headers of versions 1.0, 2.0 and 3.0 (a longer length field) read alike."""
    array = ARRAYS["names"]
    assert read_array(_written(array, version), "names").tobytes() == array.tobytes()


def test_the_header_gives_where_the_data_starts():
    """The data of a member numpy wrote starts where its padded header ends (64-byte aligned)."""
    header = parse_header(_written(ARRAYS["positions"]), "positions")
    assert (header.shape, header.fortran_order, header.data_offset) == ((4, 3), False, 128)


DAMAGED = {
    "double quotes": ('{"descr": "<f8", ' + GOOD[17:], _opening_refused('{"descr": "')),
    "keys in another order": (
        "{'fortran_order': False, 'descr': '<f8', 'shape': (2, 3), }",
        _opening_refused("{'fortran_o"),
    ),
    "a call": (
        "{'descr': __import__('os').system('true'), 'fortran_order': False, 'shape': (2,), }",
        _opening_refused("{'descr': _"),
    ),
    "a field list": (GOOD.replace("'<f8'", "[('a', '<f8')]"), _opening_refused("{'descr': [")),
    "no byte order": (
        GOOD.replace("<f8", "f8"),
        f"byte 21 of the .npy header: found 'f8'; allowed: {DTYPE_STR}",
    ),
    "Python objects": (
        GOOD.replace("<f8", "|O"),
        f"byte 21 of the .npy header: found '|O'; allowed: {DTYPE_STR}",
    ),
    "another spelling": (
        GOOD.replace("<f8", "<b1"),
        "byte 21 of the .npy header: found '<b1'; allowed: '|b1', numpy's spelling of that dtype",
    ),
    "order as a number": (
        GOOD.replace("False", "0"),
        """byte 44 of the .npy header: found "0, 's"; allowed: True or False""",
    ),
    "Python 2 longs": (
        GOOD.replace("(2, 3)", "(2L, 3L)"),
        "byte 62 of the .npy header: found 'L,'; allowed: ',)' or ', '",
    ),
    "a size alone": (
        GOOD.replace("(2, 3)", "(6)"),
        "byte 62 of the .npy header: found '),'; allowed: ',)' or ', '",
    ),
    "a leading zero": (
        GOOD.replace("(2, 3)", "(02, 3)"),
        "byte 62 of the .npy header: found '2,'; allowed: ',)' or ', '",
    ),
    "a dtype of no bytes": (
        GOOD.replace("<f8", "<U0"),
        "byte 21 of the .npy header: found '<U0'; allowed: a dtype of at least one byte, "
        "such as '<U1'",
    ),
    "a negative size": (
        GOOD.replace("(2, 3)", "(-2, -3)"),
        "byte 61 of the .npy header: found '-2, -3),'; allowed: a size: digits, no leading 0",
    ),
    "a trailing comma": (
        GOOD.replace("(2, 3)", "(2, 3,)"),
        "byte 65 of the .npy header: found ',)'; allowed: ')' or ', '",
    ),
    "another key": (
        GOOD.replace(" }", " 'x': 1, }"),
        """byte 65 of the .npy header: found "), '"; allowed: '), }'""",
    ),
    "text after the dict": (
        GOOD + "  x",
        "byte 71 of the .npy header: found 'x\\n'; allowed: spaces, then a newline at the end",
    ),
    "data too short": (
        GOOD.replace("(2, 3)", "(2, 4)"),
        "48 bytes of data after the .npy header; allowed: 64, what <f8 x (2, 4) takes",
    ),
}
"""Damaged or foreign headers (each the text of a member with 48 bytes of data), and the
error each must raise (after the member's name)."""


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_a_header_numpy_does_not_write_is_refused_naming_where_and_what(case):
    """A header off numpy's grammar raises ConfigError naming the member, byte, find, allowed."""
    header, message = DAMAGED[case]
    with pytest.raises(ConfigError) as caught:
        read_array(_member(header), "x.npy")
    assert str(caught.value) == f"x.npy: {message}"


def test_bytes_after_the_data_are_refused():
    """A member holding more than its array (two arrays, or junk) is refused with the sizes."""
    with pytest.raises(ConfigError, match="x.npy: 49 bytes of data .*allowed: 48"):
        read_array(_member(GOOD, bytes(49)), "x.npy")


@pytest.mark.parametrize(
    ("member", "message"),
    [
        (b"\x93NUMPZ\x01\x00", "byte 0 .*found b'\\\\x93NUMPZ'; allowed: the magic string"),
        (b"\x93NUMPY\x04\x00", "byte 6 .*found '4.0'; allowed: version 1.0, 2.0 or 3.0"),
        (b"\x93NUMPY\x01", "byte 6 .*found 'the end'; allowed: version"),
        (b"\x93NUMPY\x01\x00\xff\x00{}", "byte 8 .*found 'a header of 255 bytes'; allowed: at "),
    ],
)
def test_a_damaged_prefix_is_refused(member, message):
    """A wrong magic string, an unknown version or a length past the end is named as such."""
    with pytest.raises(ConfigError, match=f"^x.npy: {message}"):
        read_array(member, "x.npy")


def test_text_beyond_ascii_is_refused_at_its_byte():
    """A header byte outside ASCII (no header numpy writes for these dtypes has one) is named."""
    member = _member(GOOD.replace("'shape'", "'shapé'"), version=b"\x03\x00")
    where = member.index("é".encode())
    with pytest.raises(ConfigError, match=f"byte {where} .*found b'\\\\xc3'; allowed: ASCII"):
        read_array(member, "x.npy")


def test_an_npz_with_a_damaged_header_does_not_load():
    """read_npz treats a member whose header is off the grammar as unusable: None, no error."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a.npy", _written(ARRAYS["positions"]))
        archive.writestr("b.npy", _member(GOOD.replace("False", "0")))
    data = buffer.getvalue()
    assert read_npz(data, len(data) * 10) is None
