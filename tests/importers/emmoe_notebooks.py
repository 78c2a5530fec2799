"""EMMOE's metric notebooks restated, to run on a folder in EMMOE's layout (a test helper).

Written again by the project from the notebooks' logic (EMMOE's ``scripts/metrics``:
``count_TP``, ``plw_sr``, ``ser`` and ``srr``), not copied, keeping every choice they make,
crashes included: run from EMMOE's root, they read ``exp/<model>/<task>/<run>/
conversation.json`` for runs 1 to 3, the task's folder under ``EMMOE-100/data/train`` (tasks
1-90) or ``test`` (91-100), and ``hab-mobile-manipulation/name_dict.txt``. A run's history is
the 4th line of its last entry (the ``Historical Execution:`` line), which leaves out the last
answer; ``End`` anywhere in the last entry means the run ended, and an ``End`` step is then
added. A successful step moves a keypath on when its action is the keypath step's and the
synonym table maps both names to one canonical name (a word missing from the table is a
``KeyError``, as in the notebooks). TP is the best keypath's matched share, ``[End]``
included; a success is a run that ended and matched a whole keypath; SRR counts the failed
steps that another step follows, a marker step standing for the unlogged last answer of a
run that did not end. The SR, SER, PLWSR and SRR notebooks count only tasks 1-100.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

RUNS = (1, 2, 3)
"""The run numbers every notebook loops over (SRR's reads one of them)."""
LISTED = range(1, 101)
"""The task numbers the SR, SER, PLWSR and SRR notebooks count (``flag = 'all'``)."""


@dataclass(frozen=True)
class Run:
    """One conversation as the notebooks keep it."""

    task: int
    run: int
    entries: int
    """The conversation's length (PLWSR's L_agent)."""
    history: list[list[str]]
    """``[action, name, name or "None", "success" or "fail"]`` per logged step."""
    ended: bool


def parse_history(line: str) -> list[list[str]]:
    """Return the steps of a ``Historical Execution:`` line, split as the notebooks split it."""
    text = line.replace("Historical Execution: ", "")
    parts = re.split(r"(\(fail\)|\(success\))\s", text)
    steps = []
    for i in range(0, len(parts) - 1, 2):
        result = "success" if "success" in parts[i + 1] else "fail"
        words = re.sub(r"\(.*?\)", "", parts[i], count=1).strip().lstrip("[").rstrip("]")
        words_ = words.split(",")
        steps.append(
            [
                words_[0].strip(),
                words_[1].strip().lower() if len(words_) > 1 else "None",
                words_[2].strip().lower() if len(words_) > 2 else "None",
                result,
            ]
        )
    return steps


def load_name_mapping(root: Path) -> dict[str, str]:
    """Return the synonym table read in groups of three lines from the top, as the notebooks do."""
    lines = (root / "hab-mobile-manipulation" / "name_dict.txt").read_text().split("\n")
    mapping = {}
    for i in range(0, len(lines), 3):
        value = lines[i].strip().strip(":")
        for key in lines[i + 1].strip().split("/"):
            mapping[key] = value
    return mapping


def runs(root: Path, model: str, numbers: Iterable[int] = RUNS) -> list[Run]:
    """Return every conversation of ``model`` for the run numbers given."""
    found = []
    for number in numbers:
        for index in (root / "exp" / model).iterdir():
            path = index / str(number) / "conversation.json"
            if not path.exists():
                continue
            conversation = json.loads(path.read_text())
            history = parse_history(conversation[-1].split("\n")[3])
            ended = "End" in conversation[-1]
            found.append(Run(int(index.name), number, len(conversation), history, ended))
    return found


def task_folder(root: Path, task: int) -> Path:
    """Return a task's folder, in the split its number says (1-90 train, else test)."""
    split = "train" if 1 <= task <= 90 else "test"
    return root / "EMMOE-100" / "data" / split / str(task)


def keypaths(root: Path, task: int) -> list[list[str]]:
    """Return a task's keypaths."""
    return json.loads((task_folder(root, task) / "keypath.json").read_text())


def expert_length(root: Path, task: int) -> int:
    """Return the lines of the task's ``info.txt`` that mention ``Subtask`` (L_expert)."""
    info = (task_folder(root, task) / "info.txt").read_text()
    return sum(1 for line in info.split("\n") if "Subtask" in line)


def match_action(step: list[str], keypoint: str, mapping: dict[str, str]) -> bool:
    """Return whether a logged step does a keypath step (names through the synonym table)."""
    if step[3] != "success":
        return False
    wanted = [word.strip() for word in keypoint.strip("[").strip("]").split(",")]
    if len(wanted) == 2:
        wanted.append("None")
    if step[0] != wanted[0]:
        return False
    if wanted[0] == "End":
        return True
    if mapping[step[1]] != mapping[wanted[1]]:
        return False
    placed = "None" if step[2] == "None" else mapping[step[2]]
    return placed == ("None" if wanted[2] == "None" else mapping[wanted[2]])


def matched_share(history: list[list[str]], keypath: list[str], mapping: dict[str, str]) -> float:
    """Return the share of ``keypath`` that the steps match in order (0 for an empty one)."""
    if not keypath:
        return 0
    at = 0
    for step in history:
        if at < len(keypath) and match_action(step, keypath[at], mapping):
            at += 1
    return at / len(keypath)


def _with_end(run: Run) -> list[list[str]]:
    return run.history + [["End", "None", "None", "success"]] * run.ended


def task_progress(root: Path, run: Run, mapping: dict[str, str]) -> float:
    """Return one run's TP: the best keypath's matched share, End added if it ended."""
    return max(matched_share(_with_end(run), path, mapping) for path in keypaths(root, run.task))


def succeeded(root: Path, run: Run, mapping: dict[str, str]) -> bool:
    """Return whether a run ended and matched a whole keypath."""
    paths = keypaths(root, run.task)
    return run.ended and any(matched_share(_with_end(run), p, mapping) == 1 for p in paths)


def notebook_metrics(root: Path, model: str) -> dict[str, float]:
    """Return TP (count_TP), SR and PLWSR (plw_sr), SER (ser) over runs 1-3, in 0..1."""
    mapping = load_name_mapping(root)
    every = runs(root, model)
    listed = [run for run in every if run.task in LISTED]
    wins = [run for run in listed if succeeded(root, run, mapping)]
    weights = [
        expert_length(root, r.task) / max(r.entries, expert_length(root, r.task)) for r in wins
    ]
    ended = [run for run in listed if run.ended]
    return {
        "tp": sum(task_progress(root, r, mapping) for r in every) / len(every),
        "sr": len(wins) / len(listed),
        "plwsr": sum(weights) / len(listed),
        "ser": sum(1 for r in ended if r in wins) / len(ended),
    }


def replans(run: Run) -> int:
    """Return the failed steps another step follows (the unlogged last answer counts as one)."""
    steps = run.history if run.ended else run.history + [["one subtask left"]]
    return sum(1 for step in steps[:-1] if step[-1] == "fail")


def notebook_srr(root: Path, model: str, number: int) -> tuple[int, int]:
    """Return SRR's parts for one run number: replans in successful runs, replans in all."""
    mapping = load_name_mapping(root)
    listed = [run for run in runs(root, model, [number]) if run.task in LISTED]
    in_success = sum(replans(run) for run in listed if succeeded(root, run, mapping))
    return in_success, sum(map(replans, listed))
