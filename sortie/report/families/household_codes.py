"""The executor's error codes of household runs: rounds per code, in successful and failed runs.

Read from the stored per-episode counts (``l1`` … ``e3``, ``sortie.metrics.household``): for
each run, every code's rounds summed over its successful episodes (SR 1) and over its failed
ones (SR 0). Errored episodes are not scored, so they are in neither. Every code has a line,
zeros included, so tables of different runs line up.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.table import Table

from sortie.missions.household.records import ERROR_MEANINGS, ErrorCode, error_kind
from sortie.report.descriptor import RunTable
from sortie.report.html import HtmlTable
from sortie.report.render import markup_free, printable
from sortie.report.tables import errored
from sortie.run.store import Store

HEADER = ("run", "code", "kind", "meaning", "successful runs", "failed runs", "all runs")
TITLE = "Executor error codes (rounds, summed over each run's successful and failed episodes)"


@dataclass(frozen=True, slots=True)
class CodeCounts:
    """One run's rounds per error code, in its successful and in its failed episodes."""

    successful: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    runs: Counter[str] = field(default_factory=Counter)
    """How many episodes were ``successful`` and ``failed``."""


def code_counts(store: Store, runs: Sequence[str]) -> dict[str, CodeCounts]:
    """Return, per run, the rounds of each error code in successful and failed episodes."""
    return {run: _run_counts(store, run) for run in runs}


def _run_counts(store: Store, run: str) -> CodeCounts:
    return count_codes(e.metrics for e in store.episodes(run) if not errored(e))


def count_codes(episodes: Iterable[Mapping[str, float]]) -> CodeCounts:
    """Return the rounds per error code of scored episodes' metrics, by SR (NaN SR: skipped)."""
    counts = CodeCounts()
    for metrics in episodes:
        if math.isnan(metrics.get("sr", math.nan)):
            continue
        side = "successful" if metrics["sr"] == 1.0 else "failed"
        counts.runs[side] += 1
        bucket = counts.successful if side == "successful" else counts.failed
        for code in ErrorCode:
            value = metrics.get(code.value.lower(), math.nan)
            bucket[code.value] += 0 if math.isnan(value) else int(value)
    return counts


def code_rows(counts: dict[str, CodeCounts]) -> tuple[list[str], list[list[str]]]:
    """Return the header and a line per run and code: kind, meaning, the three counts."""
    lines = []
    for run, run_counts in counts.items():
        for code in ErrorCode:
            good, bad = run_counts.successful[code.value], run_counts.failed[code.value]
            kind = error_kind(code)
            name = printable(run)
            lines.append([name, code.value, kind, ERROR_MEANINGS[code], str(good), str(bad)])
            lines[-1].append(str(good + bad))
    return list(HEADER), lines


def code_table(counts: dict[str, CodeCounts]) -> Table:
    """Return the error-code counts as a rich table."""
    header, lines = code_rows(counts)
    table = Table(title=TITLE, caption=markup_free(_caption(counts)))
    for column in header:
        table.add_column(column, justify="right" if column.endswith("runs") else "left")
    for line in lines:
        table.add_row(*(markup_free(text) for text in line))
    return table


def code_markdown(counts: dict[str, CodeCounts]) -> str:
    """Return the error-code counts as a markdown table under a heading."""
    header, lines = code_rows(counts)
    text = ["| " + " | ".join(header) + " |", "|---|---|---|---|" + "---:|" * 3]
    text += ["| " + " | ".join(line) + " |" for line in lines]
    return f"### {TITLE}\n\n" + "\n".join(text) + f"\n\n{_caption(counts)}\n"


def code_json(counts: CodeCounts) -> dict[str, Any]:
    """Return one run's counts for the JSON report: ``runs`` and a lower-case key per code."""
    return {
        "runs": {"successful": counts.runs["successful"], "failed": counts.runs["failed"]},
        **{
            code.value.lower(): {
                "code": code.value,
                "kind": error_kind(code),
                "meaning": ERROR_MEANINGS[code],
                "successful": counts.successful[code.value],
                "failed": counts.failed[code.value],
            }
            for code in ErrorCode
        },
    }


def _caption(counts: dict[str, CodeCounts]) -> str:
    return "; ".join(
        f"{printable(run)}: {c.runs['successful']} successful, {c.runs['failed']} failed episodes"
        for run, c in counts.items()
    )


def has_codes(store: Store, runs: Sequence[str]) -> bool:
    """Return whether the runs' episodes carry executor error codes (household runs do)."""
    names = {code.value.lower() for code in ErrorCode}
    return any(names & e.metrics.keys() for run in runs for e in store.episodes(run))


def codes_extra(store: Store, runs: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Return, per run, the ``error_codes`` key its JSON report object carries."""
    return {run: {"error_codes": code_json(c)} for run, c in code_counts(store, runs).items()}


def _terminal(store: Store, runs: Sequence[str]) -> Table:
    return code_table(code_counts(store, runs))


def _markdown(store: Store, runs: Sequence[str]) -> str:
    return code_markdown(code_counts(store, runs))


def _html(store: Store, runs: Sequence[str]) -> HtmlTable:
    header, lines = code_rows(code_counts(store, runs))
    return HtmlTable(TITLE, header, lines, frozenset(header[-3:]))


CODE_TABLE = RunTable(has_codes, _terminal, _markdown, _html, codes_extra)
"""The household family's table about whole runs: rounds per executor error code."""
