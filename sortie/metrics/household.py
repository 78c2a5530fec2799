"""Household metrics (docs/household.md, Metrics), pure functions of a trajectory record.

Each planner round is a step record with its ``RoundRecord``; the task (keypaths, goals, the
expert's plan, the synonym table) is the header's mission and the final state the footer's
facts. Fractions are in 0..1 (reports show them in percent). Choices and edge cases:

- **tp** matches each keypath's steps, in order, against the successful rounds only (a failed
  round that would have matched does not count); matching greedily, each step taking the
  first later round that fits, finds the longest matched prefix, which is optimal: taking an
  earlier round never leaves fewer rounds for the steps after it. TP is the best keypath's
  share, so an open-ended task scores its closest alternative;
- **sr** needs TP 1 and ``end`` issued: a run that did everything but never said ``end`` is
  not a success;
- a task with no goal conditions has no GC: ``gc`` is NaN and ``no_goals`` 1, so it is left
  out of the GC mean and counted, never averaged in as 0 or 1; a container whose state the
  facts do not record is neither open nor closed;
- SER and SRR are run-level ratios of sums (``sortie.metrics.aggregate.RATIOS``): the
  episode gives their parts (``sr`` and ``ended``; ``failed_in_success`` and
  ``failed_subtasks``);
- EMMOE's readings come beside sortie's (docs/household.md, Readings that differ from
  EMMOE's code): ``tp_emmoe`` counts ``end`` as a keypath step; ``replans`` and
  ``replans_in_success`` are the parts of ``srr_emmoe``, which counts a failed round only
  when the planner planned another subtask after it; ``_category`` metrics (TP in both
  readings, SR, PLWSR and the successful parts of SER and SRR) match a round to a step when
  it acted on any thing of the step's thing's kind, as EMMOE's notebooks match names
  through its synonym table (``match=category``);
- an errored episode (agent or backend error) is not scored: ``error`` 1, the rest NaN.
"""

from __future__ import annotations

import math

from sortie.core.trajectory import Trajectory
from sortie.metrics.aggregate import ERROR, errored_metrics, is_error
from sortie.missions.household.facts import HouseholdFacts, household_facts
from sortie.missions.household.records import (
    ErrorCode,
    GoalCondition,
    HouseholdTask,
    RoundRecord,
    RoundStatus,
)
from sortie.missions.household.rules import (
    goal_met,
    replans,
    task_progress,
    task_progress_emmoe,
)
from sortie.missions.household.spec import household_task
from sortie.missions.household.vocabulary import round_of

CODE_METRICS = tuple(code.value.lower() for code in ErrorCode)
"""One count per executor error code: ``l1`` … ``e3``."""
CATEGORY_METRICS = (
    "tp_category",
    "tp_emmoe_category",
    "sr_category",
    "plwsr_category",
    "failed_in_success_category",
    "replans_in_success_category",
)
"""The metrics that depend on matching, again with EMMOE's category matching (``_category``)."""
METRICS = (
    "sr",
    "tp",
    "ended",
    "rounds",
    "expert_length",
    "plwsr",
    "gc",
    "no_goals",
    "successful_subtasks",
    "failed_subtasks",
    "failed_in_success",
    "tp_emmoe",
    "replans",
    "replans_in_success",
    *CATEGORY_METRICS,
    *CODE_METRICS,
)
"""Every metric ``score_household`` returns, besides ``error``."""


def score_household(trajectory: Trajectory) -> dict[str, float]:
    """Return every household metric of one episode (NaN where a metric does not apply)."""
    footer = trajectory.footer
    if is_error(footer.outcome, footer.failure_reason):
        return errored_metrics(METRICS)
    task = household_task(trajectory.header.episode)
    facts = household_facts(trajectory)
    rounds = [r for r in map(round_of, trajectory.steps) if r is not None]
    tp = task_progress(task, rounds)
    sr = float(tp == 1.0 and facts.ended)
    agent, expert = len(rounds), len(task.expert)
    failed = sum(1 for r in rounds if r.status is RoundStatus.FAILURE)
    replanned = replans(rounds)
    return {
        ERROR: 0.0,
        "sr": sr,
        "tp": tp,
        "ended": float(facts.ended),
        "rounds": float(agent),
        "expert_length": float(expert),
        "plwsr": sr * expert / max(agent, expert),
        **_goal_metrics(task.goals, facts),
        "successful_subtasks": float(sum(1 for r in rounds if r.succeeded)),
        "failed_subtasks": float(failed),
        "failed_in_success": float(failed) * sr,
        "tp_emmoe": task_progress_emmoe(task, rounds, facts.ended),
        "replans": float(replanned),
        "replans_in_success": float(replanned) * sr,
        **_category_metrics(task, rounds, facts.ended, (failed, replanned)),
        **code_counts(rounds),
    }


def _category_metrics(
    task: HouseholdTask, rounds: list[RoundRecord], ended: bool, failures: tuple[int, int]
) -> dict[str, float]:
    """Return TP, SR and what hangs on SR with a round matching any thing of a step's kind."""
    tp = task_progress(task, rounds, category=True)
    sr = float(tp == 1.0 and ended)
    expert = len(task.expert)
    return {
        "tp_category": tp,
        "tp_emmoe_category": task_progress_emmoe(task, rounds, ended, category=True),
        "sr_category": sr,
        "plwsr_category": sr * expert / max(len(rounds), expert),
        "failed_in_success_category": float(failures[0]) * sr,
        "replans_in_success_category": float(failures[1]) * sr,
    }


def code_counts(rounds: list[RoundRecord]) -> dict[str, float]:
    """Return how many rounds got each executor error code (``l1`` … ``e3``)."""
    counts = dict.fromkeys(CODE_METRICS, 0.0)
    for round_ in rounds:
        if round_.code is not None:
            counts[round_.code.value.lower()] += 1.0
    return counts


def _goal_metrics(goals: list[GoalCondition], facts: HouseholdFacts) -> dict[str, float]:
    """Return GC and ``no_goals`` (1 with GC NaN when the task lists no goal condition)."""
    if not goals:
        return {"gc": math.nan, "no_goals": 1.0}
    met = sum(1 for goal in goals if goal_met(goal, facts))
    return {"gc": met / len(goals), "no_goals": 0.0}
