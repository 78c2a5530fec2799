"""Writing an export folder: links followed to an empty folder, stale partial folders cleaned."""

import os
import subprocess
import sys

import numpy as np
import pytest

datasets = pytest.importorskip("datasets", reason="exports need: pip install 'sortie[export]'")

import pyarrow.parquet as pq  # noqa: E402  (installed with datasets)

from sortie.export.files import CHUNK, DATA_FILE, split_file, write_dataset, write_split  # noqa: E402

ROWS = [{"text": "a"}, {"text": "b"}]


def test_an_out_that_links_to_an_empty_folder_is_filled(tmp_path):
    """--out pointing at a symlink to an empty folder writes the dataset there."""
    (tmp_path / "real").mkdir()
    (tmp_path / "out").symlink_to(tmp_path / "real")
    written = write_dataset(tmp_path / "out", ROWS, "card", {"rows": 2})
    assert written.exists() and (tmp_path / "out" / DATA_FILE).exists()
    assert (tmp_path / "real" / "export.json").exists()


def test_a_partial_folder_of_a_killed_export_is_removed_by_the_next(tmp_path):
    """A .out.partial-PID left by a process that is gone is cleaned; a live one's is kept."""
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    )
    stale = tmp_path / f".out.partial-{int(gone.stdout)}"
    (stale / "data").mkdir(parents=True)
    live = tmp_path / f".out.partial-{os.getppid()}"
    live.mkdir()
    write_dataset(tmp_path / "out", ROWS, "card", {"rows": 2})
    assert not stale.exists() and live.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [live.name, "out"]


def test_rows_with_features_are_written_in_chunks_with_float_arrays_split_by_byte(tmp_path):
    """250 generated rows: three row groups, zstd, the float array byte-stream-split."""
    features = datasets.Features(
        {"depth": datasets.Array2D((2, 3), "float32"), "stage": datasets.Value("string")}
    )
    rows = ({"depth": np.full((2, 3), i, np.float32), "stage": "S1"} for i in range(250))
    (tmp_path / "data").mkdir()
    assert write_split(tmp_path, "validation", rows, features) == 250
    meta = pq.ParquetFile(tmp_path / split_file("validation")).metadata
    assert meta.num_row_groups == -(-250 // CHUNK)
    depth, stage = (meta.row_group(0).column(i) for i in range(2))
    assert depth.compression == "ZSTD" and "BYTE_STREAM_SPLIT" in depth.encodings
    assert "RLE_DICTIONARY" in stage.encodings and "BYTE_STREAM_SPLIT" not in stage.encodings


def test_large_rows_are_written_a_few_at_a_time(monkeypatch):
    """Rows of large arrays are chunked by their bytes, not only by their count."""
    import numpy as np

    from sortie.export import files

    monkeypatch.setattr(files, "CHUNK_BYTES", 1000)
    rows = ({"depth": np.zeros(100, np.float32), "i": i} for i in range(7))  # 400 bytes each
    assert [len(chunk) for chunk in files._chunks(rows)] == [3, 3, 1]


def test_a_full_disk_is_the_documented_message_and_leaves_no_partial_folder(tmp_path, monkeypatch):
    """ENOSPC while writing the dataset card: a StoreError saying so; nothing is left."""
    import errno
    from pathlib import Path

    from sortie.core.errors import StoreError

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(StoreError, match="the disk is full .*free disk space"):
        write_dataset(tmp_path / "out", ROWS, "card", {"rows": 2})
    assert list(tmp_path.iterdir()) == []
