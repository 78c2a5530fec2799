"""The household rules that the live mission and the scorers share (docs/household.md, Metrics).

TP matches each keypath's steps, in order, against the successful rounds only; a goal
condition holds or not in the final facts. A round matches a step when it acted on the step's
thing (sortie's reading) or, with ``category``, on any thing of its kind (EMMOE's: its
notebooks map every name to a canonical name, a kind of thing, so any apple is "apple"). The
mission ends an episode with them, the metrics score records with them, the oracle and the
report read the same matching.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from sortie.missions.household.facts import HouseholdFacts
from sortie.missions.household.records import (
    GoalCondition,
    HouseholdTask,
    KeyStep,
    Relation,
    RoundRecord,
    RoundStatus,
    normalise,
)


def task_progress(
    task: HouseholdTask, rounds: Sequence[RoundRecord], category: bool = False
) -> float:
    """Return TP: the best keypath's share of steps matched in order by successful rounds."""
    done = [r for r in rounds if r.status is RoundStatus.SUCCESS]
    return max(matched(path, done, task, category) / len(path) for path in task.keypaths)


def task_progress_emmoe(
    task: HouseholdTask, rounds: Sequence[RoundRecord], ended: bool, category: bool = False
) -> float:
    """Return TP as EMMOE's notebook reads it: ``end`` is one more keypath step.

    EMMOE's keypaths end with ``[End]`` and the planner's ``end`` is appended to its history,
    so a keypath of n steps has n + 1, and ``end`` matches only after all n: an unfinished
    episode scores m / (n + 1), a finished one that never said end n / (n + 1). The notebook
    reads the rounds from the last prompt's history, which never holds the last answer's
    outcome: the last round of a run that did not end (out of rounds, no answer) is not seen.
    """
    seen = rounds if ended else rounds[:-1]
    done = [r for r in seen if r.status is RoundStatus.SUCCESS]
    best = 0.0
    for path in task.keypaths:
        steps = matched(path, done, task, category)
        steps += 1 if steps == len(path) and ended else 0
        best = max(best, steps / (len(path) + 1))
    return best


def replans(rounds: Sequence[RoundRecord]) -> int:
    """Return the failed rounds after which the planner planned again (EMMOE's SRR counts).

    EMMOE's notebook counts a failed subtask when another subtask, not ``end``, follows it:
    a failure in the last round, or just before ``end``, is not counted.
    """
    return sum(
        1
        for failed, after in zip(rounds, rounds[1:], strict=False)
        if failed.status is RoundStatus.FAILURE and after.status is not RoundStatus.END
    )


def matched(
    path: Sequence[KeyStep],
    rounds: Iterable[RoundRecord],
    task: HouseholdTask,
    category: bool = False,
) -> int:
    """Return how many of ``path``'s steps ``rounds`` match as an ordered subsequence."""
    count = 0
    for round_ in rounds:
        if count < len(path) and matches(round_, path[count], task, category):
            count += 1
    return count


def matches(
    round_: RoundRecord, step: KeyStep, task: HouseholdTask, category: bool = False
) -> bool:
    """Return whether a successful round did a keypath step: same verb, target and (put) place.

    With ``category`` a target or place matches any thing of the step's thing's kind.
    """
    if round_.verb is not step.action or not round_.succeeded:
        return False
    same = denotes_kind if category else denotes
    if not same(round_.target_object, round_.target, step.target, task):
        return False
    return step.place is None or same(round_.place_object, round_.place, step.place, task)


def denotes(resolved: str | None, raw: str | None, name: str, task: HouseholdTask) -> bool:
    """Return whether a round's object (resolved, or its raw words) means object ``name``.

    The executor's resolution decides when there is one: words that are also another object's
    name must not credit an object the executor did not act on. Words the executor never
    resolved (a record from elsewhere) match the object's name or other names, normalised.
    """
    if resolved is not None:
        return resolved == name
    if raw is None:
        return False
    entry = task.objects.get(name)
    names = {normalise(name), *(normalise(n) for n in (entry.names if entry else []))}
    return normalise(raw) in names


def kind_of(name: str, task: HouseholdTask) -> str:
    """Return the kind of a thing: the task's for its objects, else its name's.

    sortie's scenes name a thing ``<kind>_<n>`` (``apple_1``); a name without the number (a
    record from elsewhere) is its own kind.
    """
    entry = task.objects.get(name)
    return entry.kind if entry else re.sub(r"_\d+$", "", name)


def denotes_kind(resolved: str | None, raw: str | None, name: str, task: HouseholdTask) -> bool:
    """Return whether a round's object (resolved, or its raw words) is of object ``name``'s kind.

    Resolved, its kind decides; raw words match when they name any of the task's objects of
    that kind (``denotes``), as EMMOE maps every word to its canonical name.
    """
    kind = kind_of(name, task)
    if resolved is not None:
        return kind_of(resolved, task) == kind
    alike = [other for other, entry in task.objects.items() if entry.kind == kind]
    return any(denotes(None, raw, other, task) for other in alike or [name])


def goal_met(goal: GoalCondition, facts: HouseholdFacts) -> bool:
    """Return whether one goal condition holds in the final state."""
    if goal.relation is Relation.HELD:
        return facts.held == goal.object
    if goal.relation in (Relation.OPEN, Relation.CLOSED):
        # A container the facts do not list has no known state: neither goal holds.
        state = facts.open.get(goal.object)
        return state is not None and state == (goal.relation is Relation.OPEN)
    place = facts.places.get(goal.object)
    return place is not None and (place.relation, place.place) == (goal.relation, goal.place)
