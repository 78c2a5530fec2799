"""``sortie run`` and ``sortie sweep``: runs into the results store."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from sortie.cli.common import (
    FormatOption,
    GroupOption,
    app,
    console,
    echo,
    fail,
    grouped_options,
)
from sortie.cli.run_options import RunOptions, SingleRunOptions
from sortie.core.errors import RunAbortedError, SortieError


@app.command()
@grouped_options
def run(
    options: SingleRunOptions,
    run_id: Annotated[
        str | None, typer.Option(help="Run to resume or create (default: agent and time).")
    ] = None,
) -> None:
    """Run suites with one agent into the results store (resumable) and print a level table.

    Exit codes: 0 done; 1 every episode ended in an error, or the run stopped after too many in
    a row; 2 bad input or an unusable store; 130 stopped by Ctrl-C.
    """
    with exit_codes():
        request = options.request(run_id)
        if request.workers > 1 and request.executor == "local":
            from sortie.run.fork_server import start_worker_server

            start_worker_server()  # the workers' imports go on beside this process's own
        from sortie.cli.run_console import run_and_report

        summary = run_and_report(request, console, options.wide)
        _warn_echoes(request.store, summary.plan.run_id)
    if summary.all_errored:
        raise typer.Exit(code=1)


ECHO_WARNING = 0.5
"""Share of a run's decisions answered by echoes above which ``sortie run`` says so."""


def _warn_echoes(store_path: Path, run_id: str) -> None:
    """Say so when most of a model's answers copied the prompt instead of answering."""
    from sortie.core.records_io import read_trajectory
    from sortie.report.usage import run_usage
    from sortie.run.store import Store

    with Store(store_path) as store:
        episodes = store.episodes(run_id)
        # Only a run whose agent asks a model has answers to count: one record tells, and an
        # oracle run of hundreds of episodes is not read again to find none.
        try:
            first = read_trajectory(episodes[0].record) if episodes else None
        except (SortieError, OSError):  # an unreadable record: the report says so, not this
            return
        if first is None or not any(step.model_calls for step in first.steps):
            return
        stats = run_usage(store, [run_id]).get(run_id)
    if stats is None or not stats.echoes or stats.echo_rate <= ECHO_WARNING:
        return
    console.print(
        f"[bold yellow]{stats.echoes} of {stats.decisions} decisions ended in answers that "
        "copied the prompt's placeholders or field descriptions instead of answering[/] "
        "(format errors of kind echo): the model did not take the task up, or its chat "
        "template dropped the task (see the content check); see docs/models.md, Weak models"
    )


@app.command()
@grouped_options
def sweep(
    options: RunOptions,
    vary: Annotated[
        list[str], typer.Option(help="Agent argument and its values: name=v1,v2 (repeatable).")
    ],
    run_id: Annotated[str | None, typer.Option(help="Prefix of the runs' ids.")] = None,
    group: GroupOption = "level",
    fmt: FormatOption = "table",
) -> None:
    """Run one stored run per setting of the varied agent arguments; print their comparison."""
    from sortie.cli.run_console import run_with_progress, summarise
    from sortie.report.render import render
    from sortie.report.tables import report_rows
    from sortie.run.store import Store
    from sortie.run.sweep import parse_vary, sweep_requests

    with exit_codes(), Store(options.store) as opened:
        requests = sweep_requests(options.request(run_id), parse_vary(vary))
        failed = []
        for request in requests:
            console.print(f"Run {escape(request.run_id or '')}")
            plan = run_with_progress(request, opened, console)
            summary = summarise(opened.episodes(plan.run_id), plan, console)
            failed += [plan.run_id] if summary.all_errored else []
        runs = [r.run_id for r in requests if r.run_id]
        echo(render(report_rows(opened, runs, group), fmt, title="sweep"))
    if failed:  # a setting whose every episode errored measured nothing
        raise typer.Exit(code=1)


@contextmanager
def exit_codes() -> Iterator[None]:
    """Turn errors into exit codes: 1 a run stopped by its errors, 2 bad input, 130 Ctrl-C."""
    try:
        yield
    except RunAbortedError as error:
        raise fail(error, code=1) from None
    except SortieError as error:
        raise fail(error) from None
    except KeyboardInterrupt:
        raise typer.Exit(code=130) from None
