"""Laying out and rendering report rows: the papers' tables, wider metric sets, four formats.

``sortie.report.tables`` computes the rows (means with 95% intervals) from the store; this
module turns them into the papers' two tables (or a leaderboard, or tables of at most
``TABLE_WIDTH`` chosen metrics) and renders them for the terminal, markdown, CSV or JSON.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Group as RichGroup
from rich.console import RenderableType
from rich.markup import escape
from rich.table import Table

from sortie.core.errors import ConfigError
from sortie.metrics.intervals import Estimate
from sortie.missions.registry import FAMILIES
from sortie.report.descriptor import report_of
from sortie.report.tables import ReportRow

TABLE_WIDTH = 8
"""Metrics per table when a report shows more columns than the paper's tables."""
FORMATS = ("table", "markdown", "csv", "json")


@dataclass(frozen=True, slots=True)
class ReportTable:
    """One of the paper's tables: a title, its metrics, and whether groups become columns."""

    title: str
    columns: tuple[str, ...]
    pivot: bool
    """True: one line per run with each group's metrics side by side (the main table)."""
    rows: tuple[ReportRow, ...]
    overall_only: bool = False
    """True: a terminal leaderboard shows only the ``all`` group."""
    note: str = ""
    """One line saying what a number means, under the table (``PaperTable.note``)."""


def paper_tables(rows: Sequence[ReportRow]) -> list[ReportTable]:
    """Lay the rows out as their family's paper does (``FamilyReport.tables``).

    Rows of other metrics (``--columns``) become tables of at most ``TABLE_WIDTH`` metrics.
    """
    columns = tuple(_columns(rows))
    for name in FAMILIES.in_order():
        tables = report_of(name).tables
        if tables and columns == FAMILIES.get(name).columns:
            return [
                ReportTable(t.title, t.columns, t.pivot, tuple(rows), t.overall_only, t.note)
                for t in tables
            ]
    return metric_tables(rows, columns)


def metric_tables(rows: Sequence[ReportRow], columns: Sequence[str]) -> list[ReportTable]:
    """Return the rows as tables of at most ``TABLE_WIDTH`` metrics each (the chosen columns)."""
    parts = [tuple(columns[i : i + TABLE_WIDTH]) for i in range(0, len(columns), TABLE_WIDTH)]
    if len(parts) == 1:
        return [ReportTable("", parts[0], False, tuple(rows))]
    return [
        ReportTable(f"Metrics ({k}/{len(parts)})", part, False, tuple(rows))
        for k, part in enumerate(parts, start=1)
    ]


def leaderboard(rows: Sequence[ReportRow]) -> list[ReportTable]:
    """Return the paper's tables for a terminal: the main table, and stages over all groups."""
    tables = paper_tables(rows)
    overall = tuple(row for row in rows if row.group == "all")
    return [dataclasses.replace(t, rows=overall) if t.overall_only else t for t in tables]


def render(
    rows: Sequence[ReportRow],
    fmt: str,
    title: str = "",
    extra: Mapping[str, Mapping[str, Any]] | None = None,
) -> RenderableType | str:
    """Return the paper's tables as rich tables or markdown, or every row as CSV or JSON.

    ``extra`` holds, per run, more keys for its JSON object (the household error codes).
    """
    if fmt == "table":
        return RichGroup(*(render_table(t, title) for t in paper_tables(rows)))
    if fmt == "markdown":
        return "\n".join(render_markdown(t) for t in paper_tables(rows))
    if fmt == "csv":
        return render_csv(rows)
    if fmt != "json":
        raise ConfigError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    return render_json(rows, extra)


def printable(text: str) -> str:
    r"""Return ``text`` with each control character written as its escape (``\x1b``).

    Run, model and folder names are user input: one holding escape bytes must print as
    text, never move the cursor or clear the screen.
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def markup_free(text: str) -> str:
    """Return ``text`` for a rich table: markup escaped, control characters as escapes.

    Line breaks stay (a cell's interval goes under its mean).
    """
    return "\n".join(escape(printable(line)) for line in text.split("\n"))


def render_table(table: ReportTable, title: str = "") -> Table:
    """Return a rich table with one ``mean [lo, hi]`` cell per metric (TCR and HS in %)."""
    # The interval goes under the mean, and the main table has one column per run rather than
    # per level (the paper's way round, kept in markdown), so it fits a terminal.
    header, lines = layout(table, "\n", by_run=True, compact=True)
    # ``title`` comes escaped for rich (``report_title``); the table's own parts are made here.
    out = Table(
        title=" · ".join(part for part in (title, markup_free(table.title)) if part) or None,
        caption="mean, and its 95% bootstrap interval over episodes under it"
        + (f"\n{markup_free(table.note)}" if table.note else ""),
    )
    for column in header:
        name = column in ("run", "group")
        # Names never wrap; numbers fold rather than being cut, so no digit is hidden.
        out.add_column(
            markup_free(_SHORT.get(column, column)),
            justify="left" if name else "right",
            no_wrap=name,
            overflow="fold",
        )
    for line in lines:
        out.add_row(*(markup_free(text) for text in line))
    return out


_SHORT = {"COLLISIONS": "COLL."}
"""Shorter terminal headers for long metric names."""


def render_markdown(table: ReportTable) -> str:
    """Return a GitHub markdown table, under a heading when the table has a title."""
    header, lines = layout(table, " ")
    header, lines = [printable(h) for h in header], [[printable(t) for t in ln] for ln in lines]
    left = sum(column in ("run", "group") for column in header)
    text = ["| " + " | ".join(header) + " |", "|" + "---|" * left + "---:|" * (len(header) - left)]
    text += ["| " + " | ".join(line) + " |" for line in lines]
    text += [f"\n{printable(table.note)}"] if table.note else []
    return (f"### {table.title}\n\n" if table.title else "") + "\n".join(text) + "\n"


def layout(
    table: ReportTable, separator: str, by_run: bool = False, compact: bool = False
) -> tuple[list[str], list[list[str]]]:
    """Return the header and the text lines of a table, pivoted or one line per row.

    A pivoted table has a line per run and columns per group, or with ``by_run`` a line per
    group and columns per run. ``separator`` and ``compact`` shape each cell (see ``cell``).
    """
    if not table.pivot:
        header = ["run", "group", "episodes", "runs", "errors", *(c.upper() for c in table.columns)]
        return header, [
            [
                row.run,
                row.group,
                str(row.n),
                str(row.runs),
                str(row.errors),
                *(cell(row.estimates[c], separator, compact) for c in table.columns),
            ]
            for row in table.rows
        ]
    # Each run's (or group's) episode count leads its metrics: a 2-episode run beside a
    # 10-episode one in the same "all" line must not read as equally sure.
    lines_by, columns_by = ("group", "run") if by_run else ("run", "group")
    across = _all_last(dict.fromkeys(getattr(row, columns_by) for row in table.rows))
    names = ("n", *(c.upper() for c in table.columns))
    header = [lines_by, *(f"{a} {name}" for a in across for name in names)]
    cells: dict[str, dict[str, str]] = {}
    for row in table.rows:
        line = cells.setdefault(getattr(row, lines_by), {})
        at = getattr(row, columns_by)
        line[f"{at} n"] = str(row.n)
        line.update(
            {f"{at} {c.upper()}": cell(row.estimates[c], separator, compact) for c in table.columns}
        )
    return header, [
        [name, *(cells[name].get(h, "") for h in header[1:])] for name in _all_last(cells)
    ]


def _all_last(names: Iterable[str]) -> list[str]:
    """Return ``names`` in order, ``all`` moved to the end (runs whose groups differ)."""
    listed = list(names)
    return [n for n in listed if n != "all"] + [n for n in listed if n == "all"]


def render_csv(rows: Sequence[ReportRow]) -> str:
    """Return CSV: run, group, episodes, runs, errors, then each metric's mean, lo, hi (NaN: empty).

    ``episodes`` counts each scored episode once, ``runs`` its repeats too (as ``sortie run``).
    """
    columns = _columns(rows)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "run",
            "group",
            "episodes",
            "runs",
            "errors",
            *(f"{c}{part}" for c in columns for part in ("", "_lo", "_hi")),
        ]
    )
    for row in rows:
        values = [
            _number(getattr(row.estimates[c], part))
            for c in columns
            for part in ("mean", "lo", "hi")
        ]
        writer.writerow(
            [
                printable(row.run),
                printable(row.group),
                row.n,
                row.runs,
                row.errors,
                *("" if v is None else v for v in values),
            ]
        )
    return out.getvalue()


def render_json(
    rows: Sequence[ReportRow], extra: Mapping[str, Mapping[str, Any]] | None = None
) -> str:
    """Return JSON ``{run: {group: {episodes, runs, errors, metric: {mean, lo, hi, n, spread}}}}``.

    NaN is null; a metric's ``n`` is the episodes it is defined for.

    ``extra[run]``'s keys join the run's object beside its groups.
    """
    nested: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        nested.setdefault(row.run, {})[row.group] = {
            "episodes": row.n,
            "runs": row.runs,
            "errors": row.errors,
            **{
                c: {
                    "mean": _number(e.mean),
                    "lo": _number(e.lo),
                    "hi": _number(e.hi),
                    "n": e.n,
                    "spread": _number(e.spread),
                }
                for c, e in row.estimates.items()
            },
        }
    for run, keys in (extra or {}).items():
        nested.setdefault(run, {}).update(keys)
    return json.dumps(nested, indent=2, ensure_ascii=False) + "\n"


def cell(estimate: Estimate, separator: str = " ", compact: bool = False) -> str:
    """Return ``mean [lo, hi]``, just the mean when there is no interval, ``–`` when NaN.

    ``compact`` writes the interval as the shorter ``lo–hi`` (terminal tables).
    """
    if math.isnan(estimate.mean):
        return "–"
    if math.isnan(estimate.lo):
        return f"{estimate.mean:.1f}"
    if compact:
        return f"{estimate.mean:.1f}{separator}{estimate.lo:.1f}–{estimate.hi:.1f}"
    return f"{estimate.mean:.1f}{separator}[{estimate.lo:.1f}, {estimate.hi:.1f}]"


def _columns(rows: Sequence[ReportRow]) -> list[str]:
    return list(rows[0].estimates) if rows else []


def _number(value: float) -> float | None:
    # JSON has no NaN; null says "not defined" to every reader.
    return None if math.isnan(value) else value
