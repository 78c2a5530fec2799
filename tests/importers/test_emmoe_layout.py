"""EMMOE's own layout read as EMMOE reads it: subtask lines, the synonym table's place, names.

EMMOE keeps ``EMMOE-100/`` and ``hab-mobile-manipulation/name_dict.txt`` side by side at its
root, with ``exp/`` for the runs; its code counts every ``info.txt`` line that mentions
``Subtask`` as a step of the expert, whatever follows the step.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from sortie.cli import app
from sortie.export.household.emmoe import name_dict
from sortie.importers.emmoe import read_tasks
from sortie.importers.emmoe_runs import rescore_runs
from sortie.importers.emmoe_suite import sortie_kind
from sortie.importers.problems import Problems
from sortie.missions.household.records import Verb

EXAMPLES = Path(__file__).parents[2] / "docs" / "examples" / "emmoe"
runner = CliRunner()


def emmoe_root(tmp_path: Path) -> Path:
    """Return a copy of the sample laid out as EMMOE's repository: the table in its folder."""
    root = tmp_path / "EMMOE"
    shutil.copytree(EXAMPLES / "EMMOE-100", root / "EMMOE-100")
    shutil.copytree(EXAMPLES / "exp", root / "exp")
    (root / "hab-mobile-manipulation").mkdir()
    shutil.copy(EXAMPLES / "name_dict.txt", root / "hab-mobile-manipulation")
    return root


def test_subtask_lines_with_the_model_after_the_step_are_read(tmp_path):
    """In ``Subtask 1: [Go to, kitchen_counter] Model: NoMaD`` the step is read, not the rest."""
    root = emmoe_root(tmp_path)
    info = root / "EMMOE-100" / "data" / "train" / "2" / "info.txt"
    lines = info.read_text().splitlines()
    info.write_text("\n".join([lines[0], *(f"{line} Model: image_nav" for line in lines[1:])]))
    problems = Problems("emmoe")
    _, _, tasks = read_tasks([root / "EMMOE-100" / "data" / "train" / "2"], problems)
    assert problems.found == []
    actions = [s.action for s in tasks[0].expert]
    assert actions == [Verb.GO_TO, Verb.PICK, Verb.GO_TO, Verb.PUT, Verb.END]
    assert tasks[0].expert[3].names() == ("apple", "table")


def test_rescore_reads_subtask_lines_with_trailing_text(tmp_path):
    """The sample's runs score the same when every subtask line carries its model."""
    root = emmoe_root(tmp_path)
    before, _ = rescore_runs(root / "exp", [root / "EMMOE-100" / "data"])
    for info in (root / "EMMOE-100").rglob("info.txt"):
        lines = info.read_text().splitlines()
        tail = [f"{line} Model: NoMaD" if "Subtask" in line else line for line in lines[1:]]
        info.write_text("\n".join([lines[0], *tail]) + "\n")
    after, _ = rescore_runs(root / "exp", [root / "EMMOE-100" / "data"])
    assert len(after) == len(before) == 5
    for again, first in zip(after, before, strict=True):
        assert {k: v for k, v in again.metrics.items() if k != "gc"} == {
            k: v for k, v in first.metrics.items() if k != "gc"
        }


def test_the_synonym_table_is_found_where_emmoe_keeps_it(tmp_path):
    """``hab-mobile-manipulation/name_dict.txt`` beside ``EMMOE-100/`` is the table read."""
    root = emmoe_root(tmp_path)
    problems = Problems("emmoe")
    path, table, _ = read_tasks([root / "EMMOE-100" / "data"], problems)
    assert problems.found == []
    assert path == root / "hab-mobile-manipulation" / "name_dict.txt" and table["apple"]


def test_rescore_finds_the_table_and_tasks_in_emmoes_layout_by_default(tmp_path):
    """`sortie rescore emmoe EXP` on EMMOE's root scores every run with no --tasks."""
    root = emmoe_root(tmp_path)
    result = runner.invoke(app, ["rescore", "emmoe", str(root / "exp"), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert '"tp_emmoe"' in result.output


def test_names_missing_from_the_table_are_listed_all_at_once(tmp_path):
    """Every use of a name the table lacks is a problem at file:line; no traceback."""
    root = emmoe_root(tmp_path)
    table = root / "hab-mobile-manipulation" / "name_dict.txt"
    table.write_text(table.read_text().replace("\napple/red_apple\n", "\nred_apple\n"))
    result = runner.invoke(app, ["rescore", "emmoe", str(root / "exp")], env={"COLUMNS": "300"})
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    out = " ".join(result.output.split())
    missing = "'apple' is not in the synonym table"
    assert out.count(missing) >= 6
    assert "train/2/keypath.json:2: keypaths.0.0:" in out
    assert "train/2/info.txt:3: Subtask 2:" in out and "train/20/info.txt:3:" in out


def test_scene_names_numbered_by_sortie_are_their_kinds():
    """An exported scene name (``mug_0``, ``living_room_1``, ``fridge_12``) is its kind."""
    assert sortie_kind("mug_0") == "mug"
    assert sortie_kind("living_room_1") == "living_room"
    assert sortie_kind("fridge_12") == "fridge"


def test_the_exported_table_lists_every_name_a_round_acted_on():
    """A thing no task names gets a group meaning itself; a shared word too, once acted on."""
    text = name_dict(
        {"mug_0": {"mug", "cup"}, "mug_1": {"mug"}}, ["bottle_2", "mug", "mug_0", "a/b"]
    )
    groups = [group.splitlines() for group in text.split("\n\n")]
    assert groups == [
        ["mug_0:", "mug_0/cup"],
        ["mug_1:", "mug_1"],
        ["bottle_2:", "bottle_2"],
        ["mug:", "mug"],
    ]
    assert len(text.split("\n")) % 3 == 0  # EMMOE's notebooks read it in threes from the top
