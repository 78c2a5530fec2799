import math

import numpy as np
import pytest

from sortie.core.errors import InvalidPoseError
from sortie.core.pose import Pose
from sortie.sim.bodies import Walker, WalkResult
from sortie.sim.mesh import Mesh, box, cylinder, pose_matrix, slab, stairs, wedge
from sortie.sim.raycast import RayCaster
from sortie.sim.scene import Dynamics, Scene, SceneObject

DT = 0.2
FULL_SPEED = 1.5


def _scene(*objects: SceneObject) -> Scene:
    floor = SceneObject("floor_0", "floor", (slab(-20, -20, 20, 20, -0.1, 0.0),))
    return Scene([floor, *objects], (-20, -20, 20, 20))


def _solid(name: str, semantic: str, *parts: Mesh) -> SceneObject:
    return SceneObject(name, semantic, parts)


def _walker(scene: Scene, start: Pose) -> Walker:
    walker = Walker(RayCaster(scene))
    walker.place(start)
    return walker


def _walk(
    walker: Walker, steps: int, speed: float = FULL_SPEED, turn: float = 0.0, dt: float = DT
) -> list[WalkResult]:
    return [walker.step(turn, speed, dt) for _ in range(steps)]


def _wall_at_x(x_face: float, thickness: float = 0.2, name: str = "wall_0") -> SceneObject:
    """A wall across the x axis whose near face is at ``x_face``."""
    return _solid(name, "wall", box((thickness, 30, 3), (x_face + thickness / 2, 0, 1.5)))


def test_wall_stops_the_walker_one_radius_from_its_face_and_is_reported():
    """Walking into a wall stops the body's centre within 1 cm beyond one radius of the face."""
    walker = _walker(_scene(_wall_at_x(5.0)), Pose(0, 0, 0, 0))
    results = _walk(walker, 25)
    gap = 5.0 - walker.pose.x
    assert 0.3 <= gap <= 0.31
    assert results[-1].contacts == ("wall_0",) and results[-1].blocked


def test_walking_at_45_degrees_into_a_wall_slides_along_it():
    """A walker hitting a wall at 45 degrees keeps moving along the wall, one radius away."""
    walker = _walker(_scene(_wall_at_x(2.0)), Pose(0, 0, 0, 45))
    _walk(walker, 12)
    y_at_wall = walker.pose.y
    results = _walk(walker, 5)
    assert 0.3 <= 2.0 - walker.pose.x <= 0.31
    assert walker.pose.y - y_at_wall == pytest.approx(5 * FULL_SPEED * DT * math.sqrt(0.5), 0.01)
    assert all(r.contacts == ("wall_0",) for r in results)


def _doorway_scene() -> Scene:
    walls = _solid(
        "wall_0",
        "wall",
        slab(5, -15, 5.2, -0.5, 0, 3),
        slab(5, 0.5, 5.2, 15, 0, 3),
        slab(5, -0.5, 5.2, 0.5, 2.1, 3),
    )
    panel = box((0.08, 1.0, 2.1), (5.1, 0, 1.05))
    door = SceneObject(
        "door_0",
        "door",
        (panel,),
        dynamics=Dynamics.OPENABLE,
        open_transform=pose_matrix((0, 1.02, 0)),
    )
    return _scene(walls, door)


def test_a_closed_door_blocks_and_an_opened_one_lets_the_walker_through():
    """The walker stops at a closed door, and walks through the doorway once it is opened."""
    scene = _doorway_scene()
    walker = _walker(scene, Pose(3, 0, 0, 0))
    results = _walk(walker, 10)
    assert 0.3 <= 5.06 - walker.pose.x <= 0.31 and results[-1].contacts == ("door_0",)
    scene.set_open("door_0", True)
    results = _walk(walker, 10)
    assert walker.pose.x > 6.0 and not results[-1].blocked


def _stairs_scene() -> Scene:
    flight = _solid("stairs_0", "stairs", stairs(1.2, 0.3, 0.17, 10, (0, 0, 0)))
    landing = _solid("floor_1", "floor", slab(3.0, -0.6, 6.0, 0.6, 1.6, 1.7))
    return _scene(flight, landing)


def test_climbs_a_flight_of_stairs_to_the_top_floor_and_walks_back_down():
    """Stairs of 0.17 m rise and 0.3 m tread lead up to the landing at 1.7 m and back down."""
    walker = _walker(_stairs_scene(), Pose(-1, 0, 0, 0))
    heights = [r.pose.z for r in _walk(walker, 18)]
    assert walker.pose.x > 3.5 and walker.pose.z == pytest.approx(1.7, abs=1e-5)
    assert heights == sorted(heights)
    walker.step(180, 0.0, DT)
    _walk(walker, 18)
    assert walker.pose.x < -0.5 and walker.pose.z == pytest.approx(0.0, abs=1e-5)


def test_walks_up_a_ramp_onto_a_platform_and_back_down():
    """A 20-degree ramp leads up to its platform's height and back down to the floor."""
    rise = 4 * math.tan(math.radians(20))
    ramp = _solid("ramp_0", "ramp", wedge((4, 2, rise), (4, 0, 0)))
    platform = _solid("platform_0", "platform", slab(6, -1, 9, 1, 0, rise))
    walker = _walker(_scene(ramp, platform), Pose(0, 0, 0, 0))
    _walk(walker, 23)
    assert walker.pose.x > 6.5 and walker.pose.z == pytest.approx(rise, abs=1e-5)
    walker.step(180, 0.0, DT)
    _walk(walker, 23)
    assert walker.pose.x < 1.5 and walker.pose.z == 0.0


def test_refuses_a_ledge_higher_than_the_step_and_reports_it():
    """A 0.5 m ledge stops the walker at its foot, feet still on the floor."""
    walker = _walker(
        _scene(_solid("platform_0", "platform", slab(3, -2, 5, 2, 0, 0.5))), Pose(0, 0, 0, 0)
    )
    results = _walk(walker, 15)
    assert walker.pose.z == 0.0 and walker.pose.x < 3.0 - 0.29
    assert results[-1].contacts == ("platform_0",)


def test_refuses_a_drop_higher_than_the_limit():
    """At the edge of a 2 m drop the walker stops instead of stepping off."""
    scene = Scene(
        [
            _solid("floor_0", "floor", slab(-5, -5, 3, 5, 1.9, 2.0)),
            _solid("floor_1", "floor", slab(-5, -5, 20, 5, -0.1, 0.0)),
        ],
        (-20, -20, 20, 20),
    )
    walker = _walker(scene, Pose(0, 0, 2, 0))
    results = _walk(walker, 20)
    assert walker.pose.z == 2.0 and 2.5 < walker.pose.x < 3.0 and results[-1].blocked


@pytest.mark.parametrize("offset", [0.0, 0.07, 0.15, 0.22, 0.3, 0.36])
def test_never_overlaps_a_thin_pole(offset: float):
    """Walking at a 0.1 m-radius pole, the body never comes closer than touching it."""
    pole = _solid("pillar_0", "pillar", cylinder(0.1, 2.5, (3, offset, 0)))
    walker = _walker(_scene(pole), Pose(0, 0, 0, 0))
    results = _walk(walker, 30)
    closest = min(math.hypot(r.pose.x - 3, r.pose.y - offset) for r in results)
    assert closest > 0.3 + 0.095 - 0.01  # the 10-sided pole's flats are 0.095 m from its axis
    assert any("pillar_0" in r.contacts for r in results)


@pytest.mark.parametrize("dt", [DT, 2.0])
def test_cannot_tunnel_through_a_thin_wall_at_full_speed(dt: float):
    """A 0.1 m wall stops a full-speed walker, however long the control period."""
    walker = _walker(_scene(_wall_at_x(3.0, thickness=0.1)), Pose(0, 0, 0, 0))
    results = _walk(walker, 20, dt=dt)
    assert walker.pose.x < 3.0 - 0.29 and results[-1].contacts == ("wall_0",)


def test_refuses_to_walk_under_a_table_top():
    """A table top at 0.75 m leaves too little headroom: the walker stops before it."""
    table = _solid("table_0", "table", slab(3, -1, 4, 1, 0.7, 0.75))
    walker = _walker(_scene(table), Pose(0, 0, 0, 0))
    results = _walk(walker, 20)
    assert walker.pose.x < 3.0 - 0.29 and results[-1].contacts == ("table_0",)


def test_walks_backwards_with_a_negative_speed():
    """A negative speed moves the body against its heading, which stays unchanged."""
    walker = _walker(_scene(), Pose(0, 0, 0, 90))
    result = walker.step(0.0, -1.0, DT)
    assert (result.pose.x, result.pose.y, result.pose.yaw) == pytest.approx((0, -0.2, 90))
    assert result.distance == pytest.approx(0.2)


def test_place_inside_a_box_raises_naming_the_pose():
    """Placing the walker inside a crate is refused with a message that names the pose."""
    crate = _solid("crate_0", "crate", box((1.0, 1.0, 1.0), (2, 2, 0.5)))
    walker = Walker(RayCaster(_scene(crate)))
    with pytest.raises(InvalidPoseError, match=r"x=2\.0, y=2\.0.*crate_0"):
        walker.place(Pose(2.0, 2.0, 0.0, 0.0))


def test_place_against_a_wall_raises_but_touching_it_is_allowed():
    """A body reaching into a wall is refused; one exactly a radius away is placed."""
    walker = Walker(RayCaster(_scene(_wall_at_x(1.0))))
    with pytest.raises(InvalidPoseError, match="wall_0"):
        walker.place(Pose(0.8, 0, 0, 0))
    assert walker.place(Pose(0.7, 0, 0, 0)).x == 0.7


def test_place_outside_the_bounds_raises_naming_the_pose():
    """Placing the walker outside the scene's bounds is refused with the pose in the message."""
    walker = Walker(RayCaster(_scene()))
    with pytest.raises(InvalidPoseError, match=r"x=25\.0.*bounds"):
        walker.place(Pose(25.0, 0.0, 0.0, 0.0))


def test_place_snaps_the_feet_onto_a_step_within_reach():
    """A pose a little below a platform's top is put on the platform."""
    platform = _solid("platform_0", "platform", slab(-1, -1, 1, 1, 0, 0.2))
    walker = Walker(RayCaster(_scene(platform)))
    assert walker.place(Pose(0, 0, 0, 0)).z == pytest.approx(0.2, abs=1e-6)


def test_same_steps_give_identical_poses():
    """Two walkers fed the same steps in a cluttered scene end in bit-identical poses."""
    rng = np.random.default_rng(7)
    clutter = [
        _solid(f"crate_{i}", "crate", box((0.6, 0.6, 1.0), (x, y, 0.5)))
        for i, (x, y) in enumerate(rng.uniform(-4, 4, (12, 2)))
        if math.hypot(x, y) > 1
    ]
    steps = [(rng.uniform(-30, 30), rng.uniform(-1.5, 1.5)) for _ in range(150)]
    runs = []
    for _ in range(2):
        walker = _walker(_scene(*clutter), Pose(0, 0, 0, 0))
        runs.append([walker.step(turn, speed, DT).pose for turn, speed in steps])
    assert runs[0] == runs[1]
