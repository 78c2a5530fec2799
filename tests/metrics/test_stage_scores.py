import pytest

from sortie.metrics.stage_scores import StageDistances, code_scores, fork_scores, paper_scores


def test_golden_case_paper_variant_s1():
    """d_init 17.5, d_best 12.5, no pick-up: S1 = 25 * 5 / 10 = 12.5, S2 = 0 (paper)."""
    scores = paper_scores((StageDistances(17.5, 12.5, 14.0), None, None, None), False, False)
    assert scores == pytest.approx((12.5, 0.0, 0.0, 0.0))


def test_golden_case_code_variant_total_is_zero():
    """The same episode under the public tracker's rules scores TS = 0 (final 14 m > 7.5 m)."""
    assert sum(code_scores(14.0, False, None, False)) == 0.0


def test_paper_s2_partial_credit_inside_the_sighting_radius():
    """Best 4.5 m without a pick-up: S2 = 25 * (7.5 - 4.5) / (7.5 - 1.5) = 12.5."""
    s1, s2, _, _ = paper_scores(
        (StageDistances(20.0, 6.0, 6.0), StageDistances(6.0, 4.5, 5.0), None, None), False, False
    )
    assert s1 == 25.0 and s2 == pytest.approx(12.5)


def test_paper_full_success_is_100():
    """Picked up and dropped in the zone after getting close: TS = 100."""
    near = StageDistances(1.0, 1.0, 1.0)
    far = StageDistances(20, 7, 7)
    scores = paper_scores((far, near, far, near), True, True)
    assert sum(scores) == 100.0


def test_paper_return_stages_need_the_pick_up():
    """Without a pick-up S3 and S4 are 0 whatever the distances to the stretcher."""
    d = StageDistances(20, 3, 3)
    scores = paper_scores((d, d, StageDistances(20, 0.5, 0.5), d), False, True)
    assert scores[2:] == (0.0, 0.0)


def test_code_variant_partial_handoff():
    """Picked up, final 4.75 m from the stretcher: S3 = 25, S4 = 25 * 2.75 / 5.5 = 12.5."""
    assert code_scores(0.0, True, 4.75, False) == pytest.approx((25, 25, 25, 12.5))


def test_fork_s1_is_the_way_covered_towards_the_sighting_radius():
    """paper-fork: start 17.5 m, best 12.5 m: S1 = 25 * (1 - 5 / 10) = 12.5, S2 = 0."""
    assert fork_scores(StageDistances(17.5, 12.5, 14.0), None) == (12.5, 0.0, 0.0, 0.0)


def test_fork_s2_is_the_way_covered_from_the_radius_to_the_casualty():
    """paper-fork: best 7.5 m gives S2 0, 3.75 m 12.5, 0 m 25 (S1 25 each time)."""
    for best, s2 in ((7.5, 0.0), (3.75, 12.5), (0.0, 25.0)):
        assert fork_scores(StageDistances(17.5, best, 9.0), None) == (25.0, s2, 0.0, 0.0)


def test_fork_start_inside_the_radius_gives_full_s1():
    """paper-fork: start and best 5 m: S1 = 25 (clipped), S2 = 25 * (1 - 5 / 7.5) = 25 / 3."""
    near = StageDistances(5.0, 5.0, 5.0)
    assert fork_scores(near, None) == pytest.approx((25.0, 25.0 / 3.0, 0.0, 0.0))


def test_fork_does_not_give_the_pick_up_or_hand_off_full_marks():
    """Picked up at 1.5 m, best 0.75 m from the stretcher: S2 = 20 and S4 = 22.5, not 25."""
    casualty, stretcher = StageDistances(20.0, 1.5, 1.5), StageDistances(12.0, 0.75, 0.75)
    assert fork_scores(casualty, stretcher) == pytest.approx((25.0, 20.0, 25.0, 22.5))


def test_fork_s3_is_the_way_covered_towards_the_stretchers_radius():
    """Picked up, stretcher from 17.5 m to best 12.5 m: S3 = 12.5, S4 = 0."""
    casualty, stretcher = StageDistances(3.0, 0.0, 0.0), StageDistances(17.5, 12.5, 13.0)
    assert fork_scores(casualty, stretcher) == (25.0, 25.0, 12.5, 0.0)
