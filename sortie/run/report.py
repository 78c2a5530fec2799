"""``sortie report`` and ``sortie compare``: tables of means with 95% intervals from the store.

Reads only the store (and, to group by world, the header line of each trajectory record).
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.table import Table

from sortie.core.errors import ConfigError, UnknownNameError
from sortie.core.trajectory import TrajectoryHeader
from sortie.metrics.aggregate import RESCUE_COLUMNS
from sortie.metrics.intervals import (
    EpisodeMean,
    Estimate,
    episode_means,
    group_intervals,
    paired_differences,
)
from sortie.run.store import Store, StoredEpisode

GROUPS = ("level", "world", "suite")
FORMATS = ("table", "markdown", "csv", "json")


@dataclass(frozen=True, slots=True)
class ReportRow:
    """One line of a report: a run (or a B − A pair of runs) within one group."""

    run: str
    group: str
    n: int
    """Episodes in the group (for a comparison: episodes both runs hold)."""
    estimates: dict[str, Estimate]


def report_rows(store: Store, runs: Sequence[str], group: str = "level",
                columns: Sequence[str] = RESCUE_COLUMNS) -> list[ReportRow]:
    """Return one row per (run, group) with each column's mean and interval.

    Raises:
        UnknownNameError: a run id the store does not hold (the message lists those it does).
        ConfigError: an unknown grouping, or a record that cannot be read to group by world.
    """
    rows = []
    for run in runs:
        episodes = load_episode_means(store, run, group, columns)
        counts = _counts(e.group for e in episodes)
        for name, estimates in group_intervals(episodes, columns).items():
            rows.append(ReportRow(run, name, counts[name], estimates))
    return rows


def compare_rows(store: Store, a: str, b: str, group: str = "level",
                 columns: Sequence[str] = RESCUE_COLUMNS) -> list[ReportRow]:
    """Return per group the paired difference B − A of each column over common episodes.

    Raises:
        UnknownNameError: a run id the store does not hold.
        ConfigError: the two runs have no episode in common.
    """
    first = load_episode_means(store, a, group, columns)
    second = load_episode_means(store, b, group, columns)
    common = {e.episode for e in first} & {e.episode for e in second}
    if not common:
        raise ConfigError(f"{store.path}: runs {a!r} and {b!r} have no episodes in common, "
                          "so there is nothing to pair; compare runs over the same suites")
    counts = _counts(e.group for e in first if e.episode in common)
    differences = paired_differences(first, second, columns)
    return [ReportRow(f"{b} − {a}", name, counts[name], estimates)
            for name, estimates in differences.items()]  # fmt: skip


def load_episode_means(store: Store, run: str, group: str,
                       columns: Sequence[str]) -> list[EpisodeMean]:
    """Return the run's episodes, repeats averaged, each tagged with its group."""
    check_run(store, run)
    if group not in GROUPS:
        raise ConfigError(f"--group {group!r}: expected one of {', '.join(GROUPS)}")
    rows = ((group_of(e, group), e.key, e.metrics) for e in store.episodes(run))
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


def group_of(episode: StoredEpisode, group: str) -> str:
    """Return the episode's level, suite or world builder name."""
    if group == "suite":
        return episode.suite
    if group == "level":
        return episode.level or "-"
    return _world(episode)


def _world(episode: StoredEpisode) -> str:
    # The store does not keep the world; the record's first line (its header) does.
    try:
        with episode.record.open() as file:
            header = TrajectoryHeader.model_validate_json(file.readline())
    except (OSError, ValueError) as error:
        raise ConfigError(f"{episode.record}:1: cannot read the record header to group by "
                          f"world: {error}") from None  # fmt: skip
    return header.episode.world.builder


def _counts(groups: Iterable[str]) -> Counter[str]:
    counts = Counter(groups)
    counts["all"] = sum(counts.values())
    return counts


def render(rows: Sequence[ReportRow], fmt: str, title: str = "") -> Table | str:
    """Return the rows as a rich table or as markdown, CSV or JSON text."""
    if fmt == "table":
        return render_table(rows, title)
    renderers = {"markdown": render_markdown, "csv": render_csv, "json": render_json}
    if fmt not in renderers:
        raise ConfigError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    return renderers[fmt](rows)


def render_table(rows: Sequence[ReportRow], title: str = "") -> Table:
    """Return a rich table with one ``mean [lo, hi]`` cell per metric (TCR and HS in %)."""
    table = Table(title=title or None)
    for column in ("run", "group", "n", *_columns(rows)):
        table.add_column(column if column in ("run", "group", "n") else column.upper(),
                         justify="left" if column in ("run", "group") else "right")  # fmt: skip
    for row in rows:
        # The interval goes under the mean so a dozen columns fit a terminal.
        table.add_row(row.run, row.group, str(row.n),
                      *(cell(row.estimates[c], "\n") for c in _columns(rows)))  # fmt: skip
    return table


def render_markdown(rows: Sequence[ReportRow]) -> str:
    """Return a GitHub markdown table of the rows."""
    columns = _columns(rows)
    lines = ["| run | group | n | " + " | ".join(c.upper() for c in columns) + " |",
             "|---|---|---:|" + "---:|" * len(columns)]  # fmt: skip
    for row in rows:
        cells = [row.run, row.group, str(row.n), *(cell(row.estimates[c]) for c in columns)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


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


def cell(estimate: Estimate, separator: str = " ") -> str:
    """Return ``mean [lo, hi]``, just the mean when there is no interval, ``–`` when NaN."""
    if math.isnan(estimate.mean):
        return "–"
    if math.isnan(estimate.lo):
        return f"{estimate.mean:.1f}"
    return f"{estimate.mean:.1f}{separator}[{estimate.lo:.1f}, {estimate.hi:.1f}]"


def _columns(rows: Sequence[ReportRow]) -> list[str]:
    return list(rows[0].estimates) if rows else []


def _number(value: float) -> float | None:
    # JSON has no NaN; null says "not defined" to every reader.
    return None if math.isnan(value) else value
