"""The README's five-minute tour, line by line, as written: each command exits 0.

The lines run in a fresh folder that sees the clone's ``docs/`` (the sample files), so what
they write (``tour/``, ``runs/``) lands there; a line commented ``# error:`` must fail
with that message. The lines that need a model server, a second terminal or a browser are
in the README's next block and are not run here.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sortie.cli import app

README = Path(__file__).parents[1] / "README.md"
runner = CliRunner()


def tour_lines() -> list[str]:
    """Return the command lines of the README's tour block."""
    text = README.read_text(encoding="utf-8")
    after = text[text.index("## A five-minute tour") :]
    block = re.search(r"```bash\n(.*?)```", after, re.DOTALL)
    assert block is not None, "the tour has no bash block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_tour_has_the_commands_a_newcomer_needs():
    """Listings, a run and a report per family, the imports of all three seeds."""
    text = "\n".join(tour_lines())
    for command in ("suites", "agents", "runs", "rescore emmoe", "import rescuebench"):
        assert f"sortie {command}" in text
    assert all(line.startswith(".venv/bin/sortie ") for line in tour_lines())


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A fresh working folder with the clone's docs/ in it."""
    path = tmp_path_factory.mktemp("tour")
    (path / "docs").symlink_to(README.parent / "docs")
    return path


def test_every_tour_line_runs_as_written(folder, monkeypatch):
    """In order (later lines read earlier runs): exit 0, or the error a line says it gives."""
    monkeypatch.chdir(folder)
    for line in tour_lines():
        command, _, comment = line.partition("  #")
        argv = shlex.split(command)[1:]
        result = runner.invoke(app, argv)
        if comment.strip().startswith("error:"):
            expected = comment.split("...")[-1].strip()
            assert result.exit_code != 0 and expected in result.output, line
        else:
            assert result.exit_code == 0, f"{line}\n{result.output[-2000:]}"
    assert (folder / "tour" / "report" / "index.html").exists()
    assert (folder / "tour" / "emmoe" / "exp").is_dir()
