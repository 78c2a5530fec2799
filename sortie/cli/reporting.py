"""``sortie report`` and ``sortie compare``: tables and the HTML report of stored runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from sortie.cli.common import (
    DEFAULT_STORE,
    FormatOption,
    GroupOption,
    StoreOption,
    app,
    echo,
    fail,
    open_store,
    report_title,
)
from sortie.core.errors import SortieError

if TYPE_CHECKING:
    from sortie.run.store import Store


RunsOption = Annotated[
    list[str], typer.Option("--run", help="Run id in the store (repeat for several).")
]
HtmlOption = Annotated[
    Path | None,
    typer.Option(
        "--html", help="Also write a static HTML report (plots, a page per episode) here."
    ),
]
VariantOption = Annotated[
    list[str] | None,
    typer.Option(
        "--variant",
        help="Read a metric as its seed benchmark's code does, NAME=VARIANT (repeat for "
        "several): ts=rescuebench-code, tp=emmoe, srr=emmoe; `sortie families` lists them.",
    ),
]
ReadingsOption = Annotated[
    str,
    typer.Option(
        "--readings",
        help="sortie: every metric in sortie's reading (the default); seed: each read as the "
        "family's seed benchmark's own code does (--variant still overrides one).",
    ),
]
TsVariantOption = Annotated[
    str | None, typer.Option(hidden=True, help="Old spelling of --variant ts=VARIANT.")
]
ColumnsOption = Annotated[
    str | None,
    typer.Option(
        help="Metrics to show, comma-separated (e.g. sr,eff,eff_all_steps,iou_start2d), or "
        "'all' for every metric sortie computes; default: the family's paper tables."
    ),
]
ReferenceOption = Annotated[
    str | None,
    typer.Option(
        help="human:RUN_ID: score HS, nDTW and SDTW against that run's paths (sortie play) "
        "instead of the suite's expert paths."
    ),
]


@app.command()
def report(
    run_ids: RunsOption,
    store: StoreOption = DEFAULT_STORE,
    group: GroupOption = "level",
    fmt: FormatOption = "table",
    html_dir: HtmlOption = None,
    variant: VariantOption = None,
    columns: ColumnsOption = None,
    reference: ReferenceOption = None,
    readings: ReadingsOption = "sortie",
    ts_variant: TsVariantOption = None,
) -> None:
    """Print each run's metrics per group as mean [95% bootstrap interval] over episodes.

    Episodes that ended in an agent or backend error are left out of every mean and counted
    in the errors column.
    """
    given = [*(variant or []), *([f"ts={ts_variant}"] if ts_variant else [])]
    try:
        with open_store(store) as opened:
            variants = _variants(opened, run_ids, readings, given)
            _print_metrics(opened, run_ids, group, fmt, (columns, readings, variants, reference))
            _print_group_note(group, fmt)
            for print_part in (_print_own_tables, _print_failures, _print_usage, _print_timings):
                print_part(opened, run_ids, fmt)
            if html_dir is not None:
                from sortie.report.site import write_site

                index = write_site(opened, run_ids, html_dir, group, variants)
                # On stderr after a text format, so `--format csv > file` stays pure CSV.
                typer.echo(f"HTML report: {index}", err=fmt != "table")
    except SortieError as error:
        raise fail(error) from None


def _print_metrics(
    store: Store,
    runs: list[str],
    group: str,
    fmt: str,
    how: tuple[str | None, str, dict[str, str], str | None],
) -> None:
    """Print the metric tables: ``how`` is the columns, readings, variants and reference."""
    from sortie.report.render import render
    from sortie.report.tables import choose_columns, chosen_variants, report_rows

    columns, readings, variants, reference = how
    chosen = choose_columns(store, runs, columns)
    rows = report_rows(store, runs, group, chosen, variants, reference)
    title = " · ".join(_run_label(store, run_id) for run_id in runs)
    title += f" · readings: {readings}"
    if chosen_variants(variants):
        title += f" ({chosen_variants(variants)})"
    if reference:
        title += f" · reference paths: {reference}"
    extra = None
    if fmt == "json":  # each run's object also says how it was read
        own = _own_json(store, runs) or {}
        extra = {run: {**own.get(run, {}), "readings": variants} for run in runs}
    echo(render(rows, fmt, title=report_title(title, fmt), extra=extra))


def _variants(store: Store, runs: list[str], readings: str, given: list[str]) -> dict[str, str]:
    """Return the variant of every reading: the ``--readings`` set, then each ``--variant``."""
    from sortie.report.tables import parse_variants, reading_set, runs_family

    return {**reading_set(runs_family(store, runs), readings), **parse_variants(given)}


def _own_json(store: Store, runs: list[str]) -> dict[str, dict[str, Any]] | None:
    """Return, per run, the keys the family's own tables add to its JSON object (or None)."""
    from sortie.report.descriptor import report_of
    from sortie.report.tables import runs_family

    extra: dict[str, dict[str, Any]] = {}
    for own in report_of(runs_family(store, runs)).run_tables:
        if own.shows(store, runs):
            for run, keys in own.json(store, runs).items():
                extra.setdefault(run, {}).update(keys)
    return extra or None


@app.command()
def compare(
    run_a: Annotated[str, typer.Argument(help="Baseline run id (A).")],
    run_b: Annotated[str, typer.Argument(help="Run id compared with it (B).")],
    store: StoreOption = DEFAULT_STORE,
    group: GroupOption = "level",
    fmt: FormatOption = "table",
) -> None:
    """Print B − A per metric and group: paired over common episodes, with 95% intervals."""
    from sortie.report.render import render
    from sortie.report.tables import compare_rows

    try:
        with open_store(store) as opened:
            rows = compare_rows(opened, run_a, run_b, group)
            echo(render(rows, fmt, title=report_title(f"{run_b} − {run_a} (paired)", fmt)))
    except SortieError as error:
        raise fail(error) from None


def _print_group_note(group: str, fmt: str) -> None:
    """Print what the grouping means for the counts (a task in several groups), if anything."""
    from sortie.report.tables import GROUP_NOTES

    if fmt in ("table", "markdown") and group in GROUP_NOTES:
        echo(f"{GROUP_NOTES[group]}\n" if fmt == "table" else f"\n{GROUP_NOTES[group]}\n")


def _print_own_tables(store: Store, runs: list[str], fmt: str) -> None:
    """Print the runs' family's own tables (household's error codes) that have something."""
    from sortie.report.descriptor import report_of
    from sortie.report.tables import runs_family

    if fmt not in ("table", "markdown"):
        return
    for own in report_of(runs_family(store, runs)).run_tables:
        if own.shows(store, runs):
            echo(own.terminal(store, runs) if fmt == "table" else "\n" + own.markdown(store, runs))


def _print_failures(store: Store, runs: list[str], fmt: str) -> None:
    """Print how the runs' episodes ended, under a table or markdown."""
    from sortie.report.failures import failure_markdown, failure_modes, failure_table
    from sortie.report.mistakes import mistake_lines, mistakes_of
    from sortie.report.render import printable

    if fmt in ("table", "markdown"):
        modes = failure_modes(store, runs)
        echo(failure_table(modes) if fmt == "table" else "\n" + failure_markdown(modes))
        said = [
            line for run in runs for line in mistake_lines(run, mistakes_of(store.episodes(run)))
        ]
        if said:  # errors and invalid actions with their first reason, not only their count
            echo("\n".join(printable(line) for line in said) + "\n")


def _print_usage(store: Store, runs: list[str], fmt: str) -> None:
    """Print the runs' model use (calls, tokens, errors, latency) under a table or markdown."""
    from sortie.report.usage import run_usage, usage_markdown, usage_table

    usage = run_usage(store, runs) if fmt in ("table", "markdown") else {}
    if usage:
        echo(usage_table(usage) if fmt == "table" else "\n" + usage_markdown(usage))


def _print_timings(store: Store, runs: list[str], fmt: str) -> None:
    """Print where the runs' wall time went (agent, backend, render, harness)."""
    from sortie.report.timings import run_time_shares, time_markdown, time_table

    if fmt in ("table", "markdown"):
        shares = run_time_shares(store, runs)
        echo(time_table(shares) if fmt == "table" else "\n" + time_markdown(shares))


def _run_label(store: Store, run_id: str) -> str:
    """Return a run's id, marked when its agent was shown text instead of images."""
    config = store.run_config(run_id)
    args = config.agent.args if config is not None else {}
    return f"{run_id} (text observation)" if args.get("observation") == "text" else run_id
