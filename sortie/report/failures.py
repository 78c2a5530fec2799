"""Failure modes per run: how the episodes that did not succeed ended, in percent of all.

Rescue episodes fail by the stage whose time ran out (``timeout_s1`` …) or a drop out of
range; aerial ones by MissionBench's modes (premature termination, drift or oscillation,
objective unmet, timeout); both by harness errors (``agent_error``, ``backend_error``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rich.table import Table

from sortie.run.store import Store

SUCCESS = "success"


def failure_modes(store: Store, runs: Sequence[str]) -> dict[str, Counter[str]]:
    """Return, per run, how many episodes ended each way (``success`` included)."""
    return {
        run: Counter(
            SUCCESS if e.outcome == SUCCESS else e.failure_reason or "unknown"
            for e in store.episodes(run)
        )
        for run in runs
    }


def failure_rows(modes: dict[str, Counter[str]]) -> tuple[list[str], list[list[str]]]:
    """Return the header (run, runs, then each way of ending) and a line of percentages per run."""
    ways = sorted(
        {way for counts in modes.values() for way in counts}, key=lambda way: (way != SUCCESS, way)
    )
    lines = []
    for run, counts in modes.items():
        total = sum(counts.values())
        lines.append(
            [run, str(total), *(f"{100 * counts[w] / total:.0f}" if total else "–" for w in ways)]
        )
    return ["run", "runs", *ways], lines


def failure_table(modes: dict[str, Counter[str]]) -> Table:
    """Return the failure modes as a rich table (percent of each run's episodes)."""
    header, lines = failure_rows(modes)
    table = Table(title="How episodes ended (% of episodes)")
    for column in header:
        table.add_column(column, justify="left" if column == "run" else "right")
    for line in lines:
        table.add_row(*line)
    return table


def failure_markdown(modes: dict[str, Counter[str]]) -> str:
    """Return the failure modes as a markdown table."""
    header, lines = failure_rows(modes)
    text = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    return "\n".join(text + ["| " + " | ".join(line) + " |" for line in lines]) + "\n"
