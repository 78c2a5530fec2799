"""Aggregation of per-episode metrics: the one place where means are taken."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

RESCUE_COLUMNS = ("tcr", "ts", "s1", "s2", "s3", "s4", "steps", "collisions", "hs")
AERIAL_COLUMNS = ("sr", "osr5", "mp", "eff", "cr", "gap", "steps")
"""The MissionBench table: SR, OSR, MP, Eff, CR, the oracle gap Δ = OSR − SR, steps."""
PERCENT = {"tcr", "hs", "sr", "osr5", "osr10", "osr20", "mp", "eff", "cr", "gap", "unscored"}
"""Metrics shown as percentages."""


def group_means(rows: Iterable[tuple[str, dict[str, float]]], columns: Sequence[str]
                ) -> dict[str, dict[str, float]]:
    """Return, per group key, the mean of each column over its episodes (NaNs left out).

    ``rows`` are ``(group, metrics)`` pairs; the result also holds ``n`` (episodes per group)
    and an ``all`` group.
    """
    grouped: dict[str, list[dict[str, float]]] = defaultdict(list)
    for group, metrics in rows:
        grouped[group].append(metrics)
        grouped["all"].append(metrics)
    return {group: {"n": float(len(items)), **{c: _mean(items, c) for c in columns}}
            for group, items in sorted(grouped.items(), key=lambda kv: kv[0] == "all")}  # fmt: skip


def _mean(items: list[dict[str, float]], column: str) -> float:
    values = [m[column] for m in items if column in m and not math.isnan(m[column])]
    if not values:
        return math.nan
    mean = sum(values) / len(values)
    return 100.0 * mean if column in PERCENT else mean
