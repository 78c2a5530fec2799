"""Means with 95% bootstrap intervals over episodes, and paired differences between runs.

Repeats of one episode are not independent samples of the suite, so they are first averaged
per episode (keeping their spread); every interval is then taken over episodes. Bootstrap
resampling uses a generator seeded from a constant, so the same store gives the same report.

A ratio column (``sortie.metrics.aggregate.RATIOS``, e.g. household SER and SRR) is the ratio
of the sums of its two parts over the episodes; its interval resamples episodes and takes the
ratio of each resample's sums. A resample whose denominator sums to 0 has no ratio and is left
out of the percentiles; a group whose denominator sums to 0 has no ratio at all (NaN).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from sortie.metrics.aggregate import PERCENT, RATIOS

CONFIDENCE = 0.95
BOOTSTRAP_SEED = 20240601
"""Seed of every bootstrap: fixed so reports are reproducible."""
BOOTSTRAP_RESAMPLES = 2000


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean over ``n`` episodes with its bootstrap interval ``[lo, hi]``.

    ``lo`` and ``hi`` are NaN when there is no interval (fewer than two episodes); they equal
    the mean when every value is the same, since then no resample can differ.
    """

    mean: float
    lo: float
    hi: float
    n: int
    spread: float = math.nan
    """Mean over episodes of the standard deviation across repeats (NaN without repeats)."""

    def scaled(self, factor: float) -> Estimate:
        """Return the estimate with mean, bounds and spread multiplied by ``factor``."""
        return Estimate(
            self.mean * factor, self.lo * factor, self.hi * factor, self.n, self.spread * factor
        )


@dataclass(frozen=True, slots=True)
class EpisodeMean:
    """One episode's metrics averaged over its repeats."""

    episode: str
    """The job key without its repeat: ``suite/episode_id``."""
    group: str
    means: dict[str, float]
    spreads: dict[str, float]
    """Standard deviation across repeats per metric (NaN for a single repeat)."""
    repeats: int


def episode_of(key: str) -> str:
    """Return the episode part of a job key ``suite/episode_id/repeat``."""
    return key.rsplit("/", 1)[0]


def mean_interval(values: Iterable[float], spread: float = math.nan) -> Estimate:
    """Return the mean of ``values`` (NaNs left out) with a 95% percentile bootstrap interval."""
    data = np.array([v for v in values if not math.isnan(v)], dtype=float)
    n = len(data)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, spread)
    mean = float(data.mean())
    if n < 2:
        return Estimate(mean, math.nan, math.nan, n, spread)
    if np.all(data == data[0]):
        return Estimate(mean, mean, mean, n, spread)
    low, high = _percentile_bootstrap(data)
    return Estimate(mean, low, high, n, spread)


def _percentile_bootstrap(data: np.ndarray) -> tuple[float, float]:
    """Return the 95% percentile bootstrap interval of the mean of ``data``.

    The interval of ``scipy.stats.bootstrap(..., method="percentile")`` with this seed, to
    the bit (tests/metrics/test_intervals.py holds the two together): the same resamples
    drawn in one batch, their means, and scipy's ``quantile`` (its default, linear
    interpolation: Hyndman and Fan's 7) at alpha and 1 - alpha. Done here because importing
    ``scipy.stats`` takes half a second, which every report and run of two episodes or more
    paid. Percentile rather than BCa: BCa's acceleration is undefined (NaN, with a warning)
    for the near-degenerate 0/1 samples that small success-rate groups produce.
    """
    n = len(data)
    picks = np.random.default_rng(BOOTSTRAP_SEED).integers(0, n, size=(BOOTSTRAP_RESAMPLES, n))
    means = np.sort(np.mean(data[picks], axis=-1))
    if np.isnan(means[-1]):  # +inf and -inf in one resample: scipy's quantile gives NaN
        return math.nan, math.nan
    alpha = np.float64((1 - CONFIDENCE) / 2)
    p = np.array([alpha, 1 - alpha])
    position = p * len(means) + (1 - p)  # 1-based, between order statistics
    upper = position // 1
    lower = upper - 1
    weight = position % 1
    weight[lower < 0] = 0
    lower, upper = (np.clip(k, 0.0, len(means) - 1).astype(np.int64) for k in (lower, upper))
    low, high = (1 - weight) * means[lower] + weight * means[upper]
    return float(low), float(high)


def ratio_interval(parts: Iterable[tuple[float, float]]) -> Estimate:
    """Return Σ numerator / Σ denominator over episodes, with a 95% bootstrap interval.

    ``parts`` are one ``(numerator, denominator)`` pair per episode; pairs with a NaN are left
    out. The mean is NaN when the denominators sum to 0.
    """
    data = np.array([p for p in parts if not any(map(math.isnan, p))], dtype=float)
    return _sum_bootstrap(data.reshape(-1, 2), _ratio)


def _ratio(sums: np.ndarray) -> np.ndarray:
    """Return numerator / denominator along the last axis, NaN where the denominator is 0."""
    out = np.full(sums.shape[:-1], math.nan)
    return np.divide(sums[..., 0], sums[..., 1], out=out, where=sums[..., 1] != 0)


def _sum_bootstrap(data: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray]) -> Estimate:
    """Return ``statistic`` of the column sums of ``data`` (an episode per row), bootstrapped.

    Resamples whose statistic is undefined (NaN) are left out of the percentiles.
    """
    n = len(data)
    mean = float(statistic(data.sum(axis=0)))
    if n < 2 or math.isnan(mean):
        return Estimate(mean, math.nan, math.nan, n)
    picks = np.random.default_rng(BOOTSTRAP_SEED).integers(0, n, size=(BOOTSTRAP_RESAMPLES, n))
    values = statistic(data[picks].sum(axis=1))
    values = values[~np.isnan(values)]
    tail = 50.0 * (1.0 - CONFIDENCE)
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return Estimate(mean, float(low), float(high), n)


def episode_means(
    rows: Iterable[tuple[str, str, Mapping[str, float]]], columns: Sequence[str]
) -> list[EpisodeMean]:
    """Average each episode's repeats; ``rows`` are ``(group, job key, metrics)`` triples.

    A ratio column brings its two parts along (averaged like any column); its own value is
    the ratio of the parts' sums over the episode's repeats.
    """
    grouped: dict[tuple[str, str], list[Mapping[str, float]]] = defaultdict(list)
    for group, key, metrics in rows:
        grouped[(group, episode_of(key))].append(metrics)
    return [
        _average(group, episode, items, with_parts(columns))
        for (group, episode), items in sorted(grouped.items())
    ]


def with_parts(columns: Sequence[str]) -> list[str]:
    """Return ``columns`` followed by the parts of its ratio columns not already in it."""
    parts = [
        p for c in columns if c in RATIOS for p in (RATIOS[c].numerator, RATIOS[c].denominator)
    ]
    return list(dict.fromkeys([*columns, *parts]))


def _average(
    group: str, episode: str, items: list[Mapping[str, float]], columns: Sequence[str]
) -> EpisodeMean:
    means, spreads = {}, {}
    for column in columns:
        if column in RATIOS:
            means[column], spreads[column] = RATIOS[column].of(items), math.nan
            continue
        values = [m[column] for m in items if not math.isnan(m.get(column, math.nan))]
        means[column] = statistics.fmean(values) if values else math.nan
        spreads[column] = statistics.stdev(values) if len(values) > 1 else math.nan
    return EpisodeMean(episode, group, means, spreads, len(items))


def group_intervals(
    episodes: Sequence[EpisodeMean], columns: Sequence[str]
) -> dict[str, dict[str, Estimate]]:
    """Return, per group (and ``all`` last), each column's mean and interval over episodes.

    Columns in ``PERCENT`` are given in percent. An episode in several groups (a mission with
    two type tags) counts once in ``all``.
    """
    grouped: dict[str, list[EpisodeMean]] = defaultdict(list)
    for episode in episodes:
        grouped[episode.group].append(episode)
    grouped["all"] = list({e.episode: e for e in episodes}.values())
    return {
        group: {c: _estimate(items, c) for c in columns}
        for group, items in sorted(grouped.items(), key=lambda kv: kv[0] == "all")
    }


def _estimate(items: list[EpisodeMean], column: str) -> Estimate:
    if column in RATIOS:
        estimate = ratio_interval(_parts(e, column) for e in items)
        return estimate.scaled(100.0) if column in PERCENT else estimate
    spreads = [s for e in items if not math.isnan(s := e.spreads.get(column, math.nan))]
    spread = statistics.fmean(spreads) if spreads else math.nan
    estimate = mean_interval((e.means.get(column, math.nan) for e in items), spread)
    return estimate.scaled(100.0) if column in PERCENT else estimate


def paired_differences(
    a: Sequence[EpisodeMean], b: Sequence[EpisodeMean], columns: Sequence[str]
) -> dict[str, dict[str, Estimate]]:
    """Return, per group (and ``all``), the mean of B − A over episodes both runs hold.

    Each pair is one episode's repeat-averaged metric in run B minus the same in run A; its
    interval is a bootstrap over those per-episode differences. ``n`` counts the pairs with
    the metric defined in both runs. Episodes in only one run are left out.
    """
    in_a = {(e.group, e.episode): e for e in a}
    pairs = [(in_a[e.group, e.episode], e) for e in b if (e.group, e.episode) in in_a]
    grouped: dict[str, list[tuple[EpisodeMean, EpisodeMean]]] = defaultdict(list)
    for pair in pairs:
        grouped[pair[0].group].append(pair)
    grouped["all"] = list({x.episode: (x, y) for x, y in pairs}.values())
    return {
        group: {c: _difference(items, c) for c in columns}
        for group, items in sorted(grouped.items(), key=lambda kv: kv[0] == "all")
    }


def _parts(episode: EpisodeMean, column: str) -> tuple[float, float]:
    ratio = RATIOS[column]
    get = episode.means.get
    return get(ratio.numerator, math.nan), get(ratio.denominator, math.nan)


def _difference(pairs: list[tuple[EpisodeMean, EpisodeMean]], column: str) -> Estimate:
    if column in RATIOS:
        estimate = ratio_difference(pairs, column)
        return estimate.scaled(100.0) if column in PERCENT else estimate
    differences = [y.means.get(column, math.nan) - x.means.get(column, math.nan) for x, y in pairs]
    estimate = mean_interval(differences)
    return estimate.scaled(100.0) if column in PERCENT else estimate


def ratio_difference(pairs: Sequence[tuple[EpisodeMean, EpisodeMean]], column: str) -> Estimate:
    """Return B's ratio minus A's over the episode pairs, resampling the pairs together.

    Pairs missing a part on either side are left out; NaN when either side's denominators
    sum to 0.
    """
    rows = [(*_parts(a, column), *_parts(b, column)) for a, b in pairs]
    data = np.array([r for r in rows if not any(map(math.isnan, r))], dtype=float)
    return _sum_bootstrap(data.reshape(-1, 4), _ratio_change)


def _ratio_change(sums: np.ndarray) -> np.ndarray:
    return _ratio(sums[..., 2:4]) - _ratio(sums[..., 0:2])
