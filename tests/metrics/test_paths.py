import math

import pytest

from sortie.metrics.paths import dtw, ends_near, human_similarity, ndtw, path_length, sdtw, spl

REFERENCE = [(0, 0), (1, 0), (2, 1), (3, 2)]
PATH = [(0, 0), (1, 0), (2, 0), (3, 0)]


def test_dtw_matches_the_published_reference_case():
    """docs/rescue.md, Metrics: this reference and path give DTW = 3.0 (0 + 0 + 1 + 2)."""
    assert dtw(REFERENCE, PATH) == pytest.approx(3.0)


def test_ndtw_matches_the_published_reference_case():
    """The same pair gives nDTW = exp(-0.25) with d_th = 3."""
    assert ndtw(REFERENCE, PATH, threshold=3.0) == pytest.approx(math.exp(-0.25))


def test_sdtw_is_zero_on_failure():
    """SDTW weights nDTW by success."""
    assert sdtw(False, REFERENCE, PATH) == 0.0
    assert sdtw(True, REFERENCE, PATH) == pytest.approx(math.exp(-0.25))


def test_r4r_success_is_the_path_end_within_3_m_of_the_reference_end():
    """r4r: PATH ends at (3, 0), 2 m from the reference's end (3, 2); 3.1 m away it fails."""
    assert ends_near(REFERENCE, PATH, threshold=3.0)
    assert not ends_near(REFERENCE, [*PATH, (3.0, -1.1)], threshold=3.0)


def test_spl_hand_computed():
    """SPL = L / max(P, L) on success: 10 m shortest, 12.5 m taken gives 0.8."""
    assert spl(True, 10.0, 12.5) == pytest.approx(0.8)
    assert spl(True, 10.0, 9.0) == 1.0
    assert spl(False, 10.0, 10.0) == 0.0


def test_human_similarity_hand_computed():
    """HS = max(0, 1 - DTW / max(n, m) / 50): 3.0 / 4 / 50 = 0.015, so HS = 0.985."""
    assert human_similarity(REFERENCE, PATH) == pytest.approx(0.985)


def test_path_length_of_a_3_4_5_triangle_leg():
    """A path (0,0,0) -> (3,4,0) -> (3,4,12) is 5 + 12 m long."""
    assert path_length([(0, 0, 0), (3, 4, 0), (3, 4, 12)]) == pytest.approx(17.0)


def test_empty_path_is_a_clear_error():
    """DTW of an empty path raises, saying what shape it expected."""
    with pytest.raises(ValueError, match=r"non-empty \(n, d\) array"):
        dtw([], PATH)
