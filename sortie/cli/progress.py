"""``sortie run``'s progress: bars on a terminal, a line now and then in logs and CI.

Names from the user (suites, run ids, agents, paths) are printed with rich markup escaped, so
``[red]`` or ``[/x]`` in one shows as written instead of styling or breaking the output.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

from rich.console import Console
from rich.markup import escape
from rich.progress import MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from sortie.metrics.aggregate import is_error
from sortie.run.batch import Plan, RunRequest, execute, plan_run
from sortie.run.jobs import JobResult
from sortie.run.store import Store


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
        _execute(plan, request, store, console)
    except KeyboardInterrupt:
        console.print(
            f"Stopped. Finished episodes are kept in {escape(str(request.store))}; "
            f"resume with --run-id {escape(plan.run_id)}"
        )
        raise
    return plan


def _execute(plan: Plan, request: RunRequest, store: Store, console: Console) -> None:
    """Run the plan with progress: bars on a terminal, else a line now and then (see Lines)."""
    if not console.is_terminal:
        lines = ProgressLines(
            console, len(plan.todo), f"{' + '.join(plan.suites)} · {request.agent}"
        )
        execute(plan, request, store, on_result=lines.done)
        return
    _execute_with_bars(plan, request, store, console)


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


def _execute_with_bars(plan: Plan, request: RunRequest, store: Store, console: Console) -> None:
    """Run the plan under one progress bar per suite: done, success rate so far, time left."""
    columns = (
        *Progress.get_default_columns()[:3],
        MofNCompleteColumn(),
        TextColumn("success {task.fields[rate]}"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        bars = {
            suite: progress.add_task(
                escape(f"{suite} · {request.agent}"),
                rate="–",
                total=sum(j.suite == suite for j in plan.todo),
            )
            for suite in plan.suites
        }
        successes: Counter[str] = Counter()

        def advance(result: JobResult) -> None:
            suite = result.job.suite
            successes[suite] += result.footer.outcome == "success"
            done = progress.tasks[bars[suite]].completed + 1
            progress.update(bars[suite], advance=1, rate=f"{successes[suite] / done:.0%}")

        execute(plan, request, store, on_result=advance)
