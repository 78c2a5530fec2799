"""``sortie report --html DIR``: a static, self-contained HTML report of runs in a store.

The folder holds ``index.html`` (the report tables, the plots, a table of episodes per run),
``style.css``, ``plots/`` and ``episodes/`` (one page per episode with its map and clip).
Every link is relative and nothing loads from the network, so the folder opens from disk,
can be copied or zipped, and reads the same anywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sortie.core.folders import claim_output
from sortie.missions.registry import FAMILIES
from sortie.report.codes import TITLE as CODES_TITLE
from sortie.report.codes import code_counts, code_rows, has_codes
from sortie.report.compare import write_comparisons
from sortie.report.episode import (
    EPISODES_FOLDER,
    EpisodePage,
    PageTools,
    legend_css,
    write_episode_page,
)
from sortie.report.failures import failure_modes, failure_rows
from sortie.report.html import STYLE, STYLE_FILE, HtmlTable, Link, esc, page, render_table
from sortie.report.maps import WorldMaps
from sortie.report.player import INDEX_SCRIPT, write_scripts
from sortie.report.plots import plot_cascade, plot_decay, stage_cascade
from sortie.report.reference import ReferenceViews
from sortie.report.render import layout, paper_tables
from sortie.report.tables import check_run, report_rows, runs_family
from sortie.report.timings import run_time_shares, time_rows
from sortie.report.usage import COLUMNS, run_usage, usage_rows
from sortie.run.store import Store

PLOTS_FOLDER = "plots"


def write_site(store: Store, runs: Sequence[str], out: Path, group: str = "level") -> Path:
    """Write the report of ``runs`` into folder ``out``; return the path of its index page.

    ``out`` must be new or empty, or hold an earlier report of the same runs, which is
    updated (``sortie.core.folders``).

    Raises:
        UnknownNameError: a run id the store does not hold.
        ConfigError: an unknown grouping, a record that cannot be read to group by world, or
            ``out`` holding other files.
    """
    for run in runs:
        check_run(store, run)
    claim_output(out, f"report of {', '.join(runs)}", "--html")
    (out / STYLE_FILE).write_text(STYLE + legend_css(), encoding="utf-8")
    write_scripts(out)
    figures = write_plots(store, runs, out / PLOTS_FOLDER)
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
        index_page(runs, index_tables(store, runs, group), figures, episodes, sides),
        encoding="utf-8",
    )
    return index


def index_tables(store: Store, runs: Sequence[str], group: str) -> list[HtmlTable]:
    """Return the index's top tables: the paper's, error codes, endings, model use, time.

    The error-code table is for runs whose episodes carry executor codes (household runs).
    """
    tables = []
    for table in paper_tables(report_rows(store, runs, group)):
        header, lines = layout(table, "\n")
        numeric = frozenset(h for h in header if h not in ("run", "group"))
        tables.append(HtmlTable(table.title, header, lines, numeric))
    if has_codes(store, runs):
        header, lines = code_rows(code_counts(store, runs))
        tables.append(HtmlTable(CODES_TITLE, header, lines, frozenset(header[-3:])))
    header, lines = failure_rows(failure_modes(store, runs))
    tables.append(
        HtmlTable("How episodes ended (% of episodes)", header, lines, frozenset(header[1:]))
    )
    usage = run_usage(store, runs)
    if usage:
        tables.append(HtmlTable("Model calls", COLUMNS, usage_rows(usage), frozenset(COLUMNS[1:])))
    header, lines = time_rows(run_time_shares(store, runs))
    tables.append(
        HtmlTable("Where the time went (% of wall time)", header, lines, frozenset(header[1:]))
    )
    return tables


def write_plots(store: Store, runs: Sequence[str], folder: Path) -> list[tuple[str, str]]:
    """Draw the run plots into ``folder``; return (caption, path relative to the index) pairs."""
    cascade = plot_cascade(stage_cascade(store, runs), folder / "stage-cascade.png")
    family = FAMILIES.get(runs_family(store, runs))
    by_level = report_rows(store, runs, "level", family.headline)
    decay = plot_decay(by_level, folder / "level-decay.png", family.headline)
    across = family.decay_title
    return [
        (
            "Stage cascade: share of episodes that completed each stage, per level or type",
            f"{PLOTS_FOLDER}/{cascade.name}",
        ),
        (f"{across}, one line per run", f"{PLOTS_FOLDER}/{decay.name}"),
    ]


def episode_table(run: str, pages: Sequence[EpisodePage], family: str) -> HtmlTable:
    """Return the run's episodes, sortable and filterable, every cell a link to its page."""
    described = FAMILIES.get(family)
    scores = [(score.label, score.metric, score.digits) for score in described.run_scores]
    level = described.group
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


def write_portal(out: Path, reports: Sequence[tuple[str, Path]]) -> Path:
    """Write ``out/index.html`` linking to reports written below ``out``; return its path.

    Runs of different mission families have different tables, so each family gets its own
    report; this page is their common front door.
    """
    out.mkdir(parents=True, exist_ok=True)
    (out / STYLE_FILE).write_text(STYLE + legend_css(), encoding="utf-8")
    rows = [(Link(title, index.relative_to(out).as_posix()),) for title, index in reports]
    body = "<h1>sortie reports</h1>" + render_table(HtmlTable("Reports", ("report",), rows))
    index = out / "index.html"
    index.write_text(page("sortie reports", body), encoding="utf-8")
    return index
