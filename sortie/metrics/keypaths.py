"""Task progress (TP): how much of a household task's best keypath the successful rounds cover.

A keypath is an ordered list of the subtasks a task needs. The successful rounds are matched
against it in order as a subsequence: a round matches a step when its verb is the step's and
its target (and, for ``put``, its place) denotes the step's object: the executor resolved it
to that object, or the planner's words are one of the object's names in the task's synonym
table. Matching greedily, step by step, finds the longest matched prefix, which is the
longest in-order match (a later round can never do better than an earlier one for the same
step). TP is the best share over the keypaths.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sortie.core.household import (
    HouseholdTask,
    KeyStep,
    RoundRecord,
    TaskObject,
    Verb,
    normalise,
)


def denotes(words: str, resolved: str | None, name: str, objects: dict[str, TaskObject]) -> bool:
    """Return whether a round's ``words`` (resolved to ``resolved``) mean task object ``name``."""
    if resolved == name or words.strip() == name:
        return True
    entry = objects.get(name)
    return entry is not None and normalise(words) in {normalise(n) for n in entry.names}


def matches(record: RoundRecord, step: KeyStep, objects: dict[str, TaskObject]) -> bool:
    """Return whether a successful round carries out keypath ``step``."""
    if record.verb is not step.action or not record.succeeded:
        return False
    if not denotes(record.target, record.target_object, step.target, objects):
        return False
    if step.action is Verb.PUT and step.place is not None:
        return denotes(record.place or "", record.place_object, step.place, objects)
    return True


def matched_steps(
    keypath: Sequence[KeyStep], rounds: Iterable[RoundRecord], objects: dict[str, TaskObject]
) -> int:
    """Return how many steps of ``keypath`` the rounds carry out in order."""
    done = 0
    for record in rounds:
        if done < len(keypath) and matches(record, keypath[done], objects):
            done += 1
    return done


def task_progress(task: HouseholdTask, rounds: Sequence[RoundRecord]) -> float:
    """Return TP: the best share, over the task's keypaths, of steps matched in order."""
    return max(matched_steps(k, rounds, task.objects) / len(k) for k in task.keypaths)
