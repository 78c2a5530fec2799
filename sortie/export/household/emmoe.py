"""``sortie export emmoe``: a household run written in EMMOE's own layout, for its tools.

Writes, under the output folder::

    EMMOE-100/data/<split>/<id>/info.txt, keypath.json   the run's tasks, in scene names
    hab-mobile-manipulation/name_dict.txt                 scene name -> the task's other names
    exp/<agent>/<id>/<repeat + 1>/conversation.json      one per episode the agent played
    sortie_ids.json                                       EMMOE task number -> episode id

A conversation holds one ``USER: <prompt> ASSISTANT: <answer>`` string per planner round,
as HomieBot saves it: the prompt's task, inventory, ``Historical Execution:`` line and
EMMOE's feedback string for the last round's error code; the answer's ``Subtask: [Pick,
mug_0]`` and ``Model:``. A round's words are the objects the executor resolved them to (the
planner's own words where it resolved none), so EMMOE's name matching credits what sortie's
does. The synonym table is where EMMOE's notebooks open it and lists, besides the tasks'
objects, every name a successful round acted on, each meaning itself: the notebooks look up
the names of every successful round that has a keypath step's action (a missing one stops
them with a ``KeyError``), and a random agent acts on things no task names. A step with no
readable answer is not written, as EMMOE writes none. EMMOE logs no
outcome for the last subtask of a run that never said end; sortie writes it beside the log
(``sortie_last_round.json``), where EMMOE's notebooks do not look and ``sortie rescore
emmoe`` does, so a run exported and rescored gets its own metrics back. Errored episodes are
not written. The folder appears whole or not at all.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Collection
from pathlib import Path

from sortie.core.errors import ConfigError
from sortie.core.records_io import writing
from sortie.core.trajectory import Trajectory
from sortie.export.files import check_out
from sortie.export.source import StoredRun
from sortie.missions.household.emmoe import (
    NO_FEEDBACK,
    SKILL_MODELS,
    VERB_WORDS,
    feedback_of,
    history_entry,
    safe_words,
)
from sortie.missions.household.records import HouseholdTask, KeyStep, RoundRecord, RoundStatus, Verb
from sortie.missions.household.spec import household_task
from sortie.missions.household.vocabulary import round_of
from sortie.run.store import StoredEpisode

ASK = "Now based on the instruction above, please output Analysis, Subtask and Model in the "
ASK += "mentioned format.\n"
"""The last line of HomieBot's prompt (``utils/homiebot.py``)."""
LAST_ROUND = "sortie_last_round.json"
NAME_DICT = Path("hab-mobile-manipulation", "name_dict.txt")
"""Where EMMOE keeps its synonym table and its notebooks open it, from EMMOE's root."""


def write_emmoe(run: StoredRun, out: Path, echo: Callable[[str], None]) -> Path:
    """Write ``run`` in EMMOE's layout at ``out`` (new or empty); return ``out``.

    Raises:
        ConfigError: ``out`` is in the way, or the run has no episode the agent played.
    """
    check_out(out)
    played = list(run.scored())
    if not played:
        raise ConfigError(f"run {run.run_id!r} has no episode the agent played: nothing to export")
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:  # whatever stops it (a full disk, Ctrl-C), no half-written copy stays behind
        with writing(partial, "exporting in EMMOE's layout"):
            tasks = _write_layout(played, partial, out)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    echo(f"wrote {len(played)} runs of {tasks} tasks in EMMOE's layout to {out}")
    return out


def _write_layout(played: list[tuple[StoredEpisode, Trajectory]], partial: Path, out: Path) -> int:
    """Write the tasks, runs and tables into ``partial``, rename it to ``out``; count tasks."""
    ids = task_numbers([t.header.episode.episode_id for _, t in played])
    names: dict[str, set[str]] = {}
    acted: set[str] = set()
    agent = safe_folder(played[0][1].header.agent.name)
    for episode, trajectory in played:
        number = ids[trajectory.header.episode.episode_id]
        task = household_task(trajectory.header.episode)
        _write_task(partial / "EMMOE-100" / "data" / task.split.value / str(number), task)
        for name, entry in task.objects.items():
            names.setdefault(name, set()).update(entry.names)
        folder = partial / "exp" / agent / str(number) / str(episode.repeat + 1)
        acted |= _write_run(folder, task, trajectory)
    (partial / NAME_DICT).parent.mkdir()
    (partial / NAME_DICT).write_text(name_dict(names, acted), encoding="utf-8")
    mapping = {str(n): episode_id for episode_id, n in sorted(ids.items(), key=lambda kv: kv[1])}
    (partial / "sortie_ids.json").write_text(json.dumps(mapping, indent=2) + "\n")
    if out.exists():
        out.rmdir()  # empty: check_out said so
    partial.rename(out)
    return len(ids)


def task_numbers(episode_ids: list[str]) -> dict[str, int]:
    """Return a task number per episode id: its own trailing number where free, else the next."""
    numbers: dict[str, int] = {}
    for episode_id in dict.fromkeys(episode_ids):
        found = re.search(r"(\d+)$", episode_id)
        wanted = int(found.group(1)) if found else 0
        if wanted < 1 or wanted in numbers.values():
            wanted = max(numbers.values(), default=0) + 1
        numbers[episode_id] = wanted
    return numbers


def safe_folder(name: str) -> str:
    """Return ``name`` fit for one folder name."""
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", name) or "agent"


def name_dict(names: dict[str, set[str]], acted: Collection[str] = ()) -> str:
    """Return EMMOE's synonym table: ``<scene name>:``, its other names by ``/``, a blank line.

    A word two scene names share is left out of both (EMMOE's table maps a word to one). Each
    of ``acted`` (lower-cased names rounds acted on) that no group lists then gets a group of
    its own, meaning itself, so that the notebooks can look it up; one holding a ``/`` cannot
    be written in the table and is left out.
    """
    owners: dict[str, set[str]] = {}
    for name, words in names.items():
        for word in {name, *words}:
            owners.setdefault(word.lower(), set()).add(name)
    groups: list[str] = []
    listed: set[str] = set()
    for name in sorted(names):
        shown = sorted(w.lower() for w in names[name] if len(owners[w.lower()]) == 1)
        group = list(dict.fromkeys([name, *shown]))
        listed.update(group)
        groups.append(f"{name}:\n{'/'.join(group)}\n")
    for word in sorted(set(acted) - listed):
        if "/" not in word and not word.endswith(":"):
            groups.append(f"{word}:\n{word}\n")
    return "\n".join(groups)


def _step_text(step: KeyStep) -> str:
    words = [VERB_WORDS[step.action], step.target, step.place or ""]
    return "[" + ", ".join(w for w in words if w) + "]"


def _write_task(folder: Path, task: HouseholdTask) -> None:
    """Write a task's ``info.txt`` (instruction, the expert's subtasks) and ``keypath.json``."""
    if folder.exists():
        return
    folder.mkdir(parents=True)
    lines = [f"Task: {' '.join(task.instruction.split())}"]
    lines += [f"Subtask {i}: {_step_text(step)}" for i, step in enumerate(task.expert, 1)]
    (folder / "info.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    keypaths = [[*map(_step_text, path), "[End]"] for path in task.keypaths]
    (folder / "keypath.json").write_text(json.dumps(keypaths, indent=4) + "\n", encoding="utf-8")


def _write_run(folder: Path, task: HouseholdTask, trajectory: Trajectory) -> set[str]:
    """Write one episode's ``conversation.json`` (and its last round's outcome if not end).

    Returns:
        The names its successful rounds acted on, as EMMOE's notebooks read them (lower case).
    """
    folder.mkdir(parents=True)
    rounds = [r for r in map(round_of, trajectory.steps) if r is not None]
    entries, history, feedback, held = [], "", NO_FEEDBACK, "None"
    for round_ in rounds:
        prompt = (
            f"Task: {' '.join(task.instruction.split())}\nInventory: {held}\n"
            f"Historical Execution: {history or 'None'}\nFeedback: {feedback}\n{ASK}"
        )
        entries.append(f"USER:\n{prompt}ASSISTANT:\n{_answer(round_)}\n")
        history += history_entry(round_.round, words_of(round_), round_.status)
        feedback = _feedback(round_)
        held = round_.inventory[0] if round_.inventory else "None"
    (folder / "conversation.json").write_text(json.dumps(entries, indent=4), encoding="utf-8")
    if rounds and rounds[-1].status is not RoundStatus.END:
        last = {"status": rounds[-1].status.value, "feedback": feedback}
        (folder / LAST_ROUND).write_text(json.dumps(last) + "\n", encoding="utf-8")
    done = [r for r in rounds if r.status is RoundStatus.SUCCESS]
    return {word.lower() for r in done for word in words_of(r)[1:]}


def words_of(round_: RoundRecord) -> tuple[str, ...]:
    """Return a round's words for EMMOE: the action, then the objects the executor resolved."""
    action = VERB_WORDS[round_.verb] if round_.verb else safe_words(round_.action) or "none"
    target = round_.target_object or safe_words(round_.target)
    place = round_.place_object or safe_words(round_.place or "")
    return tuple(w for w in (action, target, place) if w)


def _answer(round_: RoundRecord) -> str:
    words = (VERB_WORDS[Verb.END],) if round_.status is RoundStatus.END else words_of(round_)
    model = SKILL_MODELS.get(round_.skill, safe_words(round_.skill) or "None")
    return f"Analysis: exported from a sortie run.\nSubtask: [{', '.join(words)}]\nModel: {model}"


def _feedback(round_: RoundRecord) -> str:
    if round_.status is not RoundStatus.FAILURE:
        return NO_FEEDBACK
    words = words_of(round_)
    return feedback_of(round_.code, words[0], words[1] if len(words) > 1 else "it")
