"""Reading an imported file's text (``sortie.importers.problems.read_text``)."""

import os

from sortie.importers.problems import Problems, read_text
from tests.deadline import within


def test_a_log_that_is_a_fifo_is_a_noted_problem_without_waiting(tmp_path):
    """A FIFO in place of an imported log is noted as not a regular file, and not waited on."""
    fifo = tmp_path / "info.txt"
    os.mkfifo(fifo)
    problems = Problems("emmoe")
    with within(10):
        assert read_text(fifo, problems, str(fifo), "info.txt") is None
    assert problems.found == [f"{fifo}: info.txt: cannot read: a FIFO; only regular files are read"]


def test_line_ends_are_read_as_path_read_text_reads_them(tmp_path):
    """Windows and old Mac line ends come back as newlines, as Path.read_text returns them."""
    path = tmp_path / "info.txt"
    path.write_bytes("a\r\nb\rc\n²".encode())
    assert read_text(path, Problems("emmoe"), str(path), "info.txt") == path.read_text("utf-8")
