"""EMMOE-100's task folders as a household suite on sortie's seeded apartments.

EMMOE-100 keeps one folder per task, ``data/{train,test}/<id>/`` (ids 1–90 train, 91–100 test),
each with ``info.txt`` (the instruction on its first line, ``Task: ...``, then the expert's
decomposition as ``Subtask k: [Verb, name, ...]`` lines ending with ``[End]``), ``keypath.json``
(alternative keypaths, each a list of ``"[Verb, name, ...]"`` strings ending with ``"[End]"``)
and ``scene.json`` (a Habitat rearrangement episode, which sortie cannot load and does not
read). Every word a keypath uses is mapped through EMMOE's synonym table, ``name_dict.txt``, to
a canonical Habitat name (``apple`` -> ``013_apple``).

This module reads those files (``read_task_folder``, ``read_name_dict``, ``parse_step``: the
rescorer reuses them) and collects every problem of every file, as ``file:line: field:
problem``, before anything is written. Placing the tasks on apartments is in
``sortie.importers.emmoe_suite``; a well-formed task that fits no apartment is skipped
with its reason (the suite header lists it), not a problem.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sortie.core.errors import did_you_mean
from sortie.importers.problems import Problems, read_text
from sortie.missions.household.executor import parse_verb
from sortie.missions.household.records import Split, Verb

INFO, KEYPATHS, SCENE, NAME_DICT = "info.txt", "keypath.json", "scene.json", "name_dict.txt"
TASK_FILES = (INFO, KEYPATHS, SCENE)
"""A folder holding any of these is a task folder (the missing ones are then reported)."""
TRAIN_IDS = 90
"""EMMOE-100's train split is tasks 1..90 (used when the folder above says neither)."""
ARGUMENTS = {Verb.PUT: 2, Verb.END: 0}
"""How many names a step of each verb takes (Go to, Pick, Open, Close: one)."""
ACTIONS = "Go to, Pick, Put, Open, Close, End"
EMMOE_TABLE = Path("hab-mobile-manipulation", NAME_DICT)
"""Where EMMOE keeps the synonym table, from its root (beside ``EMMOE-100/``)."""
NAME_DICT_DEPTH = 4
"""How many folders above DIR the importer looks for ``name_dict.txt``."""
MAX_DEPTH = 16
"""Deepest folder below DIR searched for task folders (EMMOE-100's are 3 down)."""

NameTable = dict[str, str]
"""EMMOE's synonym table: a word (lower case; synonyms and canonical names) -> canonical name."""


@dataclass(frozen=True, slots=True)
class EmmoeStep:
    """One EMMOE subtask: the verb and its names as written, lower-cased and stripped."""

    action: Verb
    target: str | None = None
    place: str | None = None

    def names(self) -> tuple[str, ...]:
        """Return the names the step uses (target, then place)."""
        return tuple(n for n in (self.target, self.place) if n is not None)


@dataclass(frozen=True, slots=True)
class EmmoeTask:
    """One EMMOE task folder as written (names are EMMOE's words, not yet canonical)."""

    id: str
    split: Split
    instruction: str
    keypaths: tuple[tuple[EmmoeStep, ...], ...]
    """The alternative keypaths, ``[End]`` dropped from each."""
    expert: tuple[EmmoeStep, ...]
    """The expert's subtasks from ``info.txt``, ``[End]`` included (PLWSR's L_expert)."""
    folder: Path


Read = list[tuple[str, str, EmmoeStep]]
"""Every step read from a folder's files: where (``file:line``), the field, the step."""


# --- steps ----------------------------------------------------------------------------------
def _parts(text: str) -> list[str]:
    """Return a step's words: ``"[Put, apple, fridge]"`` -> ``["Put", "apple", "fridge"]``."""
    inner = text.strip()
    if inner.startswith("[") and inner.endswith("]"):
        inner = inner[1:-1]
    return [part.strip() for part in inner.split(",")]


def parse_step(text: str) -> EmmoeStep | None:
    """Return the step ``"[Put, apple, fridge]"`` (brackets optional) as written, lower-cased.

    Returns None if the verb is not one of EMMOE's (through the executor's ``parse_verb``,
    so ``Go to`` is ``go_to``) or if more than two names follow it. The number of names is
    not checked against the verb here (``[Put, apple]`` has no place); importing checks it.
    """
    parts = _parts(text)
    verb = parse_verb(parts[0])
    names = [p.lower() for p in parts[1:]]
    if verb is None or len(names) > 2:
        return None
    names += [""] * (2 - len(names))
    return EmmoeStep(verb, names[0] or None, names[1] or None)


def _step(text: Any, where: str, field: str, problems: Problems) -> EmmoeStep | None:
    """Return one step, or None after noting why it is not one (unknown verb, wrong names)."""
    if not isinstance(text, str):
        problems.add(where, field, f'expected a step like "[Pick, apple]", got {text!r}'[:200])
        return None
    parts = _parts(text)
    verb = parse_verb(parts[0])
    if verb is None:
        hint = did_you_mean(parts[0], ACTIONS.split(", "))
        problems.add(where, field, f"unknown action {parts[0]!r} in {text!r} ({ACTIONS}).{hint}")
        return None
    given = [p for p in parts[1:] if p]
    wanted = ARGUMENTS.get(verb, 1)
    if len(given) != wanted or len(parts) - 1 != wanted:
        problems.add(where, field, f"{parts[0]} takes {wanted} name(s), got {text.strip()!r}")
        return None
    return parse_step(text)


# --- info.txt --------------------------------------------------------------------------------
def _read_info(folder: Path, problems: Problems, read: Read) -> tuple[str, list[EmmoeStep]]:
    """Return the instruction and the expert's steps of ``info.txt`` (End included)."""
    path = folder / INFO
    text = read_text(path, problems, str(path), INFO)
    if text is None:
        return "", []
    lines = text.splitlines()
    first = lines[0].strip() if lines else ""
    instruction = first[len("Task:") :].strip() if first.lower().startswith("task:") else ""
    if not instruction:
        shown = f"{first[:60]!r}"
        problems.add(
            f"{path}:1", "Task", f"the first line must be 'Task: <instruction>', got {shown}"
        )
    expert: Read = []
    # EMMOE counts every line that mentions "Subtask" as a step of the expert (plw_sr.ipynb).
    numbered = [(n, line) for n, line in enumerate(lines, start=1) if "Subtask" in line]
    for number, line in numbered:
        label, _, body = line.partition(":")
        step = _step(_bracketed(body), f"{path}:{number}", label.strip(), problems)
        if step is not None:
            expert.append((f"{path}:{number}", label.strip(), step))
    if not numbered:
        problems.add(
            str(path), "Subtask", "no 'Subtask k: [...]' lines: the expert's plan is missing"
        )
    _check_ends(expert, (str(path), "Subtask"), problems)
    read += expert
    return instruction, [step for _, _, step in expert]


def _bracketed(body: str) -> str:
    """Return a subtask line's step, ``[Go to, x]`` of ``[Go to, x] Model: image_nav``.

    EMMOE's own code only counts these lines, so what follows the step (the model EMMOE's
    expert chose) is read as EMMOE reads it: not at all. A body without brackets is kept whole.
    """
    text = body.strip()
    end = text.find("]")
    return text[: end + 1] if text.startswith("[") and end > 0 else body


def _check_ends(steps: Read, at: tuple[str, str], problems: Problems) -> None:
    """Note steps read ``at`` (file, field) that do not end with ``[End]``, or have one before."""
    file, field = at
    for where, _, step in steps[:-1]:
        if step.action is Verb.END:
            problems.add(where, field, "[End] before the last step")
    if steps and steps[-1][2].action is not Verb.END:
        problems.add(
            steps[-1][0], field, "does not end with [End] (every EMMOE plan and keypath does)"
        )
    elif len(steps) == 1:
        problems.add(steps[0][0], field, "no step before [End]")


# --- keypath.json ----------------------------------------------------------------------------
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _strings(value: Any) -> list[str] | None:
    """Return the strings of a JSON value depth first, or None if it holds an object."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return None  # its keys are string literals too: the count below would not hold
    found: list[str] = []
    for inner in value if isinstance(value, list) else []:
        strings = _strings(inner)
        if strings is None:
            return None
        found += strings
    return found


def _string_lines(text: str, data: Any) -> Iterator[int] | None:
    """Return the line of each string of ``data``, depth first, or None if unsure.

    ``json`` keeps no positions; in a document of lists and strings, the k-th string literal
    of the text is the k-th string met depth first, which is all a problem's line needs.
    """
    literals: list[int] = []
    line, counted = 1, 0
    for match in _STRING.finditer(text):  # each newline counted once: linear in the text
        line += text.count("\n", counted, match.start())
        counted = match.start()
        literals.append(line)
    strings = _strings(data)
    return iter(literals) if strings is not None and len(strings) == len(literals) else None


def _read_keypaths(folder: Path, problems: Problems, read: Read) -> list[tuple[EmmoeStep, ...]]:
    """Return the keypaths of ``keypath.json``, ``[End]`` dropped from each."""
    path = folder / KEYPATHS
    text = read_text(path, problems, str(path), KEYPATHS)
    if text is None:
        return []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        problems.add(f"{path}:{error.lineno}", KEYPATHS, f"not JSON ({error.msg})")
        return []
    except RecursionError:
        problems.add(str(path), KEYPATHS, "nested too deep to read")
        return []
    if not isinstance(data, list) or not data:
        got = "an empty list" if data == [] else f"{type(data).__name__} {data!r}"[:80]
        problems.add(
            str(path), "keypaths", f"expected a list of keypaths (lists of steps), got {got}"
        )
        return []
    lines = _string_lines(text, data)
    keypaths = []
    for i, raw in enumerate(data):
        if not isinstance(raw, list):
            got = f"{raw!r}"[:80]
            problems.add(str(path), f"keypaths.{i}", f"expected a list of steps, got {got}")
            continue
        steps = _keypath(raw, (path, i, lines), problems, read)
        if steps is not None:
            keypaths.append(steps)
    return keypaths


def _keypath(
    raw: list[Any], at: tuple[Path, int, Iterator[int] | None], problems: Problems, read: Read
) -> tuple[EmmoeStep, ...] | None:
    """Return one keypath without its ``[End]``, or None after noting what is wrong."""
    path, i, lines = at
    before = len(problems.found)
    steps: Read = []
    for j, text in enumerate(raw):
        line = next(lines, None) if lines is not None and isinstance(text, str) else None
        here = f"{path}:{line}" if line else str(path)
        step = _step(text, here, f"keypaths.{i}.{j}", problems)
        if step is not None:
            steps.append((here, f"keypaths.{i}.{j}", step))
    if not raw:
        problems.add(str(path), f"keypaths.{i}", "an empty keypath")
    _check_ends(steps, (str(path), f"keypaths.{i}"), problems)
    read += steps
    return None if len(problems.found) > before else tuple(step for _, _, step in steps[:-1])


# --- folders ---------------------------------------------------------------------------------
def find_task_folders(root: Path, problems: Problems) -> list[Path]:
    """Return the task folders at or under ``root``, by parent folder and task number.

    A task folder holds ``info.txt``, ``keypath.json`` or ``scene.json``; one that lacks a
    file is still found, so that reading it reports what is missing. Only the tree given is
    searched (``walk_tree``); a numbered folder with nothing in it (an emptied task) is
    noted, never dropped silently.
    """
    if any((root / name).exists() or (root / name).is_symlink() for name in TASK_FILES):
        return [root]
    found: list[Path] = []
    for folder, entries in walk_tree(root, problems):
        if any(e.name in TASK_FILES for e in entries):  # a FIFO too: reading it says what it is
            found.append(folder)
        elif _number(folder.name) and not any(not e.name.startswith(".") for e in entries):
            problems.add(str(folder), "folder", f"an empty task folder (no {INFO}, {KEYPATHS})")
    return sorted(found, key=_task_order)


def walk_tree(root: Path, problems: Problems) -> Iterator[tuple[Path, list[os.DirEntry[str]]]]:
    """Yield every folder at or under ``root`` with what it holds, within the tree given.

    A link to a folder in the tree is not followed (the walk gets where it leads by itself);
    one out of it is noted and not followed. A folder that cannot be listed, or one more
    than ``MAX_DEPTH`` below ``root``, is noted, never dropped silently.
    """
    top = root.resolve()
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        entries = _entries(folder, problems)
        if entries is None:
            continue
        yield folder, entries
        for entry in reversed(entries):  # popped in name order
            below = _below(Path(entry.path), (top, depth), problems)
            if below is not None:
                stack.append((below, depth + 1))


def _entries(folder: Path, problems: Problems) -> list[os.DirEntry[str]] | None:
    """Return what ``folder`` holds, or None after noting that it cannot be listed."""
    try:
        with os.scandir(folder) as listing:
            return sorted(listing, key=lambda e: e.name)
    except OSError as error:
        problems.add(str(folder), "folder", f"cannot list: {error.strerror or error}")
        return None


def _below(path: Path, walk: tuple[Path, int], problems: Problems) -> Path | None:
    """Return a subfolder to search, or None (not a folder, a link, too deep).

    A link to a folder is not followed: one into the tree given is searched where it leads
    (the walk gets there by itself), one out of it is noted.
    """
    top, depth = walk
    try:
        if not path.is_dir():
            return None
        if path.is_symlink():
            real = path.resolve()
            if not real.is_relative_to(top):
                problems.add(
                    str(path), "folder", f"a link out of the tree given (to {real}): not followed"
                )
            return None
    except (OSError, RuntimeError):  # a link loop, a name the system refuses
        problems.add(str(path), "folder", "cannot follow (a link loop or an unreadable link)")
        return None
    if depth + 1 > MAX_DEPTH:
        problems.add(
            str(path), "folder", f"deeper than {MAX_DEPTH} folders below DIR: not searched"
        )
        return None
    return path


def _task_order(folder: Path) -> tuple[int, str]:
    """Sort task folders by EMMOE's task number (ids are unique across the splits)."""
    return _number(folder.name) or 0, str(folder)


def _number(name: str) -> int | None:
    # isdigit() alone takes "²" or "①", which int() refuses: ASCII digits only
    return int(name) if name.isascii() and name.isdigit() and int(name) > 0 else None


def read_task_folder(folder: Path, problems: Problems) -> EmmoeTask | None:
    """Return the task of one EMMOE folder, or None after noting every problem it has."""
    return read_located(folder, problems)[0]


def read_located(
    folder: Path, problems: Problems, root: Path | None = None
) -> tuple[EmmoeTask | None, Read]:
    """Return the task of ``folder`` (None if it has a problem) and every step read from it.

    The steps come back even when the task does not, so that the names of a folder with
    another problem can still be checked in the same run. A task file that is a link out of
    ``root`` (the tree given; default: the folder) is noted and not read.
    """
    before = len(problems.found)
    number = _number(folder.name)
    if number is None:
        problems.add(str(folder), "folder", "its name is not an EMMOE task number (1, 2, ...)")
    read: Read = []
    readable = _readable(folder, (root or folder).resolve(), problems)
    keypaths = _read_keypaths(folder, problems, read) if KEYPATHS in readable else []
    instruction, expert = _read_info(folder, problems, read) if INFO in readable else ("", [])
    if len(problems.found) > before or number is None:
        return None, read
    split = {"train": Split.TRAIN, "test": Split.TEST}.get(folder.parent.name.lower())
    split = split or (Split.TRAIN if number <= TRAIN_IDS else Split.TEST)
    task = EmmoeTask(folder.name, split, instruction, tuple(keypaths), tuple(expert), folder)
    return task, read


def _readable(folder: Path, top: Path, problems: Problems) -> set[str]:
    """Return the task files of ``folder`` to read; note those missing or linked out of ``top``.

    Whether one is a regular file is left to the reader, which says what it is instead.
    """
    readable = set()
    for name in (KEYPATHS, INFO):
        path = folder / name
        try:
            real = path.resolve()
        except (OSError, RuntimeError):  # a link loop
            problems.add(str(path), name, "cannot follow (a link loop or an unreadable link)")
            continue
        if not path.exists():
            problems.add(str(folder), name, "missing")
        elif not real.is_relative_to(top):
            problems.add(str(path), name, f"a link out of the tree given (to {real}): not read")
        else:
            readable.add(name)
    return readable


# --- name_dict.txt ---------------------------------------------------------------------------
def read_name_dict(path: Path, problems: Problems) -> NameTable:
    """Return EMMOE's synonym table: every synonym and canonical name -> canonical name.

    The file is groups of three lines: ``<canonical>:``, the synonyms split by ``/`` (the line
    may be empty), a blank line (the last group may end the file). Words are read lower-cased.
    A synonym listed under two canonical names means the later one, as EMMOE's own loader
    reads it; a canonical name always means itself. A malformed group is noted and skipped
    up to the next blank line, so one slip is reported once, not for every group after it.
    """
    text = read_text(path, problems, str(path), NAME_DICT)
    lines = (text or "").splitlines()
    table: NameTable = {}
    canonicals: dict[str, tuple[int, str]] = {}
    i = 0
    while i < len(lines):
        if not lines[i].strip():  # blank lines between groups are harmless
            i += 1
            continue
        canonical, whole = _group(path, i, lines[i : i + 3], problems)
        if canonical is not None:
            key = canonical.lower()
            if key in canonicals:
                line = canonicals[key][0]
                problems.add(f"{path}:{i + 1}", canonical, f"listed twice (line {line})")
            canonicals[key] = (i + 1, canonical)
            words = (
                (w.strip().lower() for w in lines[i + 1].split("/")) if i + 1 < len(lines) else ()
            )
            table |= {word: canonical for word in words if word}
        # after a malformed group, go on from the next blank line: one slip, one problem
        blank = next((k for k in range(i, len(lines)) if not lines[k].strip()), len(lines))
        i = i + 3 if whole else blank + 1
    return table | {key: canonical for key, (_, canonical) in canonicals.items()}


def _group(path: Path, start: int, group: list[str], problems: Problems) -> tuple[str | None, bool]:
    """Return a group's canonical name (None: no group here) and whether the group is whole.

    A group whose blank line is missing still names its synonyms (the slip is noted); one
    without a ``name:`` line or a synonyms line is not read.
    """
    head = group[0].strip()
    where = f"{path}:{start + 1}"
    if not head.endswith(":") or not head[:-1].strip() or "/" in head:
        got = f"{head[:60]!r}"
        problems.add(where, "group", f"expected '<canonical name>:' to start a group, got {got}")
        return None, False
    canonical = head[:-1].strip()
    if len(group) > 1 and group[1].strip().endswith(":"):
        problems.add(where, canonical, "no synonyms line (it may be empty) before the next name")
        return None, False
    if len(group) > 2 and group[2].strip():
        got = f"{group[2].strip()[:60]!r}"
        problems.add(
            f"{path}:{start + 3}", canonical, f"expected a blank line after the synonyms, got {got}"
        )
        return canonical, False
    return canonical, True


def find_name_dict(root: Path) -> Path | None:
    """Return the synonym table in ``root`` or the nearest folder above it (a few up).

    In each folder it is ``name_dict.txt`` or, as EMMOE keeps it beside ``EMMOE-100/``,
    ``hab-mobile-manipulation/name_dict.txt``.
    """
    for folder in [root, *root.resolve().parents][: NAME_DICT_DEPTH + 1]:
        for path in (folder / NAME_DICT, folder / EMMOE_TABLE):
            if path.is_file():
                return path
    return None


# --- everything at once -----------------------------------------------------------------------
def read_tasks(
    paths: Sequence[Path], problems: Problems
) -> tuple[Path, NameTable, list[EmmoeTask]]:
    """Return the synonym table (its path and words) and the tasks of ``paths``.

    ``paths`` are task folders (or folders holding them) and at most one file, the synonym
    table; without one, ``name_dict.txt`` is looked for in the folders and above them. Every
    problem of every file is noted, names missing from the table included.
    """
    files = [p for p in paths if p.is_file()]
    folders = [p for p in paths if not p.is_file()]
    if len(files) > 1:
        problems.add(", ".join(map(str, files)), NAME_DICT, "give at most one synonym table")
    if not folders:
        problems.add(", ".join(map(str, paths)), "DIR", "no folder of tasks given")
    table_path = files[0] if files else next(filter(None, map(find_name_dict, folders)), None)
    if table_path is None:
        shown = ", ".join(map(str, folders))
        problems.add(
            shown,
            NAME_DICT,
            f"not in the folder or a few above it (as {NAME_DICT} or {EMMOE_TABLE}): give its path",
        )
    table = read_name_dict(table_path, problems) if table_path else {}
    roots = {f: root for root in folders for f in find_task_folders(root, problems)}
    found = sorted(roots, key=_task_order)
    if folders and not found:
        shown = ", ".join(map(str, folders))
        problems.add(shown, "folder", f"no task folder (one holding {INFO} and {KEYPATHS})")
    tasks: list[EmmoeTask] = []
    for folder in found:
        task, read = read_located(folder, problems, roots[folder])
        tasks += [task] if task else []
        if table_path:
            _check_names(read, (table, table_path), problems)
    _check_ids(tasks, problems)
    return table_path or Path(NAME_DICT), table, tasks


def _check_ids(tasks: list[EmmoeTask], problems: Problems) -> None:
    """Note two folders with one task number (their episode ids would be one)."""
    seen: dict[int, Path] = {}
    for task in tasks:
        if int(task.id) in seen:
            problems.add(str(task.folder), "folder", f"task {task.id} is also {seen[int(task.id)]}")
        seen[int(task.id)] = task.folder


def _check_names(read: Read, table: tuple[NameTable, Path], problems: Problems) -> None:
    """Note every name of the steps read that the synonym table does not list."""
    words, path = table
    for where, field, step in read:
        for name in step.names():
            if name not in words:
                hint = did_you_mean(name, words)
                problems.add(where, field, f"{name!r} is not in the synonym table {path}.{hint}")
