import math

import pytest

from sortie.missions.aerial.patrol import patrol_iou


def test_patrol_iou_of_a_climb_against_a_line_is_the_disc_over_the_corridor():
    """A 40 m route and a climb at its start: π·20² / (40·40 + π·20²) = 0.4399."""
    expected = math.pi * 400 / (1600 + math.pi * 400)
    route = [[0.0, 0.0, 20.0], [40.0, 0.0, 20.0]]
    assert patrol_iou([[0.0, 0.0, 25.0], [0.0, 0.0, 30.0]], route) == pytest.approx(
        expected, rel=0.01
    )
    assert patrol_iou(route, route) == pytest.approx(1.0)
    assert patrol_iou([[0.0, 100.0, 0.0], [40.0, 100.0, 0.0]], route) == 0.0
