"""What ``sortie run`` prints when a run has finished: the per-level table and its errors.

Names from the user (suites, run ids, agents) are printed with rich markup escaped, so ``[red]``
or ``[/x]`` in one shows as written instead of styling or breaking the output.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sortie.core.trajectory import ERROR_REASONS
from sortie.metrics.aggregate import ERROR, is_error
from sortie.metrics.intervals import Estimate, episode_means, group_intervals
from sortie.missions.registry import FAMILIES
from sortie.run.batch import Plan
from sortie.run.store import Store, StoredEpisode


@dataclass(frozen=True, slots=True)
class RunSummary:
    """What a finished ``sortie run`` holds: its plan, its stored and its errored episodes."""

    plan: Plan
    stored: int
    errored: int

    @property
    def all_errored(self) -> bool:
        """Return True if every stored episode ended in an agent or backend error."""
        return self.stored > 0 and self.errored == self.stored


def print_results(store: Store, plan: Plan, agent: str, console: Console) -> RunSummary:
    """Print the run's per-level table and how many of its episodes errored; summarise it."""
    family = FAMILIES.get(plan.family)
    title = escape(f"{' + '.join(plan.suites)} · {agent}")
    episodes = store.episodes(plan.run_id)
    console.print(results_table(episodes, title, family.columns, family.level_name))
    return summarise(store, plan, console)


def summarise(store: Store, plan: Plan, console: Console) -> RunSummary:
    """Print how many of the run's episodes ended in an agent or backend error; summarise it."""
    episodes = store.episodes(plan.run_id)
    kinds = Counter(e.failure_reason for e in episodes if e.failure_reason in ERROR_REASONS)
    if kinds:
        listed = ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items()))
        console.print(
            f"[bold red]{kinds.total()} of {len(episodes)} episodes ended in an "
            f"error[/] ({listed}); see `sortie report`, then re-run them with "
            f"--run-id {escape(plan.run_id)} --retry-errors"
        )
    return RunSummary(plan, len(episodes), kinds.total())


OUTCOMES = ("success", "failure", "error")
"""How an episode can end, as the summary table counts them."""


def results_table(
    episodes: Iterable[StoredEpisode],
    title: str,
    columns: tuple[str, ...],
    level_name: str = "level",
) -> Table:
    """Return the per-level table: episodes and runs, outcomes, each metric's mean and interval.

    ``episodes`` counts each episode once and ``runs`` its repeats too, as ``sortie report``
    does; the outcomes count runs. Means are over the runs that did not end in an error
    (repeats averaged first, rates in %), in ``columns`` (the family's). ``level_name`` heads
    the first column: what the family's levels are (``type``, ``attributes``).
    """
    episodes = list(episodes)
    scored = ((e.level or "-", e.key, e.metrics) for e in episodes if _ending(e) != "error")
    intervals = group_intervals(episode_means(scored, columns), columns)
    counts: dict[str, Counter[str]] = {}
    distinct: dict[str, set[str]] = {}
    for e in episodes:
        for level in (e.level or "-", "all"):
            counts.setdefault(level, Counter())[_ending(e)] += 1
            distinct.setdefault(level, set()).add(f"{e.suite}/{e.episode_id}")
    table = Table(title=title, caption="mean, and its 95% bootstrap interval over episodes")
    for column in (level_name, "episodes", "runs", *OUTCOMES, *columns):
        table.add_column(column.upper() if column in columns else column, justify="right")
    for level in sorted(counts, key=lambda name: name == "all"):
        row = intervals.get(level, {})
        table.add_row(
            level,
            str(len(distinct[level])),
            str(counts[level].total()),
            *(str(counts[level][o]) for o in OUTCOMES),
            *(_cell(row[c]) if c in row else "–" for c in columns),
        )
    return table


def _ending(episode: StoredEpisode) -> str:
    """Return ``success``, ``failure`` or ``error`` (agent or backend error) for an episode."""
    if is_error(episode.outcome, episode.failure_reason) or episode.metrics.get(ERROR) == 1.0:
        return "error"
    return "success" if episode.outcome == "success" else "failure"


def _cell(estimate: Estimate) -> str:
    """Return ``mean lo–hi``; just the mean when there is no interval or it is a point."""
    if math.isnan(estimate.mean):
        return "–"
    if math.isnan(estimate.lo) or estimate.lo == estimate.hi:
        return f"{estimate.mean:.1f}" if estimate.mean % 1 else f"{estimate.mean:.0f}"
    return f"{estimate.mean:.1f} {estimate.lo:.1f}–{estimate.hi:.1f}"
