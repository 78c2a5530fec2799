"""Reading only regular files, bounded before reading (``sortie.core.files``)."""

import os

import pytest

from sortie.core.errors import ConfigError
from sortie.core.files import read_regular
from sortie.core.records_io import read_trajectory
from tests.deadline import within


def test_a_record_that_is_a_fifo_is_a_clear_error_without_waiting(tmp_path):
    """A FIFO given as a record is refused at once, naming it, instead of waiting for a writer."""
    fifo = tmp_path / "run.jsonl"
    os.mkfifo(fifo)
    with within(10), pytest.raises(ConfigError, match=f"{fifo}: cannot read: a FIFO"):
        read_trajectory(fifo)


def test_a_record_linked_to_a_device_is_refused_before_reading(tmp_path):
    """A record that is a link to /dev/zero is refused, not read until memory runs out."""
    record = tmp_path / "run.jsonl"
    record.symlink_to("/dev/zero")
    with within(10), pytest.raises(ConfigError, match="a character device; only regular"):
        read_trajectory(record)


def test_a_file_over_the_limit_is_refused_with_its_size(tmp_path):
    """A regular file larger than the limit is refused with its size and the limit."""
    path = tmp_path / "big"
    path.write_bytes(b"x" * 11)
    assert read_regular(path, 11) == b"x" * 11
    with pytest.raises(ConfigError, match=f"{path}: 11 bytes; files of at most 10 bytes"):
        read_regular(path, 10)
