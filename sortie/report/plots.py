"""Plots of whole runs: how far episodes get through the stages, and how scores fall by level.

The numbers each plot shows come from a plain function (``stage_cascade``, ``level_decay``)
so they can be checked without looking at pixels. Figures are drawn on matplotlib's Agg
canvas through ``Figure`` objects, never pyplot, so no global state or display is involved.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sortie.metrics.intervals import Estimate
from sortie.report.tables import ReportRow, errored
from sortie.run.store import Store

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DONE = "done"
"""A stage's status once its predicate was met (``sortie.missions.stages.StageStatus``)."""
DPI = 80
"""Low resolution: report figures are for reading on a screen, many to a page."""


@dataclass(frozen=True, slots=True)
class Cascade:
    """For one run and level: the share of episodes that completed each stage."""

    run: str
    level: str
    n: int
    """Episodes (repeats counted apiece) of this run and level."""
    done: dict[str, float]
    """Percent of the ``n`` episodes whose stage reached ``done``, by stage name."""


def stage_cascade(
    store: Store, runs: Sequence[str], progress: Sequence[tuple[str, str, float]] = ()
) -> list[Cascade]:
    """Return the stage completion percentages of every run per level, levels in order.

    ``progress`` (``FamilyReport.progress``) replaces the stages with steps of a metric, for a
    family with a single stage. Episodes that ended in an agent or backend error are not
    attempts: they are left out.
    """
    cascades = []
    for run in runs:
        done: dict[str, list[set[str]]] = defaultdict(list)
        names: dict[str, None] = {label: None for label, _, _ in progress}
        for episode in store.episodes(run):
            if errored(episode):
                continue
            if progress:
                reached = {
                    label
                    for label, metric, least in progress
                    if episode.metrics.get(metric, math.nan) >= least - 1e-9
                }
            else:
                stages = store.stages(run, episode.key)
                names.update((s.name, None) for s in stages)  # mission order, as first seen
                reached = {s.name for s in stages if s.status == DONE}
            done[episode.level or "-"].append(reached)
        for level in sorted(done):
            finished = done[level]
            cascades.append(
                Cascade(
                    run,
                    level,
                    len(finished),
                    {
                        name: 100.0 * sum(name in f for f in finished) / len(finished)
                        for name in names
                    },
                )
            )
    return cascades


def plot_cascade(cascades: Sequence[Cascade], path: Path) -> Path:
    """Draw one panel per level: for each stage, a bar per run with its percent done."""
    levels = sorted({c.level for c in cascades})
    runs = list(dict.fromkeys(c.run for c in cascades))
    stages = list(dict.fromkeys(s for c in cascades for s in c.done))
    by_key = {(c.run, c.level): c for c in cascades}
    from matplotlib.figure import Figure  # here: matplotlib is a quarter second to import

    figure = Figure(figsize=(2.6 * max(1, len(levels)) + 1.2, 2.8), dpi=DPI, layout="constrained")
    axes = figure.subplots(1, max(1, len(levels)), sharey=True, squeeze=False)[0]
    width = 0.8 / max(1, len(runs))
    for ax, level in zip(axes, levels, strict=False):
        for k, run in enumerate(runs):
            cascade = by_key.get((run, level))
            values = [cascade.done.get(s, 0.0) if cascade else math.nan for s in stages]
            n = cascade.n if cascade else 0
            ax.bar(
                np.arange(len(stages)) + (k - (len(runs) - 1) / 2) * width,
                values,
                width,
                label=f"{run} (n={n})" if len(levels) == 1 else run,
            )
        slanted = max(map(len, stages), default=0) > 3
        ax.set_xticks(range(len(stages)), stages, rotation=45 if slanted else 0, fontsize=8)
        ax.set_title(level)
        ax.set_ylim(0, 105)
    axes[0].set_ylabel("% of episodes done")
    figure.legend(*axes[0].get_legend_handles_labels(), loc="outside right upper", fontsize=8)
    return _save(figure, path)


def level_decay(rows: Sequence[ReportRow], metric: str) -> dict[str, list[tuple[str, Estimate]]]:
    """Return per run the ``(level, estimate)`` pairs of ``metric``, from rows grouped by level.

    The ``all`` row of each run is left out: it is not a level.
    """
    lines: dict[str, list[tuple[str, Estimate]]] = defaultdict(list)
    for row in rows:
        if row.group != "all":
            lines[row.run].append((row.group, row.estimates[metric]))
    return {run: sorted(points, key=lambda p: p[0]) for run, points in lines.items()}


def plot_decay(
    rows: Sequence[ReportRow],
    path: Path,
    metrics: Sequence[str] = ("tcr", "ts"),
    level_word: str = "level",
) -> Path:
    """Draw one panel per metric: its mean per level, one line per run, intervals as bars.

    Long level names (household templates) are slanted so they do not run into each other.
    """
    levels = sorted({r.group for r in rows if r.group != "all"})
    tall = 2.8 + 0.06 * max(map(len, levels), default=0)  # room for slanted names
    from matplotlib.figure import Figure

    figure = Figure(figsize=(3.6 * len(metrics) + 1.2, tall), dpi=DPI, layout="constrained")
    axes = figure.subplots(1, len(metrics), squeeze=False)[0]
    for ax, metric in zip(axes, metrics, strict=True):
        for run, points in level_decay(rows, metric).items():
            at = [levels.index(level) for level, _ in points]
            estimates = [e for _, e in points]
            gaps = [
                [_gap(e.mean, e.lo) for e in estimates],
                [_gap(e.mean, e.hi) for e in estimates],
            ]
            ax.errorbar(
                at, [e.mean for e in estimates], yerr=gaps, marker="o", capsize=3, label=run
            )
        slanted = max(map(len, levels), default=0) > 4
        ax.set_xticks(
            range(len(levels)),
            levels,
            rotation=35 if slanted else 0,
            ha="right" if slanted else "center",
        )
        ax.set_title(f"{metric.upper()} by {level_word}")
        ax.set_ylim(-4, 104)  # TCR (%) and TS both run 0-100; a 0 stays visible
    figure.legend(*axes[0].get_legend_handles_labels(), loc="outside right upper", fontsize=8)
    return _save(figure, path)


def _gap(mean: float, bound: float) -> float:
    """Return how far an interval bound lies from the mean (0 where there is no interval)."""
    return 0.0 if math.isnan(bound) else abs(bound - mean)


def _save(figure: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=DPI)
    return path
