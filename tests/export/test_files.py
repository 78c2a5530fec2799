"""Writing an export folder: links followed to an empty folder, stale partial folders cleaned."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("datasets", reason="exports need: pip install 'sortie[export]'")

from sortie.export.files import DATA_FILE, write_dataset  # noqa: E402

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
