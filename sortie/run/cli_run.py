"""``sortie run``: resolve the suite and agent, run in sequence, print the per-level table."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from sortie.core.errors import ConfigError
from sortie.core.records_io import Suite, read_suite
from sortie.metrics.aggregate import RESCUE_COLUMNS, group_means
from sortie.run.suite import EpisodeResult, RunSettings, run_suite


def find_suite(name: str) -> Suite:
    """Return the suite file at path ``name``, or the packaged suite called ``name``."""
    path = Path(name)
    if path.exists():
        return read_suite(path)
    try:
        from sortie.generation.suites import load_suite
    except ImportError:
        raise ConfigError(f"suite {name!r}: no such file, and no packaged suites") from None
    return load_suite(name)


def run_and_report(suite_name: str, agent: str, agent_args: Mapping[str, Any], out: Path,
                   clock: str, triggers: str, seed: int, console: Console) -> list[EpisodeResult]:
    """Run a suite with a progress bar and print TCR, TS, S1-S4, steps, collisions, HS."""
    suite = find_suite(suite_name)
    settings = RunSettings(out / suite.header.suite / agent, clock, triggers, seed)
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task(f"{suite.header.suite} · {agent}", total=len(suite.episodes))
        results = run_suite(suite, agent, dict(agent_args), settings,
                            on_result=lambda r: progress.advance(task))  # fmt: skip
    console.print(results_table(results, f"{suite.header.suite} · {agent}"))
    console.print(f"Records: {settings.out.resolve()}")
    return results


def results_table(results: list[EpisodeResult], title: str) -> Table:
    """Return the per-level table of means (TCR in %)."""
    means = group_means(((r.episode.level or "-", r.metrics) for r in results), RESCUE_COLUMNS)
    table = Table(title=title)
    for column in ("level", "n", *RESCUE_COLUMNS):
        table.add_column(column.upper() if column != "level" else column, justify="right")
    for level, row in means.items():
        cells = [_cell(row[c]) for c in ("n", *RESCUE_COLUMNS)]
        table.add_row(level, *cells)
    return table


def _cell(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.1f}" if value % 1 else f"{value:.0f}"
