import pytest

from sortie.backends.frames import (
    ned_point,
    ned_pose,
    to_ned,
    to_unreal,
    unreal_point,
    unreal_pose,
    unreal_turn,
)
from sortie.core.pose import Pose


def test_unreal_centimetres_become_metres_with_y_mirrored():
    """Unreal (100, 250, 30) cm is sortie (1, -2.5, 0.3) m."""
    assert unreal_point(100.0, 250.0, 30.0) == pytest.approx((1.0, -2.5, 0.3))


def test_unreal_clockwise_yaw_becomes_counter_clockwise():
    """An Unreal yaw of 90 (facing +y, to the right) is sortie yaw -90."""
    assert unreal_pose(0.0, 0.0, 0.0, 90.0).yaw == pytest.approx(-90.0)


def test_unreal_facing_right_points_along_sorties_minus_y():
    """The heading an Unreal yaw of 90 gives points where Unreal's +y point lies in sortie."""
    heading = unreal_pose(0.0, 0.0, 0.0, 90.0).heading()
    assert heading == pytest.approx(unreal_point(0.0, 100.0, 0.0)[:2], abs=1e-9)


def test_to_unreal_inverts_unreal_pose():
    """A pose sent to Unreal and read back is the same pose."""
    pose = Pose(3.5, -1.25, 0.9, 135.0)
    back = unreal_pose(*to_unreal(pose))
    assert back.as_list() == pytest.approx(pose.as_list())


def test_a_sortie_left_turn_is_an_unreal_anticlockwise_turn():
    """A +30 degree (left) turn is sent to Unreal as -30."""
    assert unreal_turn(30.0) == -30.0


def test_ned_down_negative_is_height():
    """AirSim NED z -47.5 (above ground) is sortie z 47.5; east 12 is sortie y -12."""
    assert ned_point(128.5, 12.0, -47.5) == pytest.approx((128.5, -12.0, 47.5))


def test_ned_yaw_towards_east_faces_sorties_minus_y():
    """A NED yaw of 90 (east) heads along sortie -y, where NED's east point lies."""
    heading = ned_pose(0.0, 0.0, 0.0, 90.0).heading()
    assert heading == pytest.approx(ned_point(0.0, 1.0, 0.0)[:2], abs=1e-9)


def test_to_ned_inverts_ned_pose():
    """A pose sent to AirSim and read back is the same pose."""
    pose = Pose(-20.0, 7.0, 35.0, -170.0)
    assert ned_pose(*to_ned(pose)).as_list() == pytest.approx(pose.as_list())
