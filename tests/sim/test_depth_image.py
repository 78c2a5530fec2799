"""``depth_image``: the view's own range, nearest white, far and sky black."""

import numpy as np

from sortie.sim.visualize import depth_image, view_range


def test_an_apartment_view_fills_the_grey_scale():
    """Depths of 1 to 4 m: 1 m is white, 4 m (the range) black, 2 m a third of the way down.

    Inverse depth: (1/2 − 1/4) / (1/1 − 1/4) = 1/3 of 255 → 85.
    """
    depth = np.array([[1.0, 2.0], [4.0, np.inf]], dtype=np.float32)
    grey = depth_image(depth)[..., 0]
    assert view_range(depth) == 4.0
    assert grey.tolist() == [[255, 85], [0, 0]]


def test_the_range_is_the_98th_percentile_rounded_up_and_never_below_two_metres():
    """A hundred depths 0.1 … 10 m: 98th percentile 9.8 → 10; an all-near view gets 2 m."""
    spread = np.linspace(0.1, 10.0, 100, dtype=np.float32).reshape(10, 10)
    assert view_range(spread) == 10.0
    assert view_range(np.full((4, 4), 0.5, np.float32)) == 2.0
    assert view_range(np.full((4, 4), np.inf, np.float32)) == 30.0
