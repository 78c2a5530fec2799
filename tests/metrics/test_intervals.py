import math

import pytest

from sortie.metrics.intervals import (
    episode_means,
    episode_of,
    group_intervals,
    mean_interval,
    paired_differences,
    ratio_interval,
)


def test_the_interval_contains_the_mean():
    """A bootstrap interval of varied values lies around their mean."""
    estimate = mean_interval([1.0, 4.0, 2.0, 8.0, 5.0, 7.0])
    assert estimate.mean == pytest.approx(4.5)
    assert estimate.lo < estimate.mean < estimate.hi and estimate.n == 6


def test_the_interval_shrinks_with_more_data():
    """Ten copies of the same sample give a narrower interval than one copy."""
    sample = [0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0]
    small, large = mean_interval(sample), mean_interval(sample * 10)
    assert large.hi - large.lo < small.hi - small.lo
    assert small.mean == large.mean == 0.5


def test_the_interval_is_reproducible():
    """The bootstrap is seeded from a constant, so two calls agree exactly."""
    assert mean_interval([3.0, 1.0, 4.0, 1.0, 5.0]) == mean_interval([3.0, 1.0, 4.0, 1.0, 5.0])


@pytest.mark.parametrize("n", [2, 3, 7, 10, 31, 59, 213])
def test_the_interval_is_scipys_percentile_bootstrap_to_the_bit(n):
    """The bootstrap gives scipy.stats.bootstrap's interval exactly, on varied samples."""
    import numpy as np
    from scipy.stats import bootstrap

    from sortie.metrics.intervals import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE

    rng = np.random.default_rng(n)
    samples = [
        rng.integers(0, 2, n) * 100.0,  # success rates
        np.round(rng.uniform(0, 100, n), 2),
        rng.exponential(3.0, n),
        rng.integers(0, 5, n) * 25.0,
    ]
    for sample in samples:
        if np.all(sample == sample[0]):
            continue
        result = bootstrap(
            (sample,),
            np.mean,
            confidence_level=CONFIDENCE,
            method="percentile",
            n_resamples=BOOTSTRAP_RESAMPLES,
            rng=np.random.default_rng(BOOTSTRAP_SEED),
        )
        estimate = mean_interval(sample.tolist())
        assert (estimate.lo, estimate.hi) == tuple(map(float, result.confidence_interval))


def test_infinities_of_both_signs_give_no_interval_as_in_scipy():
    """A resample holding +inf and -inf has no mean: scipy's interval is NaN at both ends."""
    estimate = mean_interval([math.inf, -math.inf, *[1.0] * 30])
    assert math.isnan(estimate.lo) and math.isnan(estimate.hi)


def test_a_hand_worked_interval_of_two_values():
    """Two values 0 and 1: resample means are 0, 0.5 or 1; the 2.5 and 97.5 % points are 0, 1."""
    estimate = mean_interval([0.0, 1.0])
    assert (estimate.lo, estimate.hi) == (0.0, 1.0)


def test_too_few_or_equal_values_have_no_spread_interval():
    """One value has no interval (NaN bounds); equal values have the point interval."""
    one = mean_interval([2.0, math.nan])
    assert (one.mean, one.n) == (2.0, 1) and math.isnan(one.lo) and math.isnan(one.hi)
    same = mean_interval([3.0, 3.0, 3.0])
    assert (same.mean, same.lo, same.hi, same.n) == (3.0, 3.0, 3.0, 3)
    assert math.isnan(mean_interval([]).mean)


def test_repeats_are_averaged_per_episode_before_the_group_mean():
    """Hand-computed: episode e1 (repeats 0 and 1) counts once, with its spread."""
    rows = [
        ("L1", "s/e1/0", {"steps": 10.0, "tcr": 1.0}),
        ("L1", "s/e1/1", {"steps": 20.0, "tcr": 0.0}),
        ("L1", "s/e2/0", {"steps": 40.0, "tcr": 1.0}),
        ("L2", "s/e3/0", {"steps": 7.0, "tcr": 0.0}),
    ]
    episodes = episode_means(rows, ["steps", "tcr"])
    assert [(e.episode, e.repeats) for e in episodes] == [("s/e1", 2), ("s/e2", 1), ("s/e3", 1)]
    assert episodes[0].means == {"steps": 15.0, "tcr": 0.5}
    assert episodes[0].spreads["steps"] == pytest.approx(math.sqrt(50.0))
    table = group_intervals(episodes, ["steps", "tcr"])
    assert list(table) == ["L1", "L2", "all"]
    assert table["L1"]["steps"].mean == 27.5 and table["L1"]["steps"].n == 2
    assert table["L1"]["tcr"].mean == 75.0  # in percent
    assert table["all"]["steps"].mean == pytest.approx((15.0 + 40.0 + 7.0) / 3)
    assert table["L1"]["steps"].spread == pytest.approx(math.sqrt(50.0))


def test_the_paired_difference_of_identical_runs_is_exactly_zero():
    """B − A of the same rows is 0 with the interval [0, 0] in every group."""
    rows = [
        ("L1", f"s/e{i}/{r}", {"ts": 10.0 * i + r, "hs": 0.1 * i})
        for i in range(4)
        for r in range(2)
    ]
    episodes = episode_means(rows, ["ts", "hs"])
    for group in paired_differences(episodes, episodes, ["ts", "hs"]).values():
        for estimate in group.values():
            assert (estimate.mean, estimate.lo, estimate.hi, estimate.n) == (0.0, 0.0, 0.0, 4)


def test_paired_differences_pair_common_episodes_only():
    """Hand-computed: only episodes in both runs are paired, B minus A."""
    a = episode_means([("L1", "s/e1/0", {"ts": 1.0}), ("L1", "s/e2/0", {"ts": 2.0})], ["ts"])
    b = episode_means(
        [
            ("L1", "s/e1/0", {"ts": 4.0}),
            ("L1", "s/e1/1", {"ts": 6.0}),
            ("L1", "s/e9/0", {"ts": 9.0}),
        ],
        ["ts"],
    )
    estimate = paired_differences(a, b, ["ts"])["all"]["ts"]
    assert (estimate.mean, estimate.n) == (4.0, 1) and math.isnan(estimate.lo)


def test_the_episode_of_a_key_drops_the_repeat():
    """``suite/episode_id/repeat`` becomes ``suite/episode_id`` (ids may hold slashes)."""
    assert episode_of("smoke/smoke/0003/2") == "smoke/smoke/0003"


def test_a_ratio_column_is_the_ratio_of_sums_over_episodes_in_percent():
    """By hand: SER over episodes (sr, ended) = (1,1), (0,1), (1,1), (0,0) is 2/3, in percent.

    The episode without end adds nothing to either sum; the interval lies around the ratio.
    """
    rows = [
        ("short", f"s/e{i}/0", {"sr": sr, "ended": ended})
        for i, (sr, ended) in enumerate([(1.0, 1.0), (0.0, 1.0), (1.0, 1.0), (0.0, 0.0)])
    ]
    episodes = episode_means(rows, ["ser"])
    assert episodes[0].means == {"ser": 1.0, "sr": 1.0, "ended": 1.0}
    estimate = group_intervals(episodes, ["ser"])["all"]["ser"]
    assert estimate.mean == pytest.approx(200 / 3) and estimate.n == 4
    assert 0.0 <= estimate.lo <= estimate.mean <= estimate.hi <= 100.0


def test_a_ratio_whose_denominator_sums_to_zero_is_undefined():
    """No failed subtask in any episode: SRR is NaN with no interval, not 0 or 100."""
    estimate = ratio_interval([(0.0, 0.0), (0.0, 0.0), (0.0, 0.0)])
    assert math.isnan(estimate.mean) and math.isnan(estimate.lo) and estimate.n == 3


def test_a_ratio_resamples_episodes_whole():
    """Equal per-episode ratios (1/2, 2/4) give the point interval: each resample is 1/2."""
    estimate = ratio_interval([(1.0, 2.0), (2.0, 4.0), (3.0, 6.0)])
    assert (estimate.mean, estimate.lo, estimate.hi) == (0.5, 0.5, 0.5)


def test_the_paired_difference_of_a_ratio_is_the_difference_of_the_ratios():
    """By hand: A's SRR 1/4, B's 3/4 over the same two episodes: B − A = 0.5, in percent 50."""
    a = episode_means(
        [
            ("short", "s/e1/0", {"failed_in_success": 1.0, "failed_subtasks": 2.0}),
            ("short", "s/e2/0", {"failed_in_success": 0.0, "failed_subtasks": 2.0}),
        ],
        ["srr"],
    )
    b = episode_means(
        [
            ("short", "s/e1/0", {"failed_in_success": 2.0, "failed_subtasks": 2.0}),
            ("short", "s/e2/0", {"failed_in_success": 1.0, "failed_subtasks": 2.0}),
        ],
        ["srr"],
    )
    difference = paired_differences(a, b, ["srr"])["all"]["srr"]
    assert difference.mean == pytest.approx(50.0) and difference.n == 2
