"""``sortie report`` and ``sortie compare``: tables of means with 95% intervals from the store.

Reads only the store (and, to group by world, the header line of each trajectory record).
"""

from __future__ import annotations

import csv
import dataclasses
import difflib
import io
import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Group as RichGroup
from rich.console import RenderableType
from rich.table import Table

from sortie.core.errors import ConfigError, UnknownNameError
from sortie.core.trajectory import TrajectoryHeader
from sortie.metrics.aggregate import AERIAL_COLUMNS, RESCUE_COLUMNS
from sortie.metrics.intervals import (
    EpisodeMean,
    Estimate,
    episode_means,
    group_intervals,
    paired_differences,
)
from sortie.run.store import Store, StoredEpisode

GROUPS = ("level", "world", "type", "suite")
FORMATS = ("table", "markdown", "csv", "json")
MAIN_COLUMNS = ("tcr", "ts")
"""The paper's main table: full-task completion and total score, per group and agent."""
STAGE_COLUMNS = ("s1", "s2", "s3", "s4", "steps", "hs", "collisions")
"""The stage diagnostic table: where along the mission agents lose their points."""


@dataclass(frozen=True, slots=True)
class ReportRow:
    """One line of a report: a run (or a B − A pair of runs) within one group."""

    run: str
    group: str
    n: int
    """Episodes in the group (for a comparison: episodes both runs hold)."""
    estimates: dict[str, Estimate]


def report_rows(store: Store, runs: Sequence[str], group: str = "level",
                columns: Sequence[str] | None = None) -> list[ReportRow]:
    """Return one row per (run, group) with each column's mean and interval.

    ``columns`` default to the runs' mission family's (see ``family_columns``).

    Raises:
        UnknownNameError: a run id the store does not hold (the message lists those it does).
        ConfigError: an unknown grouping, or a record that cannot be read to group by world.
    """
    columns = columns or family_columns(store, runs)
    rows = []
    for run in runs:
        episodes = load_episode_means(store, run, group, columns)
        counts = _counts(episodes)
        for name, estimates in group_intervals(episodes, columns).items():
            rows.append(ReportRow(run, name, counts[name], estimates))
    return rows


def compare_rows(store: Store, a: str, b: str, group: str = "level",
                 columns: Sequence[str] | None = None) -> list[ReportRow]:
    """Return per group the paired difference B − A of each column over common episodes.

    Raises:
        UnknownNameError: a run id the store does not hold.
        ConfigError: the two runs have no episode in common.
    """
    columns = columns or family_columns(store, [a, b])
    first = load_episode_means(store, a, group, columns)
    second = load_episode_means(store, b, group, columns)
    common = {e.episode for e in first} & {e.episode for e in second}
    if not common:
        raise ConfigError(f"{store.path}: runs {a!r} and {b!r} have no episodes in common, "
                          "so there is nothing to pair; compare runs over the same suites")
    counts = _counts([e for e in first if e.episode in common])
    differences = paired_differences(first, second, columns)
    return [ReportRow(f"{b} − {a}", name, counts[name], estimates)
            for name, estimates in differences.items()]  # fmt: skip


def family_columns(store: Store, runs: Sequence[str]) -> tuple[str, ...]:
    """Return the report columns of the runs' mission family (rescue or aerial).

    Raises:
        UnknownNameError: a run id the store does not hold.
        ConfigError: the runs mix families, whose metrics cannot share a table.
    """
    families = {}
    for run in runs:
        check_run(store, run)
        episodes = store.episodes(run)
        families[run] = "aerial" if episodes and "sr" in episodes[0].metrics else "rescue"
    if len(set(families.values())) > 1:
        listed = ", ".join(f"{run} ({family})" for run, family in families.items())
        raise ConfigError(f"{store.path}: runs of different mission families ({listed}) "
                          "cannot share a table; report them separately")  # fmt: skip
    return AERIAL_COLUMNS if "aerial" in families.values() else RESCUE_COLUMNS


def load_episode_means(store: Store, run: str, group: str,
                       columns: Sequence[str]) -> list[EpisodeMean]:
    """Return the run's episodes, repeats averaged, each tagged with its group."""
    check_run(store, run)
    if group not in GROUPS:
        raise ConfigError(f"--group {group!r}: expected one of {', '.join(GROUPS)}")
    rows = ((name, e.key, e.metrics) for e in store.episodes(run) for name in groups_of(e, group))
    return episode_means(rows, columns)


def check_run(store: Store, run: str) -> None:
    """Raise UnknownNameError naming the runs in the store if ``run`` is not one of them."""
    runs = store.runs()
    if run in runs:
        return
    close = difflib.get_close_matches(run, runs, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    available = ", ".join(runs) if runs else "none (the store is empty)"
    raise UnknownNameError(f"{store.path}: unknown run {run!r}.{hint} Available: {available}")


def groups_of(episode: StoredEpisode, group: str) -> list[str]:
    """Return the groups the episode counts in: its level, suite, world or type tags.

    An episode's types are its mission's ``types`` tags (a mission may carry two, and then
    counts in both); a rescue episode's type is its level.
    """
    if group == "suite":
        return [episode.suite]
    if group == "level":
        return [episode.level or "-"]
    spec = _header(episode, group).episode
    if group == "world":
        return [spec.world.builder]
    return [str(tag) for tag in spec.mission.get("types", ())] or [spec.level or "-"]


def _header(episode: StoredEpisode, group: str) -> TrajectoryHeader:
    # The store does not keep the episode spec; the record's first line (its header) does.
    try:
        with episode.record.open() as file:
            return TrajectoryHeader.model_validate_json(file.readline())
    except (OSError, ValueError) as error:
        raise ConfigError(f"{episode.record}:1: cannot read the record header to group by "
                          f"{group}: {error}") from None  # fmt: skip


def _counts(episodes: Sequence[EpisodeMean]) -> Counter[str]:
    counts = Counter(e.group for e in episodes)
    counts["all"] = len({e.episode for e in episodes})
    return counts


@dataclass(frozen=True, slots=True)
class ReportTable:
    """One of the paper's tables: a title, its metrics, and whether groups become columns."""

    title: str
    columns: tuple[str, ...]
    pivot: bool
    """True: one line per run with each group's metrics side by side (the main table)."""
    rows: tuple[ReportRow, ...]


def paper_tables(rows: Sequence[ReportRow]) -> list[ReportTable]:
    """Split report rows into the main table (TCR, TS) and the stage diagnostic table.

    Rows of other metrics (another mission family) stay one table of everything.
    """
    have = set(_columns(rows))
    if set(AERIAL_COLUMNS) <= have:
        return [ReportTable("MissionBench table: SR, OSR (5 m), MP, Eff, CR (%), Δ = OSR − SR, "
                            "steps", AERIAL_COLUMNS, False, tuple(rows))]  # fmt: skip
    if not set(MAIN_COLUMNS + STAGE_COLUMNS) <= have:
        return [ReportTable("", tuple(_columns(rows)), False, tuple(rows))]
    return [ReportTable("Main table: task completion (TCR, %) and total score (TS, 0–100)",
                        MAIN_COLUMNS, True, tuple(rows)),
            ReportTable("Stage diagnostics: stage scores (0–25), steps, HS (%), collisions",
                        STAGE_COLUMNS, False, tuple(rows))]  # fmt: skip


def leaderboard(rows: Sequence[ReportRow]) -> list[ReportTable]:
    """Return the paper's tables for a terminal: the main table, and stages over all groups."""
    tables = paper_tables(rows)
    overall = tuple(row for row in rows if row.group == "all")
    return [dataclasses.replace(t, rows=overall) if t.columns == STAGE_COLUMNS else t
            for t in tables]  # fmt: skip


def render(rows: Sequence[ReportRow], fmt: str, title: str = "") -> RenderableType | str:
    """Return the paper's tables as rich tables or markdown, or every row as CSV or JSON."""
    if fmt == "table":
        return RichGroup(*(render_table(t, title) for t in paper_tables(rows)))
    if fmt == "markdown":
        return "\n".join(render_markdown(t) for t in paper_tables(rows))
    renderers = {"csv": render_csv, "json": render_json}
    if fmt not in renderers:
        raise ConfigError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    return renderers[fmt](rows)


def render_table(table: ReportTable, title: str = "") -> Table:
    """Return a rich table with one ``mean [lo, hi]`` cell per metric (TCR and HS in %)."""
    # The interval goes under the mean, and the main table has one column per run rather than
    # per level (the paper's way round, kept in markdown), so it fits a terminal.
    header, lines = layout(table, "\n", by_run=True, compact=True)
    out = Table(title=" · ".join(part for part in (title, table.title) if part) or None,
                caption="mean, and its 95% bootstrap interval over episodes under it")
    for column in header:
        name = column in ("run", "group")
        # Names never wrap; numbers fold rather than being cut, so no digit is hidden.
        out.add_column(_SHORT.get(column, column), justify="left" if name else "right",
                       no_wrap=name, overflow="fold")  # fmt: skip
    for line in lines:
        out.add_row(*line)
    return out


_SHORT = {"COLLISIONS": "COLL."}
"""Shorter terminal headers for long metric names."""


def render_markdown(table: ReportTable) -> str:
    """Return a GitHub markdown table, under a heading when the table has a title."""
    header, lines = layout(table, " ")
    left = sum(column in ("run", "group") for column in header)
    text = ["| " + " | ".join(header) + " |",
            "|" + "---|" * left + "---:|" * (len(header) - left)]  # fmt: skip
    text += ["| " + " | ".join(line) + " |" for line in lines]
    return (f"### {table.title}\n\n" if table.title else "") + "\n".join(text) + "\n"


def layout(table: ReportTable, separator: str, by_run: bool = False,
           compact: bool = False) -> tuple[list[str], list[list[str]]]:
    """Return the header and the text lines of a table, pivoted or one line per row.

    A pivoted table has a line per run and columns per group, or with ``by_run`` a line per
    group and columns per run. ``separator`` and ``compact`` shape each cell (see ``cell``).
    """
    if not table.pivot:
        header = ["run", "group", "n", *(c.upper() for c in table.columns)]
        return header, [[row.run, row.group, str(row.n),
                         *(cell(row.estimates[c], separator, compact) for c in table.columns)]
                        for row in table.rows]  # fmt: skip
    lines_by, columns_by = ("group", "run") if by_run else ("run", "group")
    across = list(dict.fromkeys(getattr(row, columns_by) for row in table.rows))
    header = [lines_by, *(f"{a} {c.upper()}" for a in across for c in table.columns)]
    cells: dict[str, dict[str, str]] = {}
    for row in table.rows:
        line = cells.setdefault(getattr(row, lines_by), {})
        line.update({f"{getattr(row, columns_by)} {c.upper()}": cell(row.estimates[c],
                                                                     separator, compact)
                     for c in table.columns})  # fmt: skip
    return header, [[name, *(line.get(h, "") for h in header[1:])] for name, line in cells.items()]


def render_csv(rows: Sequence[ReportRow]) -> str:
    """Return CSV text: run, group, n, then each metric's mean, lo and hi (empty when NaN)."""
    columns = _columns(rows)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["run", "group", "n", *(f"{c}{part}" for c in columns
                                            for part in ("", "_lo", "_hi"))])  # fmt: skip
    for row in rows:
        values = [_number(getattr(row.estimates[c], part)) for c in columns
                  for part in ("mean", "lo", "hi")]  # fmt: skip
        writer.writerow([row.run, row.group, row.n, *("" if v is None else v for v in values)])
    return out.getvalue()


def render_json(rows: Sequence[ReportRow]) -> str:
    """Return JSON ``{run: {group: {"n": n, metric: {mean, lo, hi, n, spread}}}}`` (NaN: null)."""
    nested: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        nested.setdefault(row.run, {})[row.group] = {"n": row.n, **{
            c: {"mean": _number(e.mean), "lo": _number(e.lo), "hi": _number(e.hi), "n": e.n,
                "spread": _number(e.spread)} for c, e in row.estimates.items()}}  # fmt: skip
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
