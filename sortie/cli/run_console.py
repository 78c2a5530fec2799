"""What ``sortie run`` shows: its progress while it runs, then the per-level table.

Progress is bars on a terminal, or a line now and then in logs and CI. Names from the user
(suites, run ids, agents, paths) are printed with rich markup escaped, so ``[red]`` or ``[/x]``
in one shows as written instead of styling or breaking the output.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.progress import MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from sortie.cli.common import print_whole
from sortie.metrics.aggregate import ERROR, is_error
from sortie.metrics.intervals import Estimate, episode_means, group_intervals
from sortie.missions.registry import FAMILIES
from sortie.report.mistakes import mistake_lines, mistakes_of
from sortie.run.batch import Plan, RunRequest, execute, plan_run
from sortie.run.jobs import JobResult
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


def run_and_report(request: RunRequest, console: Console, wide: bool = False) -> RunSummary:
    """Run (or resume) a run, then print its whole table from the store and where it is.

    ``wide`` prints the table one row a level whatever the terminal's width.

    Raises:
        KeyboardInterrupt: after saying how to resume; finished episodes are kept.
        RunAbortedError: too many episodes in a row ended in an error.
    """
    with Store(request.store) as store:
        plan = run_with_progress(request, store, console)
        summary = print_results(store, plan, request.agent, console, wide)
    console.print(f"Store: {escape(str(request.store.resolve()))} (run {escape(plan.run_id)})")
    console.print(f"Records: {escape(str(plan.records.resolve()))}")
    return summary


def run_with_progress(request: RunRequest, store: Store, console: Console) -> Plan:
    """Run (or resume) a run into ``store`` under progress bars; return its plan.

    Raises:
        KeyboardInterrupt: after saying how to resume; finished episodes are kept.
        RunAbortedError: too many episodes in a row ended in an error.
    """
    plan = plan_run(request, store)
    skipped = len(plan.jobs) - len(plan.todo)
    if skipped:
        console.print(
            f"Run {escape(plan.run_id)}: {skipped} of {len(plan.jobs)} episodes "
            "already stored, running the rest"
        )
    try:
        with _progress(plan, request.agent, console) as on_result:
            execute(plan, request, store, on_result=on_result)
    except KeyboardInterrupt:
        console.print(
            f"Stopped. Finished episodes are kept in {escape(str(request.store))}; "
            f"resume with --run-id {escape(plan.run_id)}"
        )
        raise
    return plan


@contextmanager
def _progress(plan: Plan, agent: str, console: Console) -> Iterator[Callable[[JobResult], None]]:
    """Yield what to tell of each finished episode: bars on a terminal, else lines."""
    if not console.is_terminal:
        yield ProgressLines(console, len(plan.todo), f"{' + '.join(plan.suites)} · {agent}").done
        return
    columns = (
        *Progress.get_default_columns()[:3],
        MofNCompleteColumn(),
        TextColumn("success {task.fields[rate]}"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        yield ProgressBars(progress, plan, agent).done


class ProgressBars:
    """Progress on a terminal: one bar per suite, with done, success rate so far, time left."""

    def __init__(self, progress: Progress, plan: Plan, agent: str) -> None:
        self.progress = progress
        self.bars = {
            suite: progress.add_task(
                escape(f"{suite} · {agent}"),
                rate="–",
                total=sum(j.suite == suite for j in plan.todo),
            )
            for suite in plan.suites
        }
        self.successes: Counter[str] = Counter()

    def done(self, result: JobResult) -> None:
        """Advance the finished episode's suite bar and its success rate."""
        suite = result.job.suite
        self.successes[suite] += result.footer.outcome == "success"
        done = self.progress.tasks[self.bars[suite]].completed + 1
        rate = f"{self.successes[suite] / done:.0%}"
        self.progress.update(self.bars[suite], advance=1, rate=rate)


class ProgressLines:
    """Progress for logs and CI, where a bar prints nothing: one line per finished episode.

    A run of more than ``EVERY`` episodes prints a line every ``SECONDS`` of wall time at most
    (and the last one), as pytest and pip do when their output is not a terminal. A line says
    done/total, successes, errors and the time left at the pace so far.
    """

    EVERY = 40
    SECONDS = 10.0

    def __init__(
        self, console: Console, total: int, label: str, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.console, self.total, self.label, self.clock = console, total, label, clock
        self.start = self.last = clock()
        self.counts: Counter[str] = Counter()

    def done(self, result: JobResult) -> None:
        """Count a finished episode and print a line if one is due."""
        footer = result.footer
        ending = "error" if is_error(footer.outcome, footer.failure_reason) else str(footer.outcome)
        self.counts[ending] += 1
        now, finished = self.clock(), self.counts.total()
        due = self.total <= self.EVERY or now - self.last >= self.SECONDS
        if due or finished == self.total:
            self.last = now
            self.console.print(self.line(finished, now - self.start), highlight=False)

    def line(self, finished: int, elapsed: float) -> str:
        """Return ``[12/213] label: 10 success, 2 failure, 0 errors · 0:41 elapsed, 11:32 left``."""
        left = elapsed / finished * (self.total - finished)
        ended = f"{self.counts['success']} success, {self.counts['failure']} failure"
        return (
            f"[{finished}/{self.total}] {escape(self.label)}: {ended}, "
            f"{self.counts['error']} errors · {_clock(elapsed)} elapsed, {_clock(left)} left"
        )


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def print_results(
    store: Store, plan: Plan, agent: str, console: Console, wide: bool = False
) -> RunSummary:
    """Print the run's per-level table and how many of its episodes errored; summarise it.

    The table is one row a level when it fits the terminal (or ``wide``); otherwise one row a
    number, a column a level, each interval under its mean, so no number is ever cut.
    """
    family = FAMILIES.get(plan.family)
    title = escape(f"{' + '.join(plan.suites)} · {agent}")
    episodes = store.episodes(plan.run_id)
    table = results_table(episodes, title, family.columns, family.level_name)
    if not wide and _width(console, table) > console.width:
        table = results_table(episodes, title, family.columns, family.level_name, narrow=True)
    print_whole(console, table)
    return summarise(episodes, plan, console)


def _width(console: Console, table: Table) -> int:
    """Return the width ``table`` takes printed whole (its widest cells unbroken)."""
    return Measurement.get(console, console.options.update(width=10_000), table).maximum


def summarise(episodes: Sequence[StoredEpisode], plan: Plan, console: Console) -> RunSummary:
    """Print what went wrong in the run's ``episodes``, with the first reason; summarise.

    Episodes that ended in an agent or backend error are counted by kind with the first
    one's message (a message all of them share is said once, as the run's), and how to
    re-run them; invalid actions are counted over the episodes with the first one's reason
    (``sortie.report.mistakes``).
    """
    mistakes = mistakes_of(episodes)
    for line in mistake_lines(plan.run_id, mistakes):
        console.print(
            escape(line), style="bold red" if "error" in line.split(";")[0] else "bold yellow"
        )
    if mistakes.errors:
        console.print(
            f"See `sortie report`, then re-run them with --run-id {escape(plan.run_id)} "
            "--retry-errors"
        )
    return RunSummary(plan, len(episodes), mistakes.errors.total())


OUTCOMES = ("success", "failure", "error")
"""How an episode can end, as the summary table counts them."""


def results_table(
    episodes: Iterable[StoredEpisode],
    title: str,
    columns: tuple[str, ...],
    level_name: str = "level",
    narrow: bool = False,
) -> Table:
    """Return the per-level table: episodes and runs, outcomes, each metric's mean and interval.

    ``episodes`` counts each episode once and ``runs`` its repeats too, as ``sortie report``
    does; the outcomes count runs. Means are over the runs that did not end in an error
    (repeats averaged first, rates in %), in ``columns`` (the family's). ``level_name`` heads
    the first column: what the family's levels are (``type``, ``attributes``). ``narrow``
    turns it: a row a number, a column a level, each interval under its mean.
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
    levels = sorted(counts, key=lambda name: name == "all")
    cells = {
        level: [
            str(len(distinct[level])),
            str(counts[level].total()),
            *(str(counts[level][o]) for o in OUTCOMES),
            *(_cell(intervals.get(level, {}).get(c), narrow) for c in columns),
        ]
        for level in levels
    }
    names = ["episodes", "runs", *OUTCOMES, *(c.upper() for c in columns)]
    caption = "mean, and its 95% bootstrap interval over episodes" + (" under it" if narrow else "")
    if narrow:
        return _turned(Table(title=title, caption=caption, **_NARROW), names, cells)
    table = Table(title=title, caption=caption)
    for name in (level_name, *names):
        table.add_column(name, justify="right")
    for level, row in cells.items():
        table.add_row(level, *row)
    return table


_NARROW: dict[str, Any] = {
    "box": box.SIMPLE_HEAD,
    "padding": (0, 0, 0, 1),  # one space between columns: an 80-column terminal's room
    "pad_edge": False,
    "show_edge": False,
}
"""How a turned table is drawn: no frame, one space between columns."""


def _turned(table: Table, names: list[str], cells: dict[str, list[str]]) -> Table:
    """Return ``table`` filled a row per number (``names``), a column per level."""
    table.add_column("", no_wrap=True)
    for level in cells:
        table.add_column(level, justify="right", no_wrap=True)
    for row, name in enumerate(names):
        table.add_row(name, *(line[row] for line in cells.values()))
    return table


def _ending(episode: StoredEpisode) -> str:
    """Return ``success``, ``failure`` or ``error`` (agent or backend error) for an episode."""
    if is_error(episode.outcome, episode.failure_reason) or episode.metrics.get(ERROR) == 1.0:
        return "error"
    return "success" if episode.outcome == "success" else "failure"


def _cell(estimate: Estimate | None, stacked: bool = False) -> str:
    """Return ``mean lo–hi``, or just the mean when there is no interval or it is a point.

    ``stacked`` puts the interval under the mean, for a narrow table.
    """
    if estimate is None or math.isnan(estimate.mean):
        return "–"
    if math.isnan(estimate.lo) or estimate.lo == estimate.hi:
        return f"{estimate.mean:.1f}" if estimate.mean % 1 else f"{estimate.mean:.0f}"
    between = "\n" if stacked else " "
    return f"{estimate.mean:.1f}{between}{estimate.lo:.1f}–{estimate.hi:.1f}"
