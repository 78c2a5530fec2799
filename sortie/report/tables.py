"""``sortie report`` and ``sortie compare``: tables of means with 95% intervals from the store.

Reads only the store (and, to group by world, the header line of each trajectory record).
Episodes that ended in an error (agent or backend) are left out of every mean and counted in
the ``errors`` column. ``ts_variant`` picks which stage scores fill TS and S1–S4 (``paper``
or ``rescuebench-code``); ``columns`` may be any metric the runs hold, or all of them.
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
from sortie.metrics.aggregate import AERIAL_COLUMNS, ERROR, RESCUE_COLUMNS, is_error
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
TS_VARIANTS = ("paper", "rescuebench-code")
DEFAULT_TS_VARIANT = "paper"
"""The stage scores TS and S1–S4 are read in by default (``docs/rescue.md`` says why)."""
CODE_SCORES = {"ts": "ts_code", "s1": "s1_code", "s2": "s2_code", "s3": "s3_code", "s4": "s4_code"}
"""The metric each stage-score column reads under ``rescuebench-code``."""
ALL_COLUMNS = "all"
"""``--columns all``: every metric the runs' episodes hold."""
TABLE_WIDTH = 8
"""Metrics per table when a report shows more columns than the paper's tables."""


@dataclass(frozen=True, slots=True)
class ReportRow:
    """One line of a report: a run (or a B − A pair of runs) within one group."""

    run: str
    group: str
    n: int
    """Episodes scored in the group (for a comparison: episodes both runs hold)."""
    estimates: dict[str, Estimate]
    errors: int = 0
    """Runs of the group's episodes that ended in an error, left out of every mean."""


def report_rows(
    store: Store,
    runs: Sequence[str],
    group: str = "level",
    columns: Sequence[str] | None = None,
    ts_variant: str = DEFAULT_TS_VARIANT,
) -> list[ReportRow]:
    """Return one row per (run, group) with each column's mean and interval.

    ``columns`` default to the runs' mission family's (see ``family_columns``); errored
    episodes are left out of the means and counted in each row's ``errors``.

    Raises:
        UnknownNameError: a run id the store does not hold (the message lists those it does).
        ConfigError: an unknown grouping or TS variant, or a record that cannot be read to
            group by world.
    """
    columns = columns or family_columns(store, runs)
    rows = []
    for run in runs:
        episodes = load_episode_means(store, run, group, columns, ts_variant)
        counts, errors = _counts(episodes), error_counts(store, run, group)
        for name, estimates in group_intervals(episodes, columns).items():
            rows.append(ReportRow(run, name, counts[name], estimates, errors[name]))
    return rows


def compare_rows(
    store: Store,
    a: str,
    b: str,
    group: str = "level",
    columns: Sequence[str] | None = None,
    ts_variant: str = DEFAULT_TS_VARIANT,
) -> list[ReportRow]:
    """Return per group the paired difference B − A of each column over common episodes.

    Errored runs are left out on both sides; ``errors`` counts them in either run.

    Raises:
        UnknownNameError: a run id the store does not hold.
        ConfigError: the two runs have no episode in common.
    """
    columns = columns or family_columns(store, [a, b])
    first = load_episode_means(store, a, group, columns, ts_variant)
    second = load_episode_means(store, b, group, columns, ts_variant)
    common = {e.episode for e in first} & {e.episode for e in second}
    if not common:
        raise ConfigError(
            f"{store.path}: runs {a!r} and {b!r} have no episodes in common, "
            "so there is nothing to pair; compare runs over the same suites"
        )
    counts = _counts([e for e in first if e.episode in common])
    errors = error_counts(store, a, group) + error_counts(store, b, group)
    differences = paired_differences(first, second, columns)
    return [
        ReportRow(f"{b} − {a}", name, counts[name], estimates, errors[name])
        for name, estimates in differences.items()
    ]


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
        raise ConfigError(
            f"{store.path}: runs of different mission families ({listed}) "
            "cannot share a table; report them separately"
        )
    return AERIAL_COLUMNS if "aerial" in families.values() else RESCUE_COLUMNS


def available_columns(store: Store, runs: Sequence[str]) -> tuple[str, ...]:
    """Return every metric the runs' episodes hold: the family's table first, then the rest."""
    from sortie.metrics import aerial, rescue

    columns = family_columns(store, runs)
    scorer = aerial.METRICS if columns == AERIAL_COLUMNS else rescue.METRICS
    held = {name for run in runs for episode in store.episodes(run) for name in episode.metrics}
    names = dict.fromkeys(c for c in (*columns, *scorer) if c in held)
    for run in runs:
        for episode in store.episodes(run):
            names.update(dict.fromkeys(episode.metrics))
    names.pop(ERROR, None)
    return tuple(names)


def choose_columns(store: Store, runs: Sequence[str], wanted: str | None) -> tuple[str, ...]:
    """Return the report columns for ``--columns``: None (the family's), ``all``, or a list.

    Raises:
        ConfigError: a named metric that no episode of the runs holds (the message lists
            those they do).
    """
    if not wanted:
        return family_columns(store, runs)
    available = available_columns(store, runs)
    if wanted.strip() == ALL_COLUMNS:
        return available
    names = tuple(name.strip() for name in wanted.split(",") if name.strip())
    unknown = [name for name in names if name not in available]
    if unknown or not names:
        raise ConfigError(
            f"--columns {wanted!r}: unknown metric {', '.join(unknown) or '(none)'}"
            f"; these runs hold: {', '.join(available)}, or 'all'"
        )
    return names


def load_episode_means(
    store: Store, run: str, group: str, columns: Sequence[str], ts_variant: str = DEFAULT_TS_VARIANT
) -> list[EpisodeMean]:
    """Return the run's scored episodes, repeats averaged, each tagged with its group.

    Errored episodes are left out (``error_counts`` counts them); under ``rescuebench-code``
    the TS and S1–S4 columns hold that variant's scores.
    """
    check_run(store, run)
    _check_group(group)
    rows = (
        (name, e.key, with_variant(e.metrics, ts_variant))
        for e in store.episodes(run)
        if not errored(e)
        for name in groups_of(e, group)
    )
    return episode_means(rows, columns)


def error_counts(store: Store, run: str, group: str) -> Counter[str]:
    """Return, per group (and ``all``), how many of the run's episodes ended in an error."""
    _check_group(group)
    counts: Counter[str] = Counter()
    for episode in store.episodes(run):
        if errored(episode):
            counts.update(groups_of(episode, group))
            counts["all"] += 1
    return counts


def errored(episode: StoredEpisode) -> bool:
    """Return whether a stored episode ended in an error (also in stores from before the mark)."""
    return is_error(episode.outcome, episode.failure_reason) or (
        episode.metrics.get(ERROR, 0.0) == 1.0
    )


def with_variant(metrics: dict[str, float], ts_variant: str) -> dict[str, float]:
    """Return ``metrics`` with TS and S1–S4 read in ``ts_variant``.

    Raises:
        ConfigError: a variant that is not one of ``TS_VARIANTS``.
    """
    if ts_variant not in TS_VARIANTS:
        raise ConfigError(f"--ts-variant {ts_variant!r}: expected one of {', '.join(TS_VARIANTS)}")
    if ts_variant == "paper":
        return metrics
    return {
        **metrics,
        **{column: metrics.get(code, math.nan) for column, code in CODE_SCORES.items()},
    }


def _check_group(group: str) -> None:
    if group not in GROUPS:
        raise ConfigError(f"--group {group!r}: expected one of {', '.join(GROUPS)}")


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
        raise ConfigError(
            f"{episode.record}:1: cannot read the record header to group by {group}: {error}"
        ) from None


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
    columns = tuple(_columns(rows))
    if columns == AERIAL_COLUMNS:
        return [
            ReportTable(
                "MissionBench table: SR, OSR (5 m), MP, Eff, CR (%), Δ = OSR − SR, steps",
                AERIAL_COLUMNS,
                False,
                tuple(rows),
            )
        ]
    if columns != RESCUE_COLUMNS:
        return metric_tables(rows, columns)
    return [
        ReportTable(
            "Main table: task completion (TCR, %) and total score (TS, 0–100)",
            MAIN_COLUMNS,
            True,
            tuple(rows),
        ),
        ReportTable(
            "Stage diagnostics: stage scores (0–25), steps, HS (%), collisions",
            STAGE_COLUMNS,
            False,
            tuple(rows),
        ),
    ]


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
    return [
        dataclasses.replace(t, rows=overall) if t.columns == STAGE_COLUMNS else t for t in tables
    ]


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
    out = Table(
        title=" · ".join(part for part in (title, table.title) if part) or None,
        caption="mean, and its 95% bootstrap interval over episodes under it",
    )
    for column in header:
        name = column in ("run", "group")
        # Names never wrap; numbers fold rather than being cut, so no digit is hidden.
        out.add_column(
            _SHORT.get(column, column),
            justify="left" if name else "right",
            no_wrap=name,
            overflow="fold",
        )
    for line in lines:
        out.add_row(*line)
    return out


_SHORT = {"COLLISIONS": "COLL."}
"""Shorter terminal headers for long metric names."""


def render_markdown(table: ReportTable) -> str:
    """Return a GitHub markdown table, under a heading when the table has a title."""
    header, lines = layout(table, " ")
    left = sum(column in ("run", "group") for column in header)
    text = ["| " + " | ".join(header) + " |", "|" + "---|" * left + "---:|" * (len(header) - left)]
    text += ["| " + " | ".join(line) + " |" for line in lines]
    return (f"### {table.title}\n\n" if table.title else "") + "\n".join(text) + "\n"


def layout(
    table: ReportTable, separator: str, by_run: bool = False, compact: bool = False
) -> tuple[list[str], list[list[str]]]:
    """Return the header and the text lines of a table, pivoted or one line per row.

    A pivoted table has a line per run and columns per group, or with ``by_run`` a line per
    group and columns per run. ``separator`` and ``compact`` shape each cell (see ``cell``).
    """
    if not table.pivot:
        header = ["run", "group", "n", "errors", *(c.upper() for c in table.columns)]
        return header, [
            [
                row.run,
                row.group,
                str(row.n),
                str(row.errors),
                *(cell(row.estimates[c], separator, compact) for c in table.columns),
            ]
            for row in table.rows
        ]
    lines_by, columns_by = ("group", "run") if by_run else ("run", "group")
    across = list(dict.fromkeys(getattr(row, columns_by) for row in table.rows))
    header = [lines_by, *(f"{a} {c.upper()}" for a in across for c in table.columns)]
    cells: dict[str, dict[str, str]] = {}
    for row in table.rows:
        line = cells.setdefault(getattr(row, lines_by), {})
        line.update(
            {
                f"{getattr(row, columns_by)} {c.upper()}": cell(
                    row.estimates[c], separator, compact
                )
                for c in table.columns
            }
        )
    return header, [[name, *(line.get(h, "") for h in header[1:])] for name, line in cells.items()]


def render_csv(rows: Sequence[ReportRow]) -> str:
    """Return CSV text: run, group, n, errors, then each metric's mean, lo, hi (empty when NaN)."""
    columns = _columns(rows)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "run",
            "group",
            "n",
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
            [row.run, row.group, row.n, row.errors, *("" if v is None else v for v in values)]
        )
    return out.getvalue()


def render_json(rows: Sequence[ReportRow]) -> str:
    """Return JSON ``{run: {group: {n, errors, metric: {mean, lo, hi, n, spread}}}}``, NaN null."""
    nested: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        nested.setdefault(row.run, {})[row.group] = {
            "n": row.n,
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
