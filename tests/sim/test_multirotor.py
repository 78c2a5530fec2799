import pytest

from sortie.core.actions import FlightPrimitive
from sortie.core.errors import InvalidPoseError
from sortie.core.pose import Pose
from sortie.sim.bodies import Multirotor
from sortie.sim.mesh import box, cylinder, slab
from sortie.sim.raycast import RayCaster
from sortie.sim.scene import Scene, SceneObject

RADIUS = 0.4


def _scene(*objects: SceneObject) -> Scene:
    ground = SceneObject("ground_0", "ground", (slab(-50, -50, 50, 50, -0.1, 0.0),))
    return Scene([ground, *objects], (-50, -50, 50, 50))


def _wall_at_x(x_face: float) -> SceneObject:
    return SceneObject("wall_0", "wall", (box((0.2, 40, 20), (x_face + 0.1, 0, 10)),))


def _drone(scene: Scene, start: Pose) -> Multirotor:
    drone = Multirotor(RayCaster(scene))
    drone.place(start)
    return drone


def test_stops_one_radius_before_a_wall_and_reports_it():
    """Flying forward into a wall stops the centre a radius (within 1 cm) from the face."""
    drone = _drone(_scene(_wall_at_x(5.0)), Pose(0, 0, 3, 0))
    result = drone.fly(FlightPrimitive.FORWARD, 10.0)
    assert RADIUS <= 5.0 - result.pose.x <= RADIUS + 0.01
    assert result.contact == "wall_0" and result.distance == pytest.approx(result.pose.x)


def test_a_free_move_goes_the_full_distance_without_contact():
    """A move through empty air covers its whole magnitude and reports no contact."""
    drone = _drone(_scene(_wall_at_x(5.0)), Pose(0, 0, 3, 0))
    result = drone.fly(FlightPrimitive.FORWARD, 2.0)
    assert result.pose.position() == pytest.approx((2.0, 0.0, 3.0))
    assert result.contact is None and result.distance == pytest.approx(2.0)


def test_a_thin_pole_beside_the_axis_stops_the_sphere():
    """A 0.1 m-radius pole 0.3 m off the flight axis still stops the 0.4 m sphere."""
    pole = SceneObject("pillar_0", "pillar", (cylinder(0.1, 10.0, (4, 0.3, 0)),))
    result = _drone(_scene(pole), Pose(0, 0, 3, 0)).fly(FlightPrimitive.FORWARD, 8.0)
    assert result.contact == "pillar_0" and result.pose.x < 4.0


def test_turns_change_only_the_yaw():
    """turn_left adds degrees and turn_right subtracts them, wrapped, leaving the position."""
    drone = _drone(_scene(), Pose(1, 2, 3, 170))
    left = drone.fly(FlightPrimitive.TURN_LEFT, 30.0)
    assert left.pose == Pose(1, 2, 3, -160.0) and left.distance == 0.0
    assert drone.fly(FlightPrimitive.TURN_RIGHT, 45.0).pose.yaw == pytest.approx(155.0)


def test_up_and_down_move_vertically():
    """Up and down change only the height by their magnitude."""
    drone = _drone(_scene(), Pose(0, 0, 3, 30))
    assert drone.fly(FlightPrimitive.UP, 2.0).pose.position() == pytest.approx((0, 0, 5))
    assert drone.fly(FlightPrimitive.DOWN, 1.5).pose.position() == pytest.approx((0, 0, 3.5))


def test_strafes_along_the_body_axes():
    """Left is 90 degrees counter-clockwise from the heading, and right the opposite."""
    drone = _drone(_scene(), Pose(0, 0, 3, 90))
    assert drone.fly(FlightPrimitive.LEFT, 1.0).pose.position() == pytest.approx((-1, 0, 3))
    assert drone.fly(FlightPrimitive.RIGHT, 2.0).pose.position() == pytest.approx((1, 0, 3))
    assert drone.fly(FlightPrimitive.BACKWARD, 1.0).pose.position() == pytest.approx((1, -1, 3))


def test_cannot_fly_below_the_ground():
    """Flying down into the ground stops a radius above it, with the ground as the contact."""
    drone = _drone(_scene(), Pose(0, 0, 3, 0))
    result = drone.fly(FlightPrimitive.DOWN, 10.0)
    assert RADIUS <= result.pose.z <= RADIUS + 0.01 and result.contact == "ground_0"
    assert drone.fly(FlightPrimitive.DOWN, 1.0).distance == 0.0


def test_place_too_close_to_a_wall_raises():
    """A sphere placed closer than its radius to a wall is refused, naming the wall."""
    drone = Multirotor(RayCaster(_scene(_wall_at_x(5.0))))
    with pytest.raises(InvalidPoseError, match="wall_0"):
        drone.place(Pose(4.8, 0.0, 3.0, 0.0))


def test_place_outside_the_bounds_or_underground_raises():
    """A pose beyond the bounds or below the ground is refused."""
    drone = Multirotor(RayCaster(_scene()))
    with pytest.raises(InvalidPoseError, match="bounds"):
        drone.place(Pose(60.0, 0.0, 3.0, 0.0))
    with pytest.raises(InvalidPoseError, match="x=0.0, y=0.0, z=-2.0"):
        drone.place(Pose(0.0, 0.0, -2.0, 0.0))
