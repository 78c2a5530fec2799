"""One rule for every output folder: new, empty, or sortie's own for the same output."""

import pytest

from sortie.core.errors import ConfigError
from sortie.core.folders import MARKER, claim_output


def test_a_new_or_empty_folder_is_taken_and_marked(tmp_path):
    claim_output(tmp_path / "new" / "deep", "world view")
    (tmp_path / "empty").mkdir()
    claim_output(tmp_path / "empty", "world view")
    for folder in (tmp_path / "new" / "deep", tmp_path / "empty"):
        assert (folder / MARKER).read_text() == "world view\n"


def test_sortie_updates_its_own_output_and_refuses_another(tmp_path):
    claim_output(tmp_path, "report of a, b")
    (tmp_path / "index.html").write_text("old")
    claim_output(tmp_path, "report of a, b")  # the same report again: updated in place
    with pytest.raises(ConfigError, match=r"another output \(report of a, b\)"):
        claim_output(tmp_path, "report of c", "--html")


def test_a_folder_of_other_files_is_refused_naming_them(tmp_path):
    for name in ("thesis.tex", "b.txt", "c", "d", "e", "f"):
        (tmp_path / name).write_text("mine")
    with pytest.raises(ConfigError) as info:
        claim_output(tmp_path, "records of run r")
    message = str(info.value)
    assert "holds files sortie did not write (b.txt, c, d, e, f and 1 more)" in message
    assert (tmp_path / "thesis.tex").read_text() == "mine" and not (tmp_path / MARKER).exists()


def test_a_file_is_not_a_folder(tmp_path):
    (tmp_path / "out").write_text("x")
    with pytest.raises(ConfigError, match="a file, not a folder"):
        claim_output(tmp_path / "out", "world view")
