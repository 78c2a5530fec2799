"""Aggregation of per-episode metrics: the one place where means are taken.

An episode that ended in an error (``agent_error``, ``backend_error``, or the ``error``
outcome) is not an attempt at the mission: it is left out of every mean and counted apart
(``errors``), so a crash never looks like a scored failure.

A ratio column (``RATIOS``) is not a mean of per-episode values but the ratio of the sums of
two per-episode columns over the group's scored episodes: household SER = Σ sr / Σ ended and
SRR = Σ failed_in_success / Σ failed_subtasks. It is NaN when the denominator sums to 0 (no
run issued ``end``; no subtask failed): undefined, never 0 or 100.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sortie.core.records import ERROR_REASONS, Outcome

PERCENT = {
    "tcr",
    "hs",
    "sr",
    "osr5",
    "osr10",
    "osr20",
    "mp",
    "eff",
    "cr",
    "gap",
    "unscored",
    "eff_all_steps",
    "cr_all_steps",
    "iou",
    "iou_start2d",
    "sr_missionbench",
    "mp_missionbench",
    "gap_missionbench",
    "ndtw",
    "sdtw",
    "sdtw_r4r",
    "spl",
    "movement_effectiveness",
    "tp",
    "tp_emmoe",
    "ser",
    "srr",
    "srr_emmoe",
    "plwsr",
    "tp_category",
    "tp_emmoe_category",
    "sr_category",
    "ser_category",
    "srr_category",
    "srr_emmoe_category",
    "plwsr_category",
    "gc",
    "no_goals",
}
"""Metrics shown as percentages."""
ERROR = "error"
"""The metric that marks an errored episode (1.0; 0.0 for a scored one)."""


@dataclass(frozen=True, slots=True)
class Ratio:
    """A run-level column: the sum of one per-episode column over the sum of another."""

    numerator: str
    denominator: str

    def of(self, items: Iterable[Mapping[str, float]]) -> float:
        """Return Σ numerator / Σ denominator over ``items`` with both defined (NaN if Σ is 0)."""
        pairs = [(m[self.numerator], m[self.denominator]) for m in items if self.defined(m)]
        below = sum(d for _, d in pairs)
        return sum(n for n, _ in pairs) / below if below else math.nan

    def defined(self, metrics: Mapping[str, float]) -> bool:
        """Return whether an episode holds both parts of the ratio (neither missing nor NaN)."""
        parts = (metrics.get(self.numerator, math.nan), metrics.get(self.denominator, math.nan))
        return not any(math.isnan(part) for part in parts)


RATIOS: dict[str, Ratio] = {
    "ser": Ratio("sr", "ended"),
    "srr": Ratio("failed_in_success", "failed_subtasks"),
    "srr_emmoe": Ratio("replans_in_success", "replans"),
    "ser_category": Ratio("sr_category", "ended"),
    "srr_category": Ratio("failed_in_success_category", "failed_subtasks"),
    "srr_emmoe_category": Ratio("replans_in_success_category", "replans"),
}
"""The ratio columns, by name: SER (runs that succeeded of those that issued ``end``), SRR
(failed subtasks inside successful runs of all failed subtasks) and EMMOE's reading of SRR
(the same of the failed subtasks the planner planned again after); each also with EMMOE's
category matching (``_category``, docs/household.md)."""


def is_error(outcome: str, failure_reason: str | None) -> bool:
    """Return whether an episode ended in an error rather than by the mission's rules."""
    # Records and stores written before outcome "error" existed mark errors by reason alone.
    return outcome == Outcome.ERROR or failure_reason in ERROR_REASONS


def errored_metrics(names: Iterable[str]) -> dict[str, float]:
    """Return the metrics of an errored episode: ``error`` 1 and every other one NaN."""
    return {ERROR: 1.0, **{name: math.nan for name in names if name != ERROR}}


def group_means(
    rows: Iterable[tuple[str, Mapping[str, float]]], columns: Sequence[str]
) -> dict[str, dict[str, float]]:
    """Return, per group key, the mean of each column over its scored episodes.

    ``rows`` are ``(group, metrics)`` pairs; an episode whose ``error`` metric is 1 is left
    out of the means. The result also holds ``n`` (every episode of the group), ``errors``
    (those left out) and an ``all`` group. NaN values are left out of their column's mean. A
    column in ``RATIOS`` is the ratio of its parts' sums over the scored episodes instead.
    """
    grouped: dict[str, list[Mapping[str, float]]] = defaultdict(list)
    for group, metrics in rows:
        grouped[group].append(metrics)
        grouped["all"].append(metrics)
    return {
        group: _means(items, columns)
        for group, items in sorted(grouped.items(), key=lambda kv: kv[0] == "all")
    }


def _means(items: list[Mapping[str, float]], columns: Sequence[str]) -> dict[str, float]:
    scored = [m for m in items if m.get(ERROR, 0.0) != 1.0]
    return {
        "n": float(len(items)),
        "errors": float(len(items) - len(scored)),
        **{c: _mean(scored, c) for c in columns},
    }


def _mean(items: list[Mapping[str, float]], column: str) -> float:
    if column in RATIOS:
        ratio = RATIOS[column].of(items)
        return 100.0 * ratio if column in PERCENT else ratio
    values = [m[column] for m in items if column in m and not math.isnan(m[column])]
    if not values:
        return math.nan
    mean = sum(values) / len(values)
    return 100.0 * mean if column in PERCENT else mean
