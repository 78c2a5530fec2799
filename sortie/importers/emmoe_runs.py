r"""EMMOE's run logs read back as sortie records and scored (``sortie rescore emmoe``).

EMMOE keeps each run as ``exp/<model>/<task id>/<run>/conversation.json``: the planner's
rounds, one ``"USER:\\n<prompt>ASSISTANT:\\n<answer>\\n"`` string each. The last prompt's
``Historical Execution:`` line gives every earlier round's words and success or failure; the
next prompt's ``Feedback:`` line gives its error code; the last answer is ``[End]`` or the
last subtask, whose outcome EMMOE never logs (``RoundStatus.UNRECORDED``), unless sortie
wrote it beside the log (``sortie export emmoe``). A run without ``[End]`` that stopped
before 20 rounds gave no readable answer: EMMOE breaks off there (``no_answer``).

Each run becomes a household trajectory over its task in EMMOE's canonical names, the
synonym table as the objects' names, and is scored by sortie's household scorer: the same
rules, both readings. The final state is not in the logs, so GC is undefined. Every problem
of every file is collected and reported at once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sortie.core.episode import EpisodeSpec, WorldSpec
from sortie.core.pose import Pose
from sortie.core.records import (
    Outcome,
    PluginRef,
    StepRecord,
    TrajectoryFooter,
    TrajectoryHeader,
    recorded_action,
)
from sortie.core.trajectory import Trajectory
from sortie.core.version import VERSION
from sortie.importers.emmoe import EmmoeStep, EmmoeTask, NameTable, read_tasks, walk_tree
from sortie.importers.emmoe_suite import canonical_task, task_attributes
from sortie.importers.problems import Problems, read_text
from sortie.metrics.household import score_household
from sortie.missions.household.emmoe import code_of, parse_history
from sortie.missions.household.executor import parse_verb
from sortie.missions.household.facts import HouseholdFacts
from sortie.missions.household.mission import HouseholdFailure
from sortie.missions.household.records import (
    HouseholdTask,
    ObjectRole,
    RoundRecord,
    RoundStatus,
    Verb,
)
from sortie.missions.household.rules import task_progress
from sortie.missions.household.spec import household_task
from sortie.missions.household.vocabulary import HouseholdStep

CONVERSATION = "conversation.json"
LAST_ROUND = "sortie_last_round.json"
"""Beside a log ``sortie export emmoe`` wrote: the last round's outcome, which EMMOE drops."""
MAX_ROUNDS = 20
"""EMMOE's rounds per run (``Conversation.max_round``)."""
_SUBTASK = (
    re.compile(r"Subtask: *\[(.*?)\]", re.DOTALL),
    re.compile(r"Subtask: *(.*?) *Model:", re.DOTALL),
)
"""HomieBot's two readings of an answer's subtask, in its order."""
_MODEL = re.compile(r"Model: *(.*?)\s*$", re.DOTALL)
_ROOMS = ("room", "kitchen", "floor", "stairs", "hall", "bathroom", "bedroom")


@dataclass(frozen=True, slots=True)
class RescoredRun:
    """One EMMOE run read back: its model, task, run number, record and metrics."""

    model: str
    task: EmmoeTask
    run: int
    trajectory: Trajectory
    metrics: dict[str, float]

    @property
    def key(self) -> str:
        """Return the run's key, ``model/task/run``: a task's runs are its repeats."""
        return f"{self.model}/{self.task.id}/{self.run}"


@dataclass(frozen=True, slots=True)
class Entry:
    """One conversation entry: the prompt's history and feedback lines, and the answer."""

    history: str
    feedback: str
    answer: str


def rescore_runs(
    exp: Path, task_paths: Sequence[Path], runs: Collection[int] | None = None
) -> tuple[list[RescoredRun], list[str]]:
    """Return every run under ``exp`` scored, and the tasks sortie's rules cannot score (why).

    ``task_paths`` are EMMOE's task folders (or folders holding them) and optionally its
    synonym table; ``runs`` keeps only those run numbers (EMMOE's notebooks read one).

    Raises:
        ConfigError: the logs or task files hold problems (every one listed).
    """
    problems = Problems("emmoe", "nothing scored", command="rescore")
    _, table, tasks = read_tasks(task_paths, problems)
    by_id = {int(t.id): t for t in tasks}
    logs = _logs(exp, problems) if exp.is_dir() else []
    if not logs:
        problems.add(str(exp), "folder", f"no <model>/<task>/<run>/{CONVERSATION} under it")
    scored, refused = [], {}
    for path in logs:
        where = _where(path, problems)
        if where is None or (runs and where[2] not in runs) or _linked_out(path, exp, problems):
            continue
        model, task_id, run = where
        task = by_id.get(task_id)
        if task is None:
            problems.add(str(path), "task", f"no task folder for task {task_id} in the tasks given")
            continue
        if task.id in refused:
            continue
        try:
            spec = rescore_spec(task, table)
        except ValueError as why:
            refused[task.id] = f"task {task.id}: {why}"
            continue
        trajectory = _trajectory(path, spec, (model, run), problems)
        if trajectory is not None:
            scored.append(RescoredRun(model, task, run, trajectory, score_household(trajectory)))
    problems.raise_if_any()
    return scored, list(refused.values())


def _logs(exp: Path, problems: Problems) -> list[Path]:
    """Return every ``conversation.json`` in the tree ``exp`` (``walk_tree``: links out noted)."""
    return sorted(
        folder / CONVERSATION
        for folder, entries in walk_tree(exp, problems)
        if any(e.name == CONVERSATION for e in entries)
    )


def _linked_out(path: Path, exp: Path, problems: Problems) -> bool:
    """Return whether a log or the outcome beside it links out of ``exp`` (noted, not read)."""
    for file in (path, path.parent / LAST_ROUND):
        try:
            real = file.resolve()
        except (OSError, RuntimeError):  # a link loop: reading it says so
            continue
        if (file.exists() or file.is_symlink()) and not real.is_relative_to(exp.resolve()):
            problems.add(str(file), "file", f"a link out of the tree given (to {real}): not read")
            return True
    return False


def _where(path: Path, problems: Problems) -> tuple[str, int, int] | None:
    """Return a log's model, task number and run number, from its folders."""
    run, task, model = path.parent.name, path.parent.parent.name, path.parent.parent.parent
    if not all(name.isascii() and name.isdigit() for name in (run, task)):  # not "²"
        problems.add(str(path), "folder", "expected <model>/<task number>/<run number>/")
        return None
    return model.name, int(task), int(run)


# --- the task --------------------------------------------------------------------------------
def rescore_spec(task: EmmoeTask, table: NameTable) -> EpisodeSpec:
    """Return the episode a run of ``task`` is scored as: its steps in canonical names.

    Raises:
        ValueError: sortie's task model refuses the task (a name used in two roles).
    """
    canonical = canonical_task(task, table)
    roles = _roles(canonical)
    objects = {
        name: {"kind": name[:100], "role": role, "names": _names(name, table)}
        for name, role in roles.items()
    }
    mission = {
        "instruction": task.instruction,
        "attributes": task_attributes(task, "emmoe-100"),
        "split": task.split,
        "objects": objects,
        "keypaths": [[_key(s) for s in keypath] for keypath in canonical.keypaths],
        "expert": [_key(s) for s in canonical.expert],
        "max_rounds": MAX_ROUNDS,
    }
    try:
        checked = HouseholdTask.model_validate(mission)
    except ValidationError as error:
        raise ValueError(str(error.errors()[0]["msg"]).removeprefix("Value error, ")) from None
    return EpisodeSpec(
        episode_id=f"emmoe/{int(task.id):04d}",
        family="household",
        world=WorldSpec(builder="habitat.emmoe", seed=0),
        start=Pose(0.0, 0.0, 0.0),
        mission=checked.model_dump(mode="json"),
    )


def _roles(task: EmmoeTask) -> dict[str, ObjectRole]:
    """Return each name's role from its use: picked, a place, opened; else a room or furniture."""
    steps = [s for keypath in task.keypaths for s in keypath] + list(task.expert)
    roles: dict[str, ObjectRole] = {}
    for step in steps:
        if step.action in (Verb.OPEN, Verb.CLOSE) and step.target:
            roles[step.target] = ObjectRole.CONTAINER
    for step in steps:
        if step.action in (Verb.PICK, Verb.PUT) and step.target:
            roles.setdefault(step.target, ObjectRole.ITEM)
        if step.place:
            roles.setdefault(step.place, ObjectRole.RECEPTACLE)
    for name in (n for s in steps for n in s.names()):
        room = any(word in name for word in _ROOMS)
        roles.setdefault(name, ObjectRole.ROOM if room else ObjectRole.RECEPTACLE)
    return roles


def _names(canonical: str, table: NameTable) -> list[str]:
    return sorted({w for w, meant in table.items() if meant == canonical} - {canonical})[:50]


def _key(step: EmmoeStep) -> dict[str, Any]:
    return {"action": step.action, "target": step.target or "", "place": step.place}


# --- the log ---------------------------------------------------------------------------------
def read_conversation(path: Path, problems: Problems) -> list[Entry] | None:
    """Return a conversation's entries, or None after noting what is wrong with the file."""
    text = read_text(path, problems, str(path), "file")
    if text is None:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        problems.add(f"{path}:{error.lineno}", "file", f"not JSON: {error.msg}")
        return None
    except RecursionError:
        problems.add(str(path), "file", "nested too deep to read")
        return None
    if not isinstance(data, list) or not all(isinstance(item, str) for item in data):
        shown = type(data).__name__ if not isinstance(data, list) else "a list of other things"
        expected = 'a list of "USER:\\n<prompt>ASSISTANT:\\n<answer>" strings'
        problems.add(str(path), "conversation", f"expected {expected}, got {shown}")
        return None
    entries = [_entry(item, f"{path}: entry {i + 1}", problems) for i, item in enumerate(data)]
    return None if None in entries else [e for e in entries if e is not None]


def _entry(item: str, where: str, problems: Problems) -> Entry | None:
    prompt, said, answer = item.partition("ASSISTANT:")
    lines = {line.split(":", 1)[0]: line for line in prompt.splitlines() if ":" in line}
    missing = [k for k in ("Historical Execution", "Feedback") if k not in lines]
    if not said or missing:
        what = ", ".join(f"a {k}: line" for k in missing) or "ASSISTANT:"
        problems.add(where, "conversation", f"expected {what} in the entry")
        return None
    feedback = lines["Feedback"].split(":", 1)[1].strip()
    return Entry(lines["Historical Execution"], feedback, answer.strip())


def _trajectory(
    path: Path, spec: EpisodeSpec, who: tuple[str, int], problems: Problems
) -> Trajectory | None:
    entries = read_conversation(path, problems)
    if entries is None:
        return None
    rounds = _rounds(path, entries, problems)
    if rounds is None:
        return None
    header = TrajectoryHeader(
        episode=spec,
        agent=PluginRef(name=who[0]),
        backend=PluginRef(name="habitat"),
        seed=who[1],
        code_version=VERSION,
    )
    return Trajectory(header, _steps(rounds), _footer(spec, rounds))


def _rounds(path: Path, entries: list[Entry], problems: Problems) -> list[RoundRecord] | None:
    """Return the rounds of a conversation: the history's, then the last answer's."""
    if not entries:
        return []
    where = f"{path}: entry {len(entries)}"
    try:
        history = parse_history(entries[-1].history)
    except ValueError as error:
        problems.add(where, "Historical Execution", str(error))
        return None
    if [h.number for h in history] != list(range(1, len(entries))):
        listed = [h.number for h in history]
        problems.add(
            where, "Historical Execution", f"lists rounds {listed}, expected 1–{len(entries) - 1}"
        )
        return None
    rounds = []
    for entry, after in zip(history, entries[1:], strict=True):
        made = _history_round(entry.number, entry.words, entry.succeeded, after.feedback)
        if isinstance(made, tuple):
            problems.add(f"{path}: entry {entry.number + 1}", *made)
            return None
        rounds.append(made)
    last = _last_round(path, len(entries), entries[-1].answer, problems)
    return None if last is None else [*rounds, last]


def _history_round(
    number: int, words: tuple[str, ...], succeeded: bool, feedback: str
) -> RoundRecord | tuple[str, str]:
    """Return a round of the history with the code its feedback carries, or what is wrong."""
    verb = parse_verb(words[0])
    if succeeded and verb is None:
        known = "Go to, Pick, Put, Open, Close, End"
        problem = f"round {number}: unknown action {words[0]!r} in a round that succeeded"
        return "Historical Execution", f"{problem} (EMMOE's actions: {known})"
    try:
        code = None if succeeded else code_of(feedback)
    except ValueError as error:
        return "Feedback", f"round {number}: {error}"
    status = RoundStatus.SUCCESS if succeeded else RoundStatus.FAILURE
    return _round(number, words, verb, (status, code, feedback))


def _round(
    number: int, words: tuple[str, ...], verb: Verb | None, outcome: tuple[Any, ...]
) -> RoundRecord:
    status, code, feedback = outcome
    target = words[1].lower() if len(words) > 1 else ""
    place = words[2].lower() if len(words) > 2 else None
    return RoundRecord(
        round=number,
        action=words[0],
        target=target,
        place=place,
        verb=verb,
        status=status,
        code=code,
        feedback=feedback,
    )


def _last_round(path: Path, number: int, answer: str, problems: Problems) -> RoundRecord | None:
    """Return the last answer's round: end, or a subtask whose outcome EMMOE did not log."""
    where = f"{path}: entry {number}"
    found = next((m for m in (r.search(answer) for r in _SUBTASK) if m), None)
    words = tuple(w.strip() for w in found.group(1).strip().strip("[]").split(",")) if found else ()
    if not words or not words[0] or len(words) > 3:
        problems.add(where, "answer", "expected 'Subtask: [action, target]' as HomieBot answers")
        return None
    verb = parse_verb(words[0])
    if verb is Verb.END:
        return _round(number, words, verb, (RoundStatus.END, None, ""))
    outcome = _logged_outcome(path.parent / LAST_ROUND, problems)
    if outcome is None:
        return None
    return _round(number, words, verb, outcome)


def _logged_outcome(path: Path, problems: Problems) -> tuple[Any, ...] | None:
    """Return the last round's outcome sortie wrote beside the log, else unrecorded."""
    if not path.exists() and not path.is_symlink():
        return (RoundStatus.UNRECORDED, None, "")
    text = read_text(path, problems, str(path), "file")  # a regular file, bounded
    if text is None:
        return None
    try:
        data = json.loads(text)
        status = RoundStatus(data["status"])
        feedback = str(data["feedback"])
        code = code_of(feedback) if status is RoundStatus.FAILURE else None
    except (ValueError, KeyError, TypeError, RecursionError) as error:
        expected = '{"status": "success" or "failure", "feedback": "..."}'
        problems.add(str(path), "file", f"expected {expected}: {error}")
        return None
    return status, code, feedback


def _footer(spec: EpisodeSpec, rounds: list[RoundRecord]) -> TrajectoryFooter:
    """Return how the run ended: as the planner's end, with its rounds spent, or unanswered."""
    ended = bool(rounds) and rounds[-1].status is RoundStatus.END
    task = household_task(spec)
    if ended and task_progress(task, rounds) >= 1.0:
        outcome, reason = Outcome.SUCCESS, None
    else:
        outcome = Outcome.FAILURE
        reason = (
            HouseholdFailure.ENDED_UNFINISHED
            if ended
            else HouseholdFailure.ROUNDS_EXHAUSTED
            if len(rounds) >= task.max_rounds
            else HouseholdFailure.NO_ANSWER
        ).value
    facts = HouseholdFacts(ended=ended, rounds=len(rounds))
    return TrajectoryFooter(
        outcome=outcome, failure_reason=reason, steps=len(rounds), facts=facts.as_record()
    )


def _steps(rounds: list[RoundRecord]) -> list[StepRecord]:
    """Return one step record per round (EMMOE logs no pose or clock: zeros)."""
    return [
        HouseholdStep(
            index=r.round,
            pose=Pose(0.0, 0.0, 0.0),
            action=recorded_action(
                {
                    "type": "subtask",
                    "action": r.action,
                    "target": r.target,
                    "skill": r.skill,
                    "place": r.place,
                }
            ),
            clock_sim=0.0,
            clock_latency=0.0,
            part=r,
        )
        for r in rounds
    ]
