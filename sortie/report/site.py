"""``sortie report --html DIR``: a static, self-contained HTML report of runs in a store.

The folder holds ``index.html`` (the report tables, the plots, a table of episodes per run),
``style.css``, ``plots/`` and ``episodes/`` (one page per episode with its map and clip).
Every link is relative and nothing loads from the network, so the folder opens from disk,
can be copied or zipped, and reads the same anywhere.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sortie.core.folders import claim_output
from sortie.core.records_io import writing
from sortie.missions.registry import FAMILIES
from sortie.report.compare import COMPARE_FOLDER, write_comparisons
from sortie.report.descriptor import report_of
from sortie.report.episode import (
    EPISODES_FOLDER,
    EpisodePage,
    PageTools,
    legend_css,
    write_episode_page,
)
from sortie.report.failures import failure_modes, failure_rows
from sortie.report.html import STYLE, STYLE_FILE, Cell, HtmlTable, Link, esc, page, render_table
from sortie.report.maps import WorldMaps
from sortie.report.player import INDEX_SCRIPT, write_scripts
from sortie.report.plots import plot_cascade, plot_decay, stage_cascade
from sortie.report.reference import ReferenceViews
from sortie.report.render import cell, layout, paper_tables
from sortie.report.runs import run_table
from sortie.report.tables import (
    Variants,
    check_run,
    chosen_variants,
    report_rows,
    runs_family,
)
from sortie.report.timings import HARNESS_NOTE, run_time_shares, time_rows
from sortie.report.usage import COLUMNS, run_usage, usage_rows
from sortie.run.store import Store

PLOTS_FOLDER = "plots"


def write_site(
    store: Store,
    runs: Sequence[str],
    out: Path,
    group: str = "level",
    variants: Variants | None = None,
) -> Path:
    """Write the report of ``runs`` into folder ``out``; return the path of its index page.

    ``variants`` picks the readings of the paper tables (``sortie report --readings``).

    ``out`` must be new or empty, or hold an earlier report of the same runs, which is
    updated (``sortie.core.folders``).

    Raises:
        UnknownNameError: a run id the store does not hold.
        ConfigError: an unknown grouping, a record that cannot be read to group by world, or
            ``out`` holding other files.
        StoreError: the disk is full or read-only (``records_io.writing``).
    """
    for run in runs:
        check_run(store, run)
    with writing(out, "writing the HTML report"):
        return _write_site(store, runs, out, (group, variants or {}))


def _write_site(store: Store, runs: Sequence[str], out: Path, how: tuple[str, Variants]) -> Path:
    claim_output(out, f"report of {', '.join(runs)}", "--html")
    (out / STYLE_FILE).write_text(STYLE + legend_css(), encoding="utf-8")
    write_scripts(out)
    figures = write_plots(store, runs, out / PLOTS_FOLDER, how[1])
    tools, folder = PageTools(WorldMaps(), ReferenceViews()), out / EPISODES_FOLDER
    folder.mkdir(exist_ok=True)
    family = runs_family(store, runs)
    pages = [
        [write_episode_page(store, run, e, folder, tools) for e in store.episodes(run)]
        for run in runs
    ]
    episodes = [episode_table(run, p, family) for run, p in zip(runs, pages, strict=True)]
    sides = write_comparisons(out, runs, pages)
    index = out / "index.html"
    index.write_text(
        index_page(runs, index_tables(store, runs, *how), figures, episodes, sides),
        encoding="utf-8",
    )
    return index


def index_tables(
    store: Store, runs: Sequence[str], group: str, variants: Variants | None = None
) -> list[HtmlTable]:
    """Return the index's top tables: the paper's, the family's own, endings, model use, time.

    The paper's tables are read as ``variants`` say, named in their titles when not sortie's.

    The family's own tables (``FamilyReport.run_tables``: household's executor error codes)
    come when the runs have something for them.
    """
    tables = []
    read_as = chosen_variants(variants or {})
    for table in paper_tables(report_rows(store, runs, group, variants=variants)):
        # A line per level and a column per run, as in the terminal: the paper's way round
        # (a column per level and metric) is wider than a 1280-pixel screen at five levels.
        header, lines = layout(table, "\n", by_run=True, compact=True)
        numeric = frozenset(h for h in header if h not in ("run", "group"))
        title = f"{table.title} · read as {read_as}" if read_as else table.title
        tables.append(HtmlTable(title, header, lines, numeric, note=table.note))
    for own in report_of(runs_family(store, runs)).run_tables:
        if own.shows(store, runs):
            tables.append(own.html(store, runs))
    header, lines = failure_rows(failure_modes(store, runs))
    tables.append(
        HtmlTable("How episodes ended (% of episodes)", header, lines, frozenset(header[1:]))
    )
    usage = run_usage(store, runs)
    if usage:
        tables.append(HtmlTable("Model calls", COLUMNS, usage_rows(usage), frozenset(COLUMNS[1:])))
    header, lines = time_rows(run_time_shares(store, runs))
    tables.append(
        HtmlTable(
            "Where the time went (% of wall time)",
            header,
            lines,
            frozenset(header[1:]),
            note=HARNESS_NOTE,
        )
    )
    return tables


def write_plots(
    store: Store, runs: Sequence[str], folder: Path, variants: Variants | None = None
) -> list[tuple[str, str]]:
    """Draw the run plots into ``folder``; return (caption, path relative to the index) pairs.

    The decay across levels reads its metrics as ``variants`` say, as the tables beside it.
    """
    name = runs_family(store, runs)
    family, shows = FAMILIES.get(name), report_of(name)
    cascades = stage_cascade(store, runs, shows.progress)
    cascade = plot_cascade(cascades, folder / "stage-cascade.png")
    by_level = report_rows(store, runs, "level", shows.headline, variants)
    decay = plot_decay(by_level, folder / "level-decay.png", shows.headline, family.level_name)
    read_as = chosen_variants(variants or {})
    across = f"{shows.decay_title} (read as {read_as})" if read_as else shows.decay_title
    shown = (
        "how far episodes got (share at each step of task progress, and successes)"
        if shows.progress
        else "share of episodes that completed each stage"
    )
    return [
        (f"Cascade: {shown}, per {family.level_name}", f"{PLOTS_FOLDER}/{cascade.name}"),
        (f"{across}, one line per run", f"{PLOTS_FOLDER}/{decay.name}"),
    ]


def episode_table(run: str, pages: Sequence[EpisodePage], family: str) -> HtmlTable:
    """Return the run's episodes, sortable and filterable, every cell a link to its page."""
    scores = [(score.label, score.metric, score.digits) for score in report_of(family).run_scores]
    level = FAMILIES.get(family).group
    columns = (
        "episode",
        level,
        "repeat",
        "outcome",
        "failure reason",
        "steps",
        *(column for column, _, _ in scores),
        "clip",
    )
    rows = [_episode_row(p, scores) for p in pages]
    numeric = frozenset({"repeat", "steps", *(column for column, _, _ in scores)})
    filters = frozenset({level, "outcome", "failure reason"})
    return HtmlTable(f"Episodes of {run}", columns, rows, numeric, sortable=True, filters=filters)


def _episode_row(page: EpisodePage, scores: Sequence[tuple[str, str, int]]) -> list[Link]:
    episode = page.episode
    cells = [
        episode.key,
        episode.level,
        str(episode.repeat),
        episode.outcome,
        episode.failure_reason or "",
        str(episode.steps),
        *(_metric(page, metric, digits) for _, metric, digits in scores),
        "yes" if page.has_clip else "",
    ]
    return [Link(text, f"{EPISODES_FOLDER}/{page.name}") for text in cells]


def index_page(
    runs: Sequence[str],
    tables: Sequence[HtmlTable],
    figures: Sequence[tuple[str, str]],
    episodes: Sequence[HtmlTable],
    sides: Sequence[tuple[str, str]] = (),
) -> str:
    """Return the index document: tables, plots, side-by-side pages, each run's episodes."""
    title = "sortie report: " + ", ".join(runs)
    plots = "".join(
        f"<figure><img src='{esc(path)}' alt='{esc(caption)}'>"
        f"<figcaption>{esc(caption)}</figcaption></figure>"
        for caption, path in figures
    )
    body = (
        f"<h1>{esc(title)}</h1>"
        + "".join(render_table(t) for t in tables)
        + f"<h2>Plots</h2>{plots}"
        + _side_links(sides)
        + "".join(render_table(t) for t in episodes)
    )
    return page(title, body, scripts=(INDEX_SCRIPT,))


def _side_links(sides: Sequence[tuple[str, str]]) -> str:
    """Return the list of side-by-side pages (none for a report of one run)."""
    if not sides:
        return ""
    items = "".join(f"<li><a href='{esc(path)}'>{esc(title)}</a></li>" for title, path in sides)
    return f"<h2>Runs side by side</h2><ul>{items}</ul>"


def _metric(page: EpisodePage, name: str, digits: int = 1) -> str:
    value = page.episode.metrics.get(name)
    return "–" if value is None or value != value else f"{value:.{digits}f}"  # NaN != NaN


@dataclass(frozen=True, slots=True)
class Report:
    """One report below a portal: its title, its index page and the runs it shows."""

    title: str
    index: Path
    runs: tuple[str, ...]


def write_portal(out: Path, store: Store, reports: Sequence[Report]) -> Path:
    """Write ``out/index.html``, the front page of reports written below ``out``; return it.

    Runs of different mission families have different tables, so each family gets its own
    report. The front page lists every run of them all, one sortable line each: its suites,
    agent and model, backend, when it began, episodes and runs, errors, and its family's two
    headline metrics with their 95% intervals; then each report with its side-by-side pages.

    Raises:
        StoreError: the disk is full or read-only (``records_io.writing``).
    """
    with writing(out, "writing the reports' front page"):
        return _write_portal(out, store, reports)


def _write_portal(out: Path, store: Store, reports: Sequence[Report]) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / STYLE_FILE).write_text(STYLE + legend_css(), encoding="utf-8")
    write_scripts(out)
    summaries = {row["run"]: row for row in run_table(store)}
    table = HtmlTable(
        "Every run",
        PORTAL_COLUMNS,
        [
            _portal_row(store, report, summaries[run], out)
            for report in reports
            for run in report.runs
        ],
        frozenset({"episodes", "runs", "errors", "headline 1", "headline 2"}),
        sortable=True,
        filters=frozenset({"family", "agent"}),
    )
    body = (
        "<h1>sortie reports</h1>"
        f"<p class='hint'>Store {esc(store.path.name)}; click a column's head to sort, a run to "
        "open its report (leaderboard, plots, a page per episode).</p>"
        + render_table(table)
        + "<h2>Reports</h2><ul>"
        + "".join(_report_item(report, out) for report in reports)
        + "</ul>"
    )
    index = out / "index.html"
    index.write_text(page("sortie reports", body, scripts=(INDEX_SCRIPT,)), encoding="utf-8")
    return index


NEWLINE = "\n"
"""Between a mean and its interval in a cell (the cell keeps its line breaks)."""
PORTAL_COLUMNS = (
    "run",
    "family",
    "suites",
    "agent",
    "backend",
    "began",
    "episodes",
    "runs",
    "errors",
    "headline 1",
    "headline 2",
)


def _portal_row(store: Store, report: Report, summary: dict[str, Any], out: Path) -> list[Cell]:
    """Return one run's front-page line: what it was, and its headline over all episodes."""
    run = summary["run"]
    headline = report_of(summary["family"]).headline
    rows = report_rows(store, [run], "suite", headline)
    overall = rows[-1] if rows else None
    link = report.index.relative_to(out).as_posix()
    heads = [
        f"{metric.upper()} {cell(overall.estimates[metric], NEWLINE, compact=True)}"
        if overall
        else "–"
        for metric in headline[:2]
    ]
    heads += ["–"] * (2 - len(heads))  # a family with a single metric heads with one
    return [
        Link(run, link),
        summary["family"],
        ", ".join(summary["suites"]),
        summary["agent"],
        summary["backend"],
        (summary["began"] or "–").replace("T", " ")[:16],  # to the minute, UTC
        str(overall.n if overall else 0),
        str(overall.runs if overall else 0),
        str(summary["errors"]),
        *heads,
    ]


def _report_item(report: Report, out: Path) -> str:
    """Return a report's list item: a link to it and to its side-by-side pages."""
    folder = report.index.parent
    link = report.index.relative_to(out).as_posix()
    sides = sorted((folder / COMPARE_FOLDER).glob("*.html"))
    inner = "".join(
        f"<li><a href='{esc(p.relative_to(out).as_posix())}'>{esc(_side_title(p))}</a></li>"
        for p in sides
    )
    nested = f"<ul>{inner}</ul>" if inner else ""
    return f"<li><a href='{esc(link)}'>{esc(report.title)}</a>{nested}</li>"


def _side_title(path: Path) -> str:
    """Return a side-by-side page's title, read from its heading."""
    found = re.search(r"<h1>(.*?)</h1>", path.read_text(encoding="utf-8"))
    return html.unescape(found.group(1)) if found else path.stem
