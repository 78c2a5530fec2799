"""EMMOE folders read only within the tree given, every drop said, ``--out`` checked first."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from sortie.core.errors import ConfigError
from sortie.generation.household import HouseholdValidator
from sortie.importers import import_suite
from sortie.importers.emmoe import read_tasks
from sortie.importers.emmoe_runs import rescore_runs
from sortie.importers.emmoe_suite import Refused, place_task
from sortie.importers.problems import Problems

EXAMPLES = Path(__file__).parents[2] / "docs" / "examples" / "emmoe"
SAMPLE = EXAMPLES / "EMMOE-100" / "data"
TASK_2 = SAMPLE / "train" / "2"


def tree(tmp_path: Path, *tasks: str) -> Path:
    """Return a folder ``data/train`` holding copies of the sample's train ``tasks``."""
    root = tmp_path / "data"
    for task in tasks:
        shutil.copytree(SAMPLE / "train" / task, root / "train" / task)
    shutil.copy(EXAMPLES / "name_dict.txt", tmp_path)
    return root


def problems_of(root: Path) -> tuple[list[str], list[str]]:
    """Return the task ids read under ``root`` and the problems noted."""
    problems = Problems("emmoe")
    _, _, tasks = read_tasks([root], problems)
    return [t.id for t in tasks], problems.found


def test_out_at_a_folder_is_refused_before_any_work(tmp_path, monkeypatch):
    """`import --out DIR` fails at once, naming the folder, and no task is read."""
    monkeypatch.setattr("sortie.importers.emmoe_suite.read_tasks", pytest.fail)
    with pytest.raises(ConfigError, match=r"--out .*: is a folder; give the suite file's path"):
        import_suite("emmoe", [tree(tmp_path, "2")], tmp_path, None)


def test_out_at_a_users_file_is_refused_and_left_as_it_was(tmp_path, monkeypatch):
    """An existing file that is not a sortie suite is never overwritten."""
    monkeypatch.setattr("sortie.importers.emmoe_suite.read_tasks", pytest.fail)
    mine = tmp_path / "notes.jsonl"
    mine.write_text("my own notes\n")
    with pytest.raises(ConfigError, match="is not a sortie suite file; it is not overwritten"):
        import_suite("emmoe", [tree(tmp_path, "2")], mine, None)
    assert mine.read_text() == "my own notes\n"


def test_out_at_an_earlier_suite_is_replaced(tmp_path):
    """A suite file written before (an earlier import) is replaced whole."""
    root = tree(tmp_path, "2")
    out = tmp_path / "s.jsonl"
    import_suite("emmoe", [root], out, None)
    first = out.read_text()
    out.write_text(first.splitlines()[0] + "\n")  # the header alone: still a suite file
    import_suite("emmoe", [root], out, None)
    assert out.read_text() == first


def test_a_task_folder_linked_out_of_the_tree_is_noted_not_followed(tmp_path):
    """A link to a task folder elsewhere: a problem naming the link, and nothing read there."""
    root = tree(tmp_path / "in", "2")
    shutil.copytree(SAMPLE / "train" / "7", tmp_path / "elsewhere" / "7")
    (root / "train" / "7").symlink_to(tmp_path / "elsewhere" / "7")
    ids, found = problems_of(root)
    assert ids == ["2"]
    assert any("train/7: folder: a link out of the tree given" in p for p in found), found


def test_a_task_folder_linked_within_the_tree_is_read_where_it_leads(tmp_path):
    """A link into the tree is no problem: its target is read where it is, once."""
    root = tree(tmp_path, "2")
    (root / "links").mkdir()
    (root / "links" / "2").symlink_to(root / "train" / "2")
    assert problems_of(root) == (["2"], [])


def test_an_info_file_linked_out_of_the_tree_is_not_read(tmp_path):
    """info.txt linking to a file outside the tree given: noted, its text never read."""
    root = tree(tmp_path / "in", "2")
    outside = tmp_path / "secret.txt"
    outside.write_text("Task: a secret\nSubtask 1: [End]\n")
    info = root / "train" / "2" / "info.txt"
    info.unlink()
    info.symlink_to(outside)
    ids, found = problems_of(root)
    assert ids == []
    assert any("info.txt: info.txt: a link out of the tree given" in p for p in found), found
    assert not any("secret" in p for p in found if "link out" not in p)


def test_an_emptied_task_folder_is_noted(tmp_path):
    """A numbered folder with nothing left in it is a problem, not silently dropped."""
    root = tree(tmp_path, "2")
    (root / "train" / "7").mkdir()
    ids, found = problems_of(root)
    assert found == [
        f"{root / 'train' / '7'}: folder: an empty task folder (no info.txt, keypath.json)"
    ]


def test_keypath_lines_are_numbered_in_linear_time(tmp_path):
    """A keypath file of about 1 MiB with a bad last step is numbered in well under a second."""
    root = tree(tmp_path, "2")
    paths = [["[Pick, apple]"] * 50 + ["[End]"] for _ in range(1_000)]
    paths[-1][0] = "[Fly, apple]"
    (root / "train" / "2" / "keypath.json").write_text(json.dumps(paths, indent=1))
    started = time.process_time()  # CPU seconds: a busy neighbour (pytest -n) does not count
    _, found = problems_of(root)
    assert time.process_time() - started < 3.0  # quadratic numbering took about 10 s here
    line = 1 + 999 * 53 + 2  # "[" then 999 keypaths of 53 lines, then "[" and the bad step
    assert any(f"keypath.json:{line}: keypaths.999.0: unknown action 'Fly'" in p for p in found)


def test_an_over_long_instruction_is_skipped_saying_so(tmp_path):
    """An instruction of 4,999 characters: the reason names the instruction, not a kind."""
    root = tree(tmp_path, "2")
    info = root / "train" / "2" / "info.txt"
    lines = info.read_text().splitlines()
    info.write_text("\n".join([f"Task: {'tidy ' * 1_000}", *lines[1:]]) + "\n")
    problems = Problems("emmoe")
    _, table, (task,) = read_tasks([root], problems)
    with pytest.raises(Refused, match="its instruction has 4999 characters; .* at most 4000"):
        place_task(task, table, ("s", "derived"), HouseholdValidator.create())


def test_the_last_rounds_outcome_is_read_only_from_a_regular_file(tmp_path):
    """A FIFO where sortie's last-round file goes: a problem naming it, no wait for a writer."""
    exp = tmp_path / "exp"
    shutil.copytree(EXAMPLES / "exp", exp)
    os.mkfifo(exp / "HomieBot-7B" / "7" / "1" / "sortie_last_round.json")
    with pytest.raises(ConfigError, match="sortie_last_round.json: file: cannot read: a FIFO"):
        rescore_runs(exp, [SAMPLE])


def test_a_run_folder_linked_out_of_the_log_tree_is_noted(tmp_path):
    """A model's run folder linking elsewhere: a problem naming it, its log not read."""
    exp = tmp_path / "exp"
    shutil.copytree(EXAMPLES / "exp", exp)
    elsewhere = tmp_path / "elsewhere"
    shutil.move(exp / "HomieBot-7B" / "2" / "1", elsewhere)
    (exp / "HomieBot-7B" / "2" / "1").symlink_to(elsewhere)
    with pytest.raises(ConfigError, match=r"2/1: folder: a link out of the tree given"):
        rescore_runs(exp, [SAMPLE])
