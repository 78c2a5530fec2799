"""``sortie rescore emmoe``: another benchmark's own run logs scored by sortie's rules."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sortie.cli.common import FormatOption, app, echo, fail, report_title
from sortie.core.errors import ConfigError, SortieError

COLUMNS = ("sr", "tp", "tp_emmoe", "ser", "srr", "srr_emmoe", "plwsr")
"""EMMOE's table in both readings: sortie's (tp, srr) beside EMMOE's notebooks' (``_emmoe``)."""


@app.command()
def rescore(
    source: Annotated[str, typer.Argument(help="Whose logs: emmoe.")],
    exp: Annotated[Path, typer.Argument(help="EMMOE's exp folder: <model>/<task>/<run>/.")],
    tasks: Annotated[
        list[Path] | None,
        typer.Option(
            help="EMMOE's task folders (data/) and, if not found above them, name_dict.txt "
            "(repeat); default: EMMOE-100/data beside the exp folder."
        ),
    ] = None,
    runs: Annotated[
        str | None,
        typer.Option(help="Only these run numbers, e.g. 3 (EMMOE's notebooks read one)."),
    ] = None,
    fmt: FormatOption = "table",
) -> None:
    """Score EMMOE runs (conversation.json logs) by sortie's household rules, both readings.

    Prints, per model and split, SR, TP, SER, SRR and PLWSR with 95% bootstrap intervals,
    TP and SRR also as EMMOE's notebooks read them (tp_emmoe, srr_emmoe), then the executor
    error codes. GC is not in EMMOE's logs.
    """
    try:
        _rescore(source, exp, tasks, runs, fmt)
    except SortieError as error:
        raise fail(error) from None


def _rescore(source: str, exp: Path, tasks: list[Path] | None, runs: str | None, fmt: str) -> None:
    from sortie.importers.emmoe_runs import rescore_runs
    from sortie.report.families.household_codes import code_markdown, code_table, count_codes
    from sortie.report.render import printable, render
    from sortie.report.tables import metric_rows

    if source != "emmoe":
        raise ConfigError(f"rescore {source!r}: only emmoe's logs can be rescored")
    chosen = _run_numbers(runs)
    scored, refused = rescore_runs(exp, tasks or [exp.parent / "EMMOE-100" / "data"], chosen)
    models = sorted({r.model for r in scored})
    rows = [
        row
        for model in models
        for row in metric_rows(
            model,
            ((r.task.split.value, r.key, r.metrics) for r in scored if r.model == model),
            COLUMNS,
        )
    ]
    where = printable(str(exp))  # a folder's name is shown as text, whatever bytes it holds
    title = f"EMMOE runs in {where}, both readings (tp_emmoe, srr_emmoe: EMMOE's notebooks)"
    echo(render(rows, fmt, title=report_title(title, fmt)))
    if fmt in ("table", "markdown"):
        counts = {m: count_codes(r.metrics for r in scored if r.model == m) for m in models}
        echo(code_table(counts) if fmt == "table" else code_markdown(counts))
    for reason in refused:
        typer.echo(f"Not scored: {printable(reason)}", err=True)


def _run_numbers(text: str | None) -> set[int] | None:
    if text is None:
        return None
    try:
        return {int(part) for part in text.split(",") if part.strip()}
    except ValueError:
        raise ConfigError(f"--runs {text!r}: expected run numbers, e.g. 3 or 1,2") from None
