"""Writing records: a full disk or a read-only file system is a message, and leaves no file."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sortie.core.errors import StoreError
from sortie.core.records_io import write_atomic


def refuse(monkeypatch, code: int) -> None:
    """Make every write of text or bytes fail with ``code`` after writing a little."""

    def failing(self: Path, *args: object, **kwargs: object) -> None:
        with open(self, "w") as out:
            out.write("half")
        raise OSError(code, os.strerror(code), str(self))

    monkeypatch.setattr(Path, "write_text", failing)
    monkeypatch.setattr(Path, "write_bytes", failing)


def test_a_full_disk_is_a_store_error_and_leaves_no_temporary_file(monkeypatch, tmp_path):
    """ENOSPC while writing a record: the message names it and says to free space; no .tmp."""
    refuse(monkeypatch, errno.ENOSPC)
    with pytest.raises(StoreError) as error:
        write_atomic(tmp_path / "r.jsonl", "{}\n")
    message = str(error.value)
    assert str(tmp_path / "r.jsonl") in message and "the disk is full" in message
    assert "free disk space" in message and "--run-id" in message
    assert list(tmp_path.iterdir()) == []


def test_a_read_only_file_system_is_a_store_error(monkeypatch, tmp_path):
    """EROFS while writing a record: the message says the file system is read-only."""
    refuse(monkeypatch, errno.EROFS)
    with pytest.raises(StoreError, match="the file system is read-only"):
        write_atomic(tmp_path / "r.jsonl", "{}\n")
    assert list(tmp_path.iterdir()) == []


def test_a_temporary_file_of_a_dead_process_goes_at_the_next_write(tmp_path):
    """A .PID.tmp left by a killed writer is removed when the record is written again."""
    dead = int(subprocess.check_output([sys.executable, "-c", "import os; print(os.getpid())"]))
    stale = tmp_path / f"r.jsonl.{dead}.tmp"
    stale.write_text("half a record")
    write_atomic(tmp_path / "r.jsonl", "{}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl"]


def test_a_temporary_file_of_a_live_process_is_left_alone(tmp_path):
    """A .PID.tmp of a process still running (another writer) is not removed."""
    live = tmp_path / f"r.jsonl.{os.getppid()}.tmp"
    live.write_text("being written")
    write_atomic(tmp_path / "r.jsonl", "{}\n")
    assert live.is_file()
