import pytest

from sortie.metrics.stage_scores import StageDistances, code_scores, paper_scores


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
